"""The engine groups of the GPU tests: one subprocess each (see conftest.py).

A group is (environment, cases); a case is one engine and the workloads it
runs (engine_worker.py). Engines are expensive (~40 s to start with graph
capture), so each engine serves every test that can share it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

K = 5
TAU = 0.6
ROOT = Path(__file__).resolve().parents[2]


def results_dir() -> Path:
    """Where a run writes its raw JSON results: ``DSL_GPU_RESULTS``, else
    ``build/gpu-results/raw`` (ignored by git, so a CPU run of the suite leaves
    nothing under ``tests/gpu/results``, where only committed runs belong)."""
    return Path(
        os.environ.get("DSL_GPU_RESULTS", ROOT / "build" / "gpu-results" / "raw")
    )


def draft_name() -> str:
    return os.environ.get("DSL_GPU_DRAFT", "smollm2-l4-kd")


def spec(k: int, tau: float | None = None, draft: str | None = None) -> dict:
    s = {"method": "draft_model", "model": draft or draft_name(),
         "num_speculative_tokens": k}
    if tau is not None:
        s["draft_confidence_threshold"] = tau
    return s


# EAGLE heads built by scripts/gpu-host/build_eagle.py next to the target.
EAGLE_DRAFTS = {"eagle": "smollm2-eagle", "eagle3": "smollm2-eagle3"}


def eagle_spec(method: str, k: int, tau: float | None = None) -> dict:
    """An EAGLE ("eagle") or EAGLE3 ("eagle3") speculative config."""
    s = {"method": method, "model": EAGLE_DRAFTS[method], "num_speculative_tokens": k}
    if tau is not None:
        s["draft_confidence_threshold"] = tau
    return s


def case(
    name: str,
    s: dict | None,
    workloads: tuple[str, ...] = ("greedy",),
    target: str | None = None,
    **engine,
) -> dict:
    c = {
        "name": name,
        "spec": s,
        "workloads": list(workloads),
        "engine": {"enforce_eager": False, **engine},
    }
    if target:
        c["target"] = target
    if s is None and "stress" in workloads:
        c["stress_logprobs"] = STRESS_LOGPROBS
    if s is None:
        # Greedy identity is checked up to near-ties of the target: a
        # verify batch has another shape than a target-only step, and bf16
        # may flip a near-tie (tests/gpu/near_ties.py).
        c["greedy_logprobs"] = STRESS_LOGPROBS
    return c


# Engines of parallel groups compile side by side: keep each compile small.
COMMON = {"TORCHINDUCTOR_COMPILE_THREADS": "2"}
V2 = {"VLLM_USE_V2_MODEL_RUNNER": "1"} | COMMON
V1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"} | COMMON
SYNC_CHECK = {"VLLM_GPU_SYNC_CHECK": "error"}
ALL = ("greedy", "stress", "sample")
# Piecewise CUDA graphs only: every verify step runs piecewise (the plain
# case's FULL_AND_PIECEWISE engine replays the FULL decode graph in its
# uniform decode steps). The V1 worker once trimmed exited slots in such
# steps, which gave a wrong token on the H200 (2026-12-02); it now verifies
# every scheduled slot, which this case checks in the mode that trimmed.
PIECEWISE = {"compilation_config": {"cudagraph_mode": "PIECEWISE"}}
AV = {"enable_adaptive_verification": True}
# K = 5 up to 4 requests, 2 above.
SCHEDULE = {"num_speculative_tokens_per_batch_size": [[1, 4, K], [5, 64, 2]]}
# The target-only engines of the stress workload record their top-2 logprobs,
# so that every divergence of a DSL engine under load can be checked to start
# at a near-tie of the target (near_ties.py).
STRESS_LOGPROBS = 2

# Per-request overrides (issue 11) in one batch: thresholds on both sides
# of the engine default, a cap, and requests that keep the default.
REQUEST_ARGS = [
    {"draft_confidence_threshold": 0.3},
    {"draft_confidence_threshold": 0.9},
    {"max_draft_tokens": 2},
    None,
    {"draft_confidence_threshold": 0.6, "max_draft_tokens": 4},
]


def per_request_case(**engine) -> dict:
    c = case("dsl_per_request_k5", spec(K, 0.0), **engine)
    c["request_args"] = REQUEST_ARGS
    return c


GROUPS: dict[str, tuple[dict[str, str], list[dict]]] = {
    "v2-async": (
        V2,
        [
            case("target", None, ALL),
            case("sd_k5", spec(K), ("greedy", "sample")),
            case("dsl_t0.6_k5", spec(K, TAU), ALL),
        ],
    ),
    "v2-async-grid": (
        V2,
        [
            case("dsl_t0.3_k2", spec(2, 0.3)),
            case("dsl_t0.9_k8", spec(8, 0.9)),
            case("sd_k8", spec(8)),
        ],
    ),
    # Floor 0: only the step-cost rule stops the draft loop.
    "v2-tau0": (
        V2,
        [case("dsl_t0_k5", spec(K, 0.0), ("greedy", "sample")), per_request_case()],
    ),
    # Eager target and draft (the -1 draft slots must not reach the embedding).
    "v2-eager": (
        V2,
        [
            case("target", None, enforce_eager=True),
            case("dsl_t0.6_k5", spec(K, TAU), enforce_eager=True),
        ],
    ),
    "v2-sync": (V2, [case("dsl_t0.6_k5", spec(K, TAU), async_scheduling=False)]),
    # A draft width per batch size (two decode query lengths): every uniform
    # decode step must replay a FULL graph of its own query length, also at
    # batch sizes whose smallest covering graph has the other one (7 requests
    # of 3 tokens, 21, when 21 is 3 requests of 7), as requests finish.
    "v2-schedule": (
        V2,
        [
            case("target", None),
            case("sd_sched_k5", spec(K) | SCHEDULE),
            case("dsl_sched_k5", spec(K, 0.0) | SCHEDULE),
        ],
    ),
    # Upstream's adaptive verification with draft-model SD, which runs through
    # the draft loop the series changes. (DSL with it is refused: see
    # patches-wip/README.md for the patch that allowed it and its measurement.)
    "v2-av": (V2, [case("sd_k5_av", spec(K) | AV)]),
    "v2-async-synccheck": (
        V2 | SYNC_CHECK,
        [
            case("dsl_t0.6_k5", spec(K, TAU)),
        ],
    ),
    "v1-async": (
        V1,
        [
            case("target", None, ("greedy", "stress")),
            case("dsl_t0.6_k5", spec(K, TAU), ("greedy", "stress")),
            case(
                "dsl_t0.6_k5_piecewise", spec(K, TAU), ("greedy", "stress"), **PIECEWISE
            ),
            # Control: SD with the same piecewise graphs and no DSL.
            case("sd_k5_piecewise", spec(K), **PIECEWISE),
        ],
    ),
    "v1-sync": (
        V1,
        [
            case("dsl_t0.6_k5", spec(K, TAU), async_scheduling=False),
            per_request_case(async_scheduling=False),
        ],
    ),
    "v1-async-synccheck": (
        V1 | SYNC_CHECK,
        [
            case("sd_k5", spec(K)),
            case("dsl_t0.6_k5", spec(K, TAU)),
            case("dsl_t0.6_k5_piecewise", spec(K, TAU), **PIECEWISE),
        ],
    ),
    # EAGLE / EAGLE3 drafting (build_eagle.py): SD and DSL on the V2 runner
    # (the EAGLE loop is one FULL CUDA graph there: DSL masks after an exit),
    # DSL on V1 with async scheduling and once without.
    "v2-eagle": (
        V2,
        [
            case("eagle_sd_k5", eagle_spec("eagle", K)),
            case("eagle_dsl_t0.6_k5", eagle_spec("eagle", K, TAU)),
        ],
    ),
    "v2-eagle3": (
        V2,
        [
            case("eagle3_sd_k5", eagle_spec("eagle3", K)),
            case("eagle3_dsl_t0.6_k5", eagle_spec("eagle3", K, TAU)),
        ],
    ),
    # The eager EAGLE loop (stops at the exit like the per-step loop),
    # against an eager target.
    "v2-eagle-eager": (
        V2,
        [
            case("target", None, enforce_eager=True),
            case("eagle_dsl_t0.6_k5", eagle_spec("eagle", K, TAU), enforce_eager=True),
        ],
    ),
    "v1-eagle": (
        V1,
        [
            case("eagle_dsl_t0.6_k5", eagle_spec("eagle", K, TAU)),
            case("eagle3_dsl_t0.6_k5", eagle_spec("eagle3", K, TAU)),
            case(
                "eagle3_dsl_t0.6_k5_sync",
                eagle_spec("eagle3", K, TAU),
                async_scheduling=False,
            ),
        ],
    ),
}

# Tensor parallelism over two GPUs (DSL_GPU_TP=2 on a host with two): the
# device loop must give every rank the same trip count (no hang, no
# divergence), also with a threshold that exits often. SmolLM2's 9 query and 3
# KV heads cannot be split, so the group runs the function-preserving copies in
# a 12/4-head body (scripts/gpu-host/build_scaled.py, PROXIES=tp).
TP_TARGET = "smollm2-135m-tp"
if int(os.environ.get("DSL_GPU_TP", "1")) >= 2:
    TP_DRAFT = f"{draft_name()}-tp"
    GROUPS["v2-tp2"] = (
        V2,
        [
            case(
                "target",
                None,
                ("greedy", "stress"),
                target=TP_TARGET,
                tensor_parallel_size=2,
            ),
            case(
                "dsl_t0.6_k5",
                spec(K, TAU, TP_DRAFT),
                ("greedy", "stress"),
                target=TP_TARGET,
                tensor_parallel_size=2,
            ),
            case(
                "dsl_t0.9_k8",
                spec(8, 0.9, TP_DRAFT),
                target=TP_TARGET,
                tensor_parallel_size=2,
            ),
        ],
    )


def missing_models(cases: list[dict]) -> list[str]:
    """Checkpoint folders the cases' targets and drafts name that are not built
    (under DSL_GPU_MODELS, as conftest.models_dir())."""
    models = os.environ.get("DSL_GPU_MODELS", "/tmp/gpuhost/models")
    names = {c["spec"]["model"] for c in cases if c["spec"] and "model" in c["spec"]}
    names |= {c["target"] for c in cases if c.get("target")}
    return sorted(
        n for n in names if not os.path.exists(os.path.join(models, n, "config.json"))
    )


def group_models(cases: list[dict]) -> list[str]:
    """The checkpoint folders (names under DSL_GPU_MODELS) a group's cases
    load: the default target, case targets and drafts."""
    names = {c.get("target", "smollm2-135m") for c in cases}
    names |= {c["spec"]["model"] for c in cases if c["spec"] and "model" in c["spec"]}
    return sorted(names)


def wait_for_models(cases: list[dict], timeout_s: float, poll_s: float = 2.0) -> list[str]:
    """Wait until every model of ``cases`` is built, i.e. its folder holds the
    ``.built`` marker that scripts/gpu-host/suite.sh writes once the model's
    build script exited 0 (a folder alone may still be being written). Returns
    the models still missing after ``timeout_s`` (empty: all built)."""
    models = os.environ.get("DSL_GPU_MODELS", "/tmp/gpuhost/models")
    deadline = time.monotonic() + timeout_s
    while True:
        missing = [
            n for n in group_models(cases)
            if not os.path.exists(os.path.join(models, n, ".built"))
        ]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(poll_s)


def results(engine_groups, prompts, group: str) -> dict[str, dict]:
    """The results of ``group``'s engines by case name (run once per session)."""
    env, cases = GROUPS[group]
    return engine_groups.run(group, env, cases, prompts)


def tp_results(engine_groups, prompts) -> dict[str, dict]:
    """The TP = 2 group's results; skips when the target cannot be sharded
    over two GPUs (SmolLM2-135M has 9 attention heads), which vLLM reports
    as a config error at start-up."""
    import pytest

    res = results(engine_groups, prompts, "v2-tp2")
    error = str(res["target"].get("error") or "")
    if "must be divisible by tensor parallel size" in error:
        pytest.skip(f"the target cannot be sharded: {error.splitlines()[-2].strip()}")
    return res


def ok(result: dict) -> dict:
    """``result`` of a case that ran; fails the test with its error otherwise."""
    assert result["ok"], result.get("error")
    return result
