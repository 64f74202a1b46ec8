"""The DSL confidence kernel (Triton) on the GPU: garbage (NaN) logit rows, as
in uninitialized rows during CUDA graph capture, still give token ids in the
vocabulary. Before the fix, EAGLE-1's fused draft loop capture on the V2
runner embedded an out-of-range id (device-side assert)."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


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
