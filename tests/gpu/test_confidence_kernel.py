"""The DSL confidence kernels (Triton) on the GPU: garbage (NaN) logit rows, as
in uninitialized rows during CUDA graph capture, still give token ids in the
vocabulary (before the fix, EAGLE-1's fused draft loop capture on the V2
runner embedded an out-of-range id: device-side assert); and the fused
record-step kernel against its torch path.

Tests marked ``cuda`` need a GPU; the others run the same helpers' torch
paths on CPU (scripts/fastcheck.sh), against plain-Python semantics."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def triton_is_on():
    """The CUDA tests compare the Triton kernels with the torch path: with
    Triton disabled (vLLM turns it off when its import check fails, e.g. without
    the package's metadata) both sides would run the torch path."""
    from vllm.triton_utils import HAS_TRITON

    assert HAS_TRITON, "vLLM disabled Triton on this CUDA host; see its log"


@pytest.mark.cuda
@pytest.mark.parametrize("vocab_size", [49152, 10_001])
def test_nan_rows_give_in_range_tokens(triton_is_on, vocab_size):
    from vllm.v1.spec_decode.dynamic import confidence_exit as ce

    logits = torch.randn(64, vocab_size, device="cuda")
    logits[0] = float("nan")
    logits[1, ::3] = float("nan")
    logits[-1] = float("nan")
    logits[2] = float("-inf")
    logits[3, 5] = 50.0
    logits = logits.to(torch.bfloat16)
    tokens, conf = ce.draft_token_confidence(logits)
    assert ((tokens >= 0) & (tokens < vocab_size)).all(), tokens
    assert int(tokens[3]) == 5 and float(conf[3]) > 0.99
    finite = torch.isfinite(logits).all(dim=-1)
    assert torch.equal(tokens[finite], logits[finite].argmax(dim=-1))


def test_confidence_torch_path_is_the_softmax_probability():
    """CPU: ``draft_token_confidence``'s torch path (what the kernel is
    compared with): the argmax and its softmax probability, with and without
    given tokens and temperatures."""
    from vllm.v1.spec_decode.dynamic import confidence_exit as ce

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(9, 1000, generator=g) * 3
    tokens, conf = ce.draft_token_confidence(logits)
    probs = logits.softmax(-1)
    assert torch.equal(tokens, logits.argmax(-1))
    torch.testing.assert_close(conf, probs.max(-1).values)
    given = torch.randint(0, 1000, (9,), generator=g)
    temp = torch.tensor([0.0, 0.5, 1.0, 2.0, 0.7, 1.3, 0.0, 0.9, 1.1])
    _, conf = ce.draft_token_confidence(logits, given, temp)
    scale = torch.where(temp > 0, 1 / temp.clamp(min=1e-6), torch.ones_like(temp))
    want = (logits * scale[:, None]).softmax(-1).gather(1, given[:, None]).squeeze(1)
    torch.testing.assert_close(conf, want)


# --- record_step: the fused kernel against its torch path -------------------
# The exit state is built and seeded by _make_exit / _seed_exit and compared
# by _exit_state; only these need adapting when DraftConfidenceExit changes.

VOCAB, K, MAX_ROWS = 1000, 6, 512


def _make_exit(device):
    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    return DraftConfidenceExit(0.5, MAX_ROWS, torch.device(device))


def _seed_exit(ex, step, inactive_share, step_costs):
    gen = torch.Generator().manual_seed(1)
    ex.active.copy_(torch.rand(MAX_ROWS, generator=gen) > inactive_share)
    ex.num_drafted.copy_(torch.randint(0, step + 1, (MAX_ROWS,), generator=gen))
    ex.thresholds.copy_(torch.rand(MAX_ROWS, generator=gen))
    ex.max_draft_tokens.copy_(torch.randint(0, K + 1, (MAX_ROWS,), generator=gen))
    for name in ("survival", "expected"):  # the cost-aware stop rule's state
        if hasattr(ex, name):
            getattr(ex, name).copy_(torch.rand(MAX_ROWS, generator=gen) * (step + 1))
    if step_costs:
        # Draft and verify ms per batch size: draft steps that are not cheap,
        # so the cost rule stops some loops the per-row rule would continue.
        if not hasattr(ex, "set_step_costs"):
            pytest.fail("DraftConfidenceExit has no set_step_costs (per-batch costs)")
        n = MAX_ROWS + 1
        ex.set_step_costs([0.2 + 0.001 * i for i in range(n)], [1.0 + 0.01 * i for i in range(n)])
    if step_costs == "host":
        # A host pace across the loop's GPU time: some draft steps free, the
        # one that crosses it priced in part, later ones in full.
        if not hasattr(ex, "set_host_step_ms"):
            pytest.fail("DraftConfidenceExit has no set_host_step_ms (host-paced steps)")
        ex.set_host_step_ms(1.0 + 0.2 * (step + 1) + 0.1)


def _exit_state(ex):
    names = ["active", "num_drafted", "survival", "expected"]
    return {n: getattr(ex, n).cpu() for n in names if hasattr(ex, n)}


def _record_step_run(device, num_rows, step, inactive_share, step_costs=False):
    """One ``record_step`` on ``device`` from seeded state: the draft buffer,
    the next inputs and the exit state afterwards, on CPU."""
    g = torch.Generator().manual_seed(num_rows * 10 + step)
    sampled = torch.randint(-5, VOCAB + 5, (num_rows,), generator=g)
    confidence = torch.rand(num_rows, generator=g)
    confidence[::11] = float("nan")
    ex = _make_exit(device)
    _seed_exit(ex, step, inactive_share, step_costs)
    draft = torch.full((MAX_ROWS, K), 77, dtype=torch.int64, device=device)
    nxt = torch.full((MAX_ROWS,), 77, dtype=torch.int64, device=device)
    ex.record_step(
        torch.tensor(step, device=device),
        sampled.to(device),
        confidence.to(device),
        draft[:num_rows],
        nxt[:num_rows],
        VOCAB,
    )
    return {"draft": draft.cpu(), "next": nxt.cpu(), **_exit_state(ex)}, (sampled, confidence)


RECORD_CASES = [(n, s) for n in (1, 7, 300) for s in (0, 1, 4)]


@pytest.mark.parametrize("num_rows,step", RECORD_CASES)
@pytest.mark.parametrize("inactive_share", [0.3, 1.0])
def test_record_step_torch_path_matches_the_per_row_rule(num_rows, step, inactive_share):
    """CPU, no step costs loaded (the per-row rule): masked tokens in column
    ``step`` (-1 after it at step 0), next inputs clamped to the vocab,
    drafted counts, and a row stays active iff it was, its confidence
    reaches its threshold (NaN does not) and it is below its cap."""
    got, (sampled, confidence) = _record_step_run("cpu", num_rows, step, inactive_share)
    ref = _make_exit("cpu")
    _seed_exit(ref, step, inactive_share, step_costs=False)
    draft = torch.full((MAX_ROWS, K), 77, dtype=torch.int64)
    active, drafted = ref.active.clone(), ref.num_drafted.clone()
    for r in range(num_rows):
        if step == 0:
            draft[r, 1:] = -1
        was = bool(active[r])
        draft[r, step] = int(sampled[r]) if was else -1
        drafted[r] += int(was)
        keep = bool(confidence[r] >= ref.thresholds[r])
        active[r] = was and keep and int(drafted[r]) < int(ref.max_draft_tokens[r])
    nxt = torch.full((MAX_ROWS,), 77, dtype=torch.int64)
    nxt[:num_rows] = sampled.clamp(0, VOCAB - 1)
    assert torch.equal(got["draft"], draft)
    assert torch.equal(got["next"], nxt)
    assert torch.equal(got["num_drafted"], drafted)
    assert torch.equal(got["active"], active)


@pytest.mark.cuda
@pytest.mark.parametrize("num_rows,step", RECORD_CASES)
@pytest.mark.parametrize("inactive_share", [0.3, 1.0])
@pytest.mark.parametrize("step_costs", [False, True, "host"])
def test_fused_record_step_matches_the_torch_ops(
    triton_is_on, num_rows, step, inactive_share, step_costs
):
    """``DraftConfidenceExit.record_step``'s fused kernel against the same
    bookkeeping in torch ops (its CPU path), on random state, with and
    without per-batch step costs loaded (and with a host time per step that
    hides some draft steps), and with no row active."""
    gpu, _ = _record_step_run("cuda", num_rows, step, inactive_share, step_costs)
    cpu, _ = _record_step_run("cpu", num_rows, step, inactive_share, step_costs)
    assert gpu.keys() == cpu.keys()
    for name in cpu:
        if cpu[name].is_floating_point():
            torch.testing.assert_close(gpu[name], cpu[name], msg=name)
        else:
            assert torch.equal(gpu[name], cpu[name]), name
