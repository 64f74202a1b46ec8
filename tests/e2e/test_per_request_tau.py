"""Per-request DSL threshold and draft cap (issue #11) on the real model, CPU (V1 path).

One draft-model engine with DSL machinery on engine-wide (tau = 0.0: never exits
on its own) serves a mixed batch in which requests set their own
``draft_confidence_threshold`` and ``max_draft_tokens`` through
``SamplingParams.extra_args`` (``vllm_xargs`` in the OpenAI server). Greedy
output must stay token-identical to the target-only baseline, each request's
drafted counts must respect its cap, and an invalid per-request value must be
rejected when the request enters the engine.

Uses the conftest fixtures of tests/e2e/ (fixtures, prompts,
max_tokens, baseline).
"""

from __future__ import annotations

import gc
import time

import harness
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]

K = 4
# Engine-wide tau 0.0 = DSL on, no exit unless a request asks for one.
CASE = harness.Case("per_request_dsl_l20_k4", "draft_model", "draft_l20", K, 0.0)
# Cycled over the prompts: default, own tau, cap 0, cap + tau, tau 0, cap.
PER_REQUEST = (
    None,
    {"draft_confidence_threshold": 0.9},
    {"max_draft_tokens": 0},
    {"draft_confidence_threshold": 0.3, "max_draft_tokens": 1},
    {"draft_confidence_threshold": 0.0},
    {"max_draft_tokens": 2},
)


def _run_mixed(fixtures, prompts, max_tokens):
    harness.configure_env()
    from vllm import LLM, SamplingParams
    from vllm.distributed import cleanup_dist_env_and_memory

    llm = LLM(**harness.engine_kwargs(CASE, fixtures))
    try:
        params = [
            SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=False,
                           extra_args=PER_REQUEST[i % len(PER_REQUEST)])
            for i in range(len(prompts))
        ]
        inputs = [{"prompt_token_ids": p["prompt_token_ids"]} for p in prompts]
        t0 = time.perf_counter()
        outs = llm.generate(inputs, params, use_tqdm=False)
        gen_s = time.perf_counter() - t0
        token_ids = [list(o.outputs[0].token_ids) for o in outs]
        per_request = []
        for o in outs:
            m = o.outputs[0].spec_decode_metrics
            per_request.append(m.to_dict() if m is not None else None)
        # A cap above K is rejected on entry, with the engine still serving.
        # Only the type and message are kept: a live traceback would keep
        # this frame, and so the engine, alive past the cleanup below, and
        # its late finalizer would tear down the next engine's state.
        bad = SamplingParams(temperature=0.0, max_tokens=2,
                             extra_args={"max_draft_tokens": K + 1})
        rejection: tuple[type, str] | None = None
        try:
            llm.generate(inputs[:1], bad, use_tqdm=False)
        except Exception as e:  # noqa: BLE001 - checked below
            rejection = (type(e), str(e))
    finally:
        del llm
        gc.collect()
        cleanup_dist_env_and_memory()
    from vllm.exceptions import VLLMValidationError

    assert rejection is not None, "a cap above K was accepted"
    assert issubclass(rejection[0], (VLLMValidationError, ValueError)), rejection
    assert "max_draft_tokens" in rejection[1], rejection
    return harness.CaseResult(CASE, token_ids, 0.0, gen_s, {}, per_request)


def test_mixed_per_request_tau_and_cap_is_greedy_equivalent(fixtures, prompts, max_tokens,
                                                            baseline, e2e_results):
    if not harness.dsl_supported():
        pytest.skip("the DSL series is not applied")
    result = _run_mixed(fixtures, prompts, max_tokens)
    e2e_results.append(result)
    print(harness.format_requests(result, prompts))
    diffs = harness.compare(baseline, result)
    assert not diffs, "mixed per-request DSL batch differs from target-only:\n" + "\n".join(diffs)

    for i, m in enumerate(result.per_request):
        args = PER_REQUEST[i % len(PER_REQUEST)] or {}
        cap = args.get("max_draft_tokens")
        if m is None:
            # No speculative step at all (e.g. a one-token answer).
            continue
        # Per-step arrays are present once the request had a verify step.
        steps = m.get("per_step_drafted", [])
        assert steps or m["num_spec_steps"] == 0, m
        if cap == 0:
            assert m["num_draft_tokens"] == 0, f"request {i} (cap 0) drafted {m}"
        elif cap is not None:
            assert max(steps, default=0) <= cap, f"request {i} exceeded cap {cap}: {steps}"
        elif args.get("draft_confidence_threshold", 0.0) == 0.0 and steps:
            # Never exits and has no cap: full-K drafts despite its capped
            # neighbours in the same batch.
            assert K in steps, f"request {i} (tau 0, no cap) never drafted K: {steps}"
        assert m["num_accepted_draft_tokens"] <= m["num_draft_tokens"]
