"""DSL with EAGLE and EAGLE3 drafting on the GPU: greedy token-identical to
target-only on the V2 runner (SD and DSL; the whole EAGLE loop is one FULL CUDA
graph there, so DSL masks the drafts after an exit) and the V1 runner (async
scheduling, and one sync case), and the DSL engines exit early.

Needs the EAGLE heads of scripts/gpu-host/build_eagle.py (smollm2-eagle,
smollm2-eagle3 under DSL_GPU_MODELS); skips without them."""

from __future__ import annotations

import os

import pytest
from gpu_groups import GROUPS, missing_models, ok, results
from test_dsl_greedy import first_difference

CASES = [
    ("v2-eagle", "eagle_sd_k5", "v2-async"),
    ("v2-eagle", "eagle_dsl_t0.6_k5", "v2-async"),
    ("v2-eagle3", "eagle3_sd_k5", "v2-async"),
    ("v2-eagle3", "eagle3_dsl_t0.6_k5", "v2-async"),
    ("v1-eagle", "eagle_dsl_t0.6_k5", "v1-async"),
    ("v1-eagle", "eagle3_dsl_t0.6_k5", "v1-async"),
    ("v1-eagle", "eagle3_dsl_t0.6_k5_sync", "v1-async"),
]


def eagle_results(engine_groups, prompts, group: str) -> dict[str, dict]:
    # A replay checks recorded results: the checkpoints are on the GPU host.
    # With DSL_GPU_WAIT_MODELS the heads are being built beside the suite: the
    # group waits for them (and fails if they never come).
    waits = float(os.environ.get("DSL_GPU_WAIT_MODELS", "0") or 0) > 0
    missing = (
        []
        if os.environ.get("DSL_GPU_REPLAY") or waits
        else missing_models(GROUPS[group][1])
    )
    if missing:
        pytest.skip(
            f"EAGLE checkpoints not built ({', '.join(missing)}): "
            "run scripts/gpu-host/build_eagle.py"
        )
    return results(engine_groups, prompts, group)


@pytest.mark.parametrize("group,name,baseline_group", CASES)
def test_eagle_greedy_token_identical(
    engine_groups, prompts, group, name, baseline_group
):
    got = ok(eagle_results(engine_groups, prompts, group)[name])
    base = ok(results(engine_groups, prompts, baseline_group)["target"])
    assert not got["enforce_eager"], "CUDA graphs must be on"
    assert got["async_scheduling"] == (not name.endswith("_sync"))
    assert got["token_ids"] == base["token_ids"], first_difference(
        got["token_ids"], base["token_ids"]
    )
    counters = got["counters"]
    assert counters.get("vllm:spec_decode_num_drafts", 0) > 0
    if "_dsl_" in name and name.endswith("_sync"):
        # V1 sync: the scheduler gets the trimmed draft lists, so the engine's
        # exit counter stays 0 (as for draft_model); exits show as fewer
        # drafted tokens than K per draft.
        drafted = counters["vllm:spec_decode_num_draft_tokens"]
        assert drafted < 0.95 * 5 * counters["vllm:spec_decode_num_drafts"], counters
    elif "_dsl_" in name:
        assert counters.get("vllm:spec_decode_num_early_exits", 0) > 0, counters


@pytest.mark.gpu_groups("v1-eagle")
def test_v1_eagle_dsl_drafts_fewer_tokens(engine_groups, prompts):
    """On V1 the EAGLE loop stops at the exit: fewer drafted tokens per draft
    than K, with and without async scheduling."""
    res = eagle_results(engine_groups, prompts, "v1-eagle")
    for name in ("eagle_dsl_t0.6_k5", "eagle3_dsl_t0.6_k5", "eagle3_dsl_t0.6_k5_sync"):
        c = ok(res[name])["counters"]
        drafted = (
            c["vllm:spec_decode_num_draft_tokens"] / c["vllm:spec_decode_num_drafts"]
        )
        assert drafted < 0.95 * 5, (name, drafted)


@pytest.mark.gpu_groups("v2-eagle-eager")
def test_v2_eager_eagle_dsl_token_identical(engine_groups, prompts):
    """V2 with the target and the EAGLE loop eager: the loop stops once every
    request has exited, token-identical to the eager target."""
    res = eagle_results(engine_groups, prompts, "v2-eagle-eager")
    base, got = ok(res["target"]), ok(res["eagle_dsl_t0.6_k5"])
    assert got["enforce_eager"]
    assert got["token_ids"] == base["token_ids"], first_difference(
        got["token_ids"], base["token_ids"]
    )
    assert got["counters"].get("vllm:spec_decode_num_early_exits", 0) > 0
