"""The DSL per-step bookkeeping kernels (Triton) on the GPU, each against a
torch reference of its semantics: the exit state's ``begin`` (one launch),
the drafted-count record (one launch) and its snapshot, and the stand-in
tokens that ``combine_sampled_and_draft_tokens`` writes for exited drafts
and ``gather_draft_sampled`` reads back as -1.

Each comparison runs the real constructors and functions through one helper
per kernel: on CUDA the Triton kernel against the torch path (tests marked
``cuda``), and on CPU (scripts/fastcheck.sh) the same helper's torch path
against a plain-Python statement of the semantics, or, for the Triton-only
input kernels, the suite's calls bound to the real signatures. So an API
change that breaks the GPU test fails on CPU too."""

from __future__ import annotations

import inspect

import pytest
import torch

MAX_ROWS, SLOTS = 600, 700
BEGIN_CASES = [(1, 1), (3, 8), (37, 37), (300, 512)]


@pytest.fixture
def triton_is_on():
    """The CUDA tests compare the Triton kernels with the torch path: with
    Triton disabled both sides would run the torch path."""
    from vllm.triton_utils import HAS_TRITON

    assert HAS_TRITON, "vLLM disabled Triton on this CUDA host; see its log"


def _begin_inputs(num_reqs, per_request, row_indexed):
    """(thresholds, caps, index) as the loops pass them to ``begin``."""
    g = torch.Generator().manual_seed(num_reqs * 7 + int(per_request))
    thresholds = torch.rand(SLOTS, generator=g)
    caps = torch.randint(0, 6, (SLOTS,), generator=g, dtype=torch.int32)
    index = torch.randperm(SLOTS, generator=g)[:num_reqs]
    index[::5] = -1  # padded rows inside the batch (MRV2's idx_mapping -1)
    if row_indexed:
        # V1: values indexed by row, shorter than the batch.
        thresholds, caps, index = thresholds[: num_reqs // 2], caps[: num_reqs // 2], None
    if not per_request:
        thresholds = caps = index = None
    return thresholds, caps, index


def _begin_state(device, num_reqs, num_rows, per_request, row_indexed):
    """``DraftConfidenceExit.begin`` on ``device`` from stale state; the
    per-row buffers afterwards (active, drafted, caps, thresholds), on CPU."""
    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    ex = DraftConfidenceExit(0.3, MAX_ROWS, torch.device(device))
    ex.active.fill_(True)
    ex.num_drafted.fill_(5)
    ex.max_draft_tokens.fill_(9)
    ex.thresholds.fill_(0.9)
    thresholds, caps, index = _begin_inputs(num_reqs, per_request, row_indexed)
    ex.begin(
        num_reqs,
        4,
        thresholds.to(device) if thresholds is not None else None,
        caps.to(device) if caps is not None else None,
        index=index.to(device) if index is not None else None,
        num_rows=num_rows,
    )
    return [
        t.cpu() for t in (ex.active, ex.num_drafted, ex.max_draft_tokens, ex.thresholds)
    ]


def _begin_reference(num_reqs, num_rows, per_request, row_indexed):
    """``begin``'s documented semantics in plain Python."""
    thresholds, caps, index = _begin_inputs(num_reqs, per_request, row_indexed)
    active, drafted = [True] * MAX_ROWS, [5] * MAX_ROWS
    row_caps, row_thr = [9] * MAX_ROWS, [0.9] * MAX_ROWS
    for r in range(num_rows):
        if index is not None:
            src = int(index[r]) if r < num_reqs else -1
            pad_thr = pad_cap = src < 0
        else:
            src = r
            pad_thr = r >= num_reqs or thresholds is None or r >= len(thresholds)
            pad_cap = r >= num_reqs or caps is None or r >= len(caps)
        if thresholds is None or pad_thr:
            row_thr[r] = 0.3
        else:
            row_thr[r] = float(thresholds[src])
        if caps is None:
            row_caps[r] = 4 if r < num_reqs else 0
        else:
            # A per-request cap is clamped to the loop's steps.
            row_caps[r] = 0 if pad_cap else min(max(int(caps[src]), 0), 4)
        active[r], drafted[r] = row_caps[r] > 0, 0
    return [
        torch.tensor(active),
        torch.tensor(drafted, dtype=torch.int32),
        torch.tensor(row_caps, dtype=torch.int32),
        torch.tensor(row_thr, dtype=torch.float32),
    ]


def _assert_same(a, b, names):
    for x, y, name in zip(a, b, names, strict=True):
        assert torch.equal(x, y), name


BEGIN_NAMES = ["active", "drafted", "caps", "thresholds"]


@pytest.mark.parametrize("num_reqs,num_rows", BEGIN_CASES)
@pytest.mark.parametrize("per_request", [False, True])
@pytest.mark.parametrize("row_indexed", [False, True])
def test_begin_torch_path_matches_the_semantics(num_reqs, num_rows, per_request,
                                                row_indexed):
    """CPU: the torch path of ``begin`` (what the kernel is compared with)."""
    args = (num_reqs, num_rows, per_request, row_indexed)
    _assert_same(_begin_state("cpu", *args), _begin_reference(*args), BEGIN_NAMES)


@pytest.mark.cuda
@pytest.mark.parametrize("num_reqs,num_rows", BEGIN_CASES)
@pytest.mark.parametrize("per_request", [False, True])
@pytest.mark.parametrize("row_indexed", [False, True])
def test_begin_kernel_matches_the_torch_path(triton_is_on, num_reqs, num_rows,
                                             per_request, row_indexed):
    args = (num_reqs, num_rows, per_request, row_indexed)
    _assert_same(_begin_state("cuda", *args), _begin_state("cpu", *args), BEGIN_NAMES)


def _counts_now(counts, idx, take_forwards=True):
    """The verified requests' drafted counts (then, with ``take_forwards``,
    the forwards since the last take), on CPU, as the output hands them
    over: a ``snapshot`` copied to the host and ``read`` there."""
    snapshot, rows = counts.snapshot().cpu().numpy(), idx.cpu().numpy()
    if not take_forwards:
        return torch.from_numpy(snapshot[rows])
    drafted, forwards = counts.read(snapshot, rows)
    return torch.tensor(drafted + [forwards], dtype=torch.int32)


def _drafted_counts_run(device, num_reqs):
    """Record and hand over with ``DraftedTokenCounts`` on ``device``: every
    handed-over tensor and the final counts, on CPU."""
    from vllm.v1.worker.gpu.spec_decode.drafted_token_counts import DraftedTokenCounts

    slots = 2048
    g = torch.Generator().manual_seed(num_reqs)  # the same values per device
    counts = DraftedTokenCounts(slots, device)
    out = []
    for k in (3, 5):
        idx = torch.randperm(slots, generator=torch.Generator().manual_seed(k))
        idx = idx[:num_reqs].to(device)
        drafted = torch.randint(0, 7, (num_reqs,), generator=g).int().to(device)
        counts.record(idx, drafted, k, num_forwards=torch.tensor(k + 1, device=device))
        out.append(_counts_now(counts, idx, take_forwards=False))
    counts.record(idx, drafted, 2)
    out.append(_counts_now(counts, idx))  # forwards: 4 + 6
    out.append(_counts_now(counts, idx))  # taken: 0
    out.append(counts.num_drafted.cpu())
    return out


def _drafted_counts_reference(num_reqs):
    slots = 2048
    g = torch.Generator().manual_seed(num_reqs)
    table = [0] * slots
    out = []
    for k in (3, 5):
        idx = torch.randperm(slots, generator=torch.Generator().manual_seed(k))
        idx = idx[:num_reqs].tolist()
        drafted = torch.randint(0, 7, (num_reqs,), generator=g).int().tolist()
        for i, d in zip(idx, drafted):
            table[i] = min(d, k)
        out.append(torch.tensor([table[i] for i in idx], dtype=torch.int32))
    for i, d in zip(idx, drafted):
        table[i] = min(d, 2)
    gathered = [table[i] for i in idx]
    out.append(torch.tensor(gathered + [4 + 6], dtype=torch.int32))
    out.append(torch.tensor(gathered + [0], dtype=torch.int32))
    out.append(torch.tensor(table, dtype=torch.int32))
    return out


@pytest.mark.parametrize("num_reqs", [1, 5, 1500])
def test_drafted_count_torch_path_matches_the_semantics(num_reqs):
    out = _drafted_counts_run("cpu", num_reqs)
    ref = _drafted_counts_reference(num_reqs)
    _assert_same(out, ref, ["k3", "k5", "gather+forwards", "taken", "table"])


@pytest.mark.cuda
@pytest.mark.parametrize("num_reqs", [1, 5, 1500])
def test_drafted_count_kernels_match_the_torch_path(triton_is_on, num_reqs):
    gpu = _drafted_counts_run("cuda", num_reqs)
    _assert_same(gpu, _drafted_counts_run("cpu", num_reqs),
                 ["k3", "k5", "gather+forwards", "taken", "table"])
    assert int(gpu[-3][-1]) == 10 and int(gpu[-2][-1]) == 0


def _reference_combine(input_ids, idx_mapping, last_sampled, qsl, seq_lens,
                       prefill_len, draft_tokens, cu_num_logits):
    """The decode semantics with stand-ins, in torch: the last sampled token,
    then the drafts, a -1 draft replaced by the last sampled token; the mark
    set exactly at those stand-ins among each request's logits rows."""
    input_ids = input_ids.clone()
    marks = {}
    for i, slot in enumerate(idx_mapping.tolist()):
        lo, hi = int(cu_num_logits[i]), int(cu_num_logits[i + 1])
        end = int(qsl[i + 1])
        start = end - (hi - lo)
        decoding = int(seq_lens[i]) > int(prefill_len[slot])
        for j, pos in enumerate(range(start, end)):
            marks[pos] = False
            if not decoding:
                continue
            if j == 0:
                input_ids[pos] = last_sampled[slot, 0]
                continue
            d = int(draft_tokens[slot, j - 1])
            marks[pos] = d < 0
            input_ids[pos] = int(last_sampled[slot, 0]) if d < 0 else d
    return input_ids, marks


def _stand_in_inputs(dev):
    """The batch of the stand-in test, on ``dev``: (the positional arguments
    of ``combine_sampled_and_draft_tokens`` after ``input_ids``, the logits
    row counts). Batch rows: slot 2 verifies 3 drafts (the last one
    exited), slot 0 verifies 3 with the last two exited, slot 1 is a
    prefill chunk (one logits row), slot 3 verifies 3 drafts, none exited."""
    idx_mapping = torch.tensor([2, 0, 1, 3], dtype=torch.int32, device=dev)
    num_logits = [4, 4, 1, 4]
    qsl = torch.tensor([0, 4, 8, 14, 18], dtype=torch.int32, device=dev)
    cu = torch.tensor([0, 4, 8, 9, 13], dtype=torch.int32, device=dev)
    seq_lens = torch.tensor([20, 30, 6, 40], dtype=torch.int32, device=dev)
    prefill_len = torch.tensor([8, 30, 8, 8], dtype=torch.int32, device=dev)
    last_sampled = torch.tensor([[70], [80], [90], [60]], dtype=torch.int64, device=dev)
    draft_tokens = torch.tensor(
        [[71, -1, -1], [81, 82, 83], [91, 92, -1], [61, 62, 63]], dtype=torch.int64,
        device=dev)
    args = (idx_mapping, last_sampled, qsl, seq_lens, prefill_len, draft_tokens, cu,
            sum(num_logits))
    return args, num_logits


def test_stand_in_calls_match_the_signatures():
    """CPU: the stand-in test's calls bind to the real functions (both are
    Triton-only, so their results are checked on CUDA)."""
    from vllm.v1.worker.gpu.input_batch import combine_sampled_and_draft_tokens
    from vllm.v1.worker.gpu.spec_decode.rejection_sampler import gather_draft_sampled

    args, num_logits = _stand_in_inputs("cpu")
    input_ids = torch.arange(100, 120, dtype=torch.int32)
    stand_ins = torch.ones(20, dtype=torch.bool)
    inspect.signature(combine_sampled_and_draft_tokens).bind(
        input_ids, *args, stand_ins=stand_ins)
    inspect.signature(combine_sampled_and_draft_tokens).bind(input_ids, *args)
    positions = torch.arange(20, dtype=torch.int64)
    logits_indices = torch.arange(sum(num_logits))
    inspect.signature(gather_draft_sampled).bind(
        input_ids, positions, logits_indices, logits_indices, logits_indices,
        args[4], stand_ins=stand_ins)
    # The reference itself: three stand-ins, prefill rows untouched.
    ref_ids, marks = _reference_combine(input_ids, args[0], args[1], args[2], args[3],
                                        args[4], args[5], args[6])
    assert sum(marks.values()) == 3 and (ref_ids >= 0).all()


@pytest.mark.cuda
def test_stand_ins_are_written_and_read_back_as_minus_one(triton_is_on):
    from vllm.v1.worker.gpu.input_batch import combine_sampled_and_draft_tokens
    from vllm.v1.worker.gpu.spec_decode.rejection_sampler import gather_draft_sampled

    dev = "cuda"
    args, num_logits = _stand_in_inputs(dev)
    idx_mapping, last_sampled, qsl, seq_lens, prefill_len, draft_tokens, cu, _ = args
    query_lens = [4, 4, 6, 4]
    input_ids = torch.arange(100, 120, dtype=torch.int32, device=dev)
    stand_ins = torch.ones(20, dtype=torch.bool, device=dev)  # stale marks
    ref_ids, marks = _reference_combine(input_ids.cpu(), idx_mapping.cpu(),
                                        last_sampled.cpu(), qsl.cpu(), seq_lens.cpu(),
                                        prefill_len.cpu(), draft_tokens.cpu(), cu.cpu())
    logits_indices = combine_sampled_and_draft_tokens(input_ids, *args, stand_ins=stand_ins)
    assert sum(query_lens) == 18
    assert input_ids.cpu().tolist() == ref_ids.tolist()
    assert (input_ids >= 0).all()
    rows = logits_indices.cpu().tolist()
    assert [bool(stand_ins[r]) for r in rows] == [marks[r] for r in rows]
    assert sum(marks.values()) == 3

    # Without stand-ins the kernel writes the drafts as they are.
    plain = torch.arange(100, 120, dtype=torch.int32, device=dev)
    combine_sampled_and_draft_tokens(plain, *args)
    assert (plain < 0).sum() == 3

    positions = torch.arange(20, dtype=torch.int64, device=dev) + 10
    expanded_idx = torch.repeat_interleave(
        idx_mapping.long(), torch.tensor(num_logits, device=dev))
    local_pos = torch.cat([torch.arange(n) for n in num_logits]).int().to(dev)
    draft_sampled, _ = gather_draft_sampled(
        input_ids, positions, logits_indices, expanded_idx, local_pos,
        prefill_len, stand_ins=stand_ins)
    expected, _ = gather_draft_sampled(
        plain, positions, logits_indices, expanded_idx, local_pos, prefill_len)
    # The drafts as they were before the stand-ins: -1 where exited.
    assert draft_sampled.tolist() == expected.tolist()
    assert (draft_sampled == -1).sum() >= 3
