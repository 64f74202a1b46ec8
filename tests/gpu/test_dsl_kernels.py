"""The DSL per-step bookkeeping kernels (Triton) on the GPU, each against a
torch reference of its semantics: the exit state's ``begin`` (one launch),
the drafted-count record and gather (one launch each), and the stand-in
tokens that ``combine_sampled_and_draft_tokens`` writes for exited drafts
and ``gather_draft_sampled`` reads back as -1."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.mark.parametrize("num_reqs,num_rows", [(1, 1), (3, 8), (37, 37), (300, 512)])
@pytest.mark.parametrize("per_request", [False, True])
@pytest.mark.parametrize("row_indexed", [False, True])
def test_begin_kernel_matches_the_torch_path(num_reqs, num_rows, per_request,
                                             row_indexed):
    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    g = torch.Generator().manual_seed(num_reqs * 7 + num_rows)
    max_rows, slots = 600, 700
    thresholds = torch.rand(slots, generator=g)
    caps = torch.randint(0, 6, (slots,), generator=g, dtype=torch.int32)
    index = torch.randperm(slots, generator=g)[:num_reqs]
    index[::5] = -1  # padded rows inside the batch (MRV2's idx_mapping -1)
    if row_indexed:
        # V1: values indexed by row, shorter than the batch.
        thresholds, caps, index = thresholds[: num_reqs // 2], caps[: num_reqs // 2], None
    states = {}
    for device in ("cpu", "cuda"):
        ex = DraftConfidenceExit(0.3, 1, max_rows, torch.device(device))
        ex.active.fill_(True)
        ex.num_drafted.fill_(5)
        ex.max_draft_tokens.fill_(9)
        ex.thresholds.fill_(0.9)
        args = (thresholds.to(device), caps.to(device)) if per_request else (None, None)
        ex.begin(
            num_reqs,
            4,
            *args,
            index=index.to(device) if index is not None and per_request else None,
            num_rows=num_rows,
        )
        states[device] = [
            t.cpu() for t in (ex.active, ex.num_drafted, ex.max_draft_tokens, ex.thresholds)
        ]
    for cpu, gpu, name in zip(states["cpu"], states["cuda"],
                              ["active", "drafted", "caps", "thresholds"]):
        assert torch.equal(cpu, gpu), name


@pytest.mark.parametrize("num_reqs", [1, 5, 1500])
def test_drafted_count_kernels_match_the_torch_path(num_reqs):
    from vllm.v1.worker.gpu.spec_decode.drafted_counts import DraftedTokenCounts

    slots = 2048
    results = {}
    for device in ("cpu", "cuda"):
        g = torch.Generator().manual_seed(num_reqs)  # the same values per device
        counts = DraftedTokenCounts(slots, device)
        out = []
        for k in (3, 5):
            idx = torch.randperm(slots, generator=torch.Generator().manual_seed(k))
            idx = idx[:num_reqs].to(device)
            drafted = torch.randint(0, 7, (num_reqs,), generator=g).int().to(device)
            counts.record(idx, drafted, k, num_forwards=torch.tensor(k + 1, device=device))
            out.append(counts.gather(idx, take_forwards=False).cpu())
        counts.record(idx, drafted, 2)
        out.append(counts.gather(idx).cpu())  # forwards: 4 + 6
        out.append(counts.gather(idx).cpu())  # taken: 0
        out.append(counts.num_drafted.cpu())
        results[device] = out
    for cpu, gpu in zip(results["cpu"], results["cuda"]):
        assert torch.equal(cpu, gpu)
    assert int(results["cuda"][-3][-1]) == 10 and int(results["cuda"][-2][-1]) == 0


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


def test_stand_ins_are_written_and_read_back_as_minus_one():
    from vllm.v1.worker.gpu.input_batch import combine_sampled_and_draft_tokens
    from vllm.v1.worker.gpu.spec_decode.rejection_sampler import gather_draft_sampled

    dev = "cuda"
    # Batch rows: slot 2 verifies 3 drafts (the last one exited), slot 0
    # verifies 3 with the last two exited, slot 1 is a prefill chunk (one
    # logits row), slot 3 verifies 3 drafts, none exited.
    idx_mapping = torch.tensor([2, 0, 1, 3], dtype=torch.int32, device=dev)
    num_logits = [4, 4, 1, 4]
    query_lens = [4, 4, 6, 4]
    qsl = torch.tensor([0, 4, 8, 14, 18], dtype=torch.int32, device=dev)
    cu = torch.tensor([0, 4, 8, 9, 13], dtype=torch.int32, device=dev)
    seq_lens = torch.tensor([20, 30, 6, 40], dtype=torch.int32, device=dev)
    prefill_len = torch.tensor([8, 30, 8, 8], dtype=torch.int32, device=dev)
    last_sampled = torch.tensor([[70], [80], [90], [60]], dtype=torch.int64, device=dev)
    draft_tokens = torch.tensor(
        [[71, -1, -1], [81, 82, 83], [91, 92, -1], [61, 62, 63]], dtype=torch.int64,
        device=dev)
    input_ids = torch.arange(100, 120, dtype=torch.int32, device=dev)
    stand_ins = torch.ones(20, dtype=torch.bool, device=dev)  # stale marks
    ref_ids, marks = _reference_combine(input_ids.cpu(), idx_mapping.cpu(),
                                        last_sampled.cpu(), qsl.cpu(), seq_lens.cpu(),
                                        prefill_len.cpu(), draft_tokens.cpu(), cu.cpu())
    logits_indices = combine_sampled_and_draft_tokens(
        input_ids, idx_mapping, last_sampled, qsl, seq_lens, prefill_len,
        draft_tokens, cu, sum(num_logits), stand_ins=stand_ins)
    assert sum(query_lens) == 18
    assert input_ids.cpu().tolist() == ref_ids.tolist()
    assert (input_ids >= 0).all()
    rows = logits_indices.cpu().tolist()
    assert [bool(stand_ins[r]) for r in rows] == [marks[r] for r in rows]
    assert sum(marks.values()) == 3

    # Without stand-ins the kernel writes the drafts as they are.
    plain = torch.arange(100, 120, dtype=torch.int32, device=dev)
    combine_sampled_and_draft_tokens(
        plain, idx_mapping, last_sampled, qsl, seq_lens, prefill_len,
        draft_tokens, cu, sum(num_logits))
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
