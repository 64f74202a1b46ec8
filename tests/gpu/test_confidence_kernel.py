"""The DSL confidence kernel (Triton) on the GPU: garbage (NaN) logit rows, as
in uninitialized rows during CUDA graph capture, still give token ids in the
vocabulary. Before the fix, EAGLE-1's fused draft loop capture on the V2
runner embedded an out-of-range id (device-side assert)."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.fixture(autouse=True)
def triton_is_on():
    """These tests compare the Triton kernels with the torch path: with Triton
    disabled (vLLM turns it off when its import check fails, e.g. without
    the package's metadata) both sides would run the torch path."""
    from vllm.triton_utils import HAS_TRITON

    assert HAS_TRITON, "vLLM disabled Triton on this CUDA host; see its log"


@pytest.mark.parametrize("vocab_size", [49152, 10_001])
def test_nan_rows_give_in_range_tokens(vocab_size):
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


@pytest.mark.parametrize("num_rows", [1, 7, 300])
@pytest.mark.parametrize("step", [0, 1, 4])
@pytest.mark.parametrize("batch_exit", [False, True])
@pytest.mark.parametrize("inactive_share", [0.3, 1.0])
def test_fused_record_step_matches_the_torch_ops(
    num_rows, step, batch_exit, inactive_share
):
    """``DraftConfidenceExit.record_step``'s fused kernel against the same
    bookkeeping in torch ops (its CPU path), on random state: masked tokens
    in column ``step``, next inputs clamped to the vocab, drafted counts and
    the active mask (threshold, per-row caps, NaN confidence);
    with ``batch_exit`` (every row below its cap drafts while any row would
    go on: one program reduces over all rows) too, and with no row active."""
    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    g = torch.Generator().manual_seed(num_rows * 10 + step)
    vocab, k, max_rows = 1000, 6, 512
    sampled = torch.randint(-5, vocab + 5, (num_rows,), generator=g)
    confidence = torch.rand(num_rows, generator=g)
    confidence[::11] = float("nan")
    states = {}
    for device in ("cpu", "cuda"):
        ex = DraftConfidenceExit(
            0.5, max_rows, torch.device(device), batch_exit=batch_exit
        )
        gen = torch.Generator().manual_seed(1)
        ex.active.copy_(torch.rand(max_rows, generator=gen) > inactive_share)
        ex.num_drafted.copy_(torch.randint(0, step + 1, (max_rows,), generator=gen))
        ex.thresholds.copy_(torch.rand(max_rows, generator=gen))
        ex.max_draft_tokens.copy_(torch.randint(0, k + 1, (max_rows,), generator=gen))
        draft = torch.full((max_rows, k), 77, dtype=torch.int64, device=device)
        nxt = torch.full((max_rows,), 77, dtype=torch.int64, device=device)
        ex.record_step(
            torch.tensor(step, device=device),
            sampled.to(device),
            confidence.to(device),
            draft[:num_rows],
            nxt[:num_rows],
            vocab,
        )
        states[device] = [t.cpu() for t in (draft, nxt, ex.active, ex.num_drafted)]
    for cpu, gpu, name in zip(
        states["cpu"], states["cuda"], ["draft", "next", "active", "drafted"]
    ):
        assert torch.equal(cpu, gpu), name
