"""DSL on the GPU: greedy token-identical to target-only, V1 and V2 runners,
async scheduling on and off, CUDA graphs on; no blocking GPU->CPU sync; the
number of draft forward passes drops when the threshold exits often."""

from __future__ import annotations

import pytest
from conftest import draft_name

K = 5
TAU = 0.6


def spec(k: int, tau: float | None = None) -> dict:
    s = {"method": "draft_model", "model": draft_name(), "num_speculative_tokens": k}
    if tau is not None:
        s["draft_confidence_threshold"] = tau
    return s


def case(name: str, s: dict | None, **engine) -> dict:
    return {"name": name, "spec": s, "engine": {"enforce_eager": False, **engine}}


V2 = {"VLLM_USE_V2_MODEL_RUNNER": "1"}
V1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
SYNC_CHECK = {"VLLM_GPU_SYNC_CHECK": "error"}

GROUPS = {
    "v2-async": (
        V2,
        [
            case("target", None),
            case("sd_k5", spec(K)),
            case("dsl_t0.6_k5", spec(K, TAU)),
            case("dsl_t0.3_k2", spec(2, 0.3)),
            case("dsl_t0.9_k8", spec(8, 0.9)),
            case("sd_k8", spec(8)),
        ],
    ),
    "v2-sync": (V2, [case("dsl_t0.6_k5", spec(K, TAU), async_scheduling=False)]),
    "v2-async-synccheck": (V2 | SYNC_CHECK, [case("dsl_t0.6_k5", spec(K, TAU))]),
    "v1-async": (V1, [case("target", None), case("dsl_t0.6_k5", spec(K, TAU))]),
    "v1-sync": (V1, [case("dsl_t0.6_k5", spec(K, TAU), async_scheduling=False)]),
    "v1-async-synccheck": (
        V1 | SYNC_CHECK,
        [case("sd_k5", spec(K)), case("dsl_t0.6_k5", spec(K, TAU))],
    ),
}


def results(engine_groups, prompts, group: str) -> dict[str, dict]:
    env, cases = GROUPS[group]
    return engine_groups.run(group, env, cases, prompts)


def ok(result: dict) -> dict:
    assert result["ok"], result.get("error")
    return result


def first_difference(a: list[list[int]], b: list[list[int]]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            j = next(
                (j for j, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y))
            )
            return f"prompt {i}, token {j}: {x[j : j + 5]} vs {y[j : j + 5]}"
    return "lengths differ"


@pytest.mark.parametrize(
    "group,name,baseline_group",
    [
        ("v2-async", "sd_k5", "v2-async"),
        ("v2-async", "dsl_t0.6_k5", "v2-async"),
        ("v2-async", "dsl_t0.3_k2", "v2-async"),
        ("v2-async", "dsl_t0.9_k8", "v2-async"),
        ("v2-sync", "dsl_t0.6_k5", "v2-async"),
        ("v1-async", "dsl_t0.6_k5", "v1-async"),
        ("v1-sync", "dsl_t0.6_k5", "v1-async"),
    ],
)
def test_greedy_token_identical(engine_groups, prompts, group, name, baseline_group):
    base = ok(results(engine_groups, prompts, baseline_group)["target"])
    got = ok(results(engine_groups, prompts, group)[name])
    assert not got["enforce_eager"], "CUDA graphs must be on"
    assert got["async_scheduling"] == (not group.endswith("-sync"))
    assert got["token_ids"] == base["token_ids"], first_difference(
        got["token_ids"], base["token_ids"]
    )
    assert got["counters"].get("vllm:spec_decode_num_drafts", 0) > 0


@pytest.mark.parametrize("group", ["v2-async-synccheck", "v1-async-synccheck"])
def test_no_blocking_sync(engine_groups, prompts, group):
    """VLLM_GPU_SYNC_CHECK=error raises in the worker on an unintended sync."""
    res = results(engine_groups, prompts, group)
    ok(res["dsl_t0.6_k5"])


def test_draft_forward_passes_drop_when_exiting_often(engine_groups, prompts):
    res = results(engine_groups, prompts, "v2-async")
    sd, dsl = ok(res["sd_k8"]), ok(res["dsl_t0.9_k8"])
    assert sd["draft_forwards"] > 0, "draft forwards were not counted"
    drafts_sd = sd["counters"]["vllm:spec_decode_num_drafts"]
    drafts_dsl = dsl["counters"]["vllm:spec_decode_num_drafts"]
    per_step_sd = sd["draft_forwards"] / drafts_sd
    per_step_dsl = dsl["draft_forwards"] / drafts_dsl
    # SD at K=8 runs 8 draft forwards per step (prefill + 7 decode steps).
    assert per_step_dsl < 0.8 * per_step_sd, (per_step_dsl, per_step_sd)
