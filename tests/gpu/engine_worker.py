"""Run a list of engine cases in one process on the GPU and write JSON results.

Used by the GPU tests (tests/gpu/test_*.py), one subprocess per environment
(model runner V1/V2, async scheduling, sync check), so that environment
variables apply cleanly and GPU memory is returned between groups:

    python tests/gpu/engine_worker.py CASES.json OUT.json

CASES.json: {"models": DIR, "prompts": [[token ids], ...], "cases": [
    {"name": ..., "spec": {...} | null, "engine": {...LLM kwargs...},
     "max_tokens": 64, "temperature": 0.0, "seed": 0}, ...]}
A case's "spec" names draft models relative to "models". Each case records
token ids, timings, the engine's spec-decode counters (delta over the run) and,
on the V2 runner, the number of draft-model forward passes it ran.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The engine-counter snapshot and delta of the CPU e2e harness serve here too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from harness import _delta, _metric_snapshot  # noqa: E402

DRAFT_FORWARDS = {"count": 0}


def _count_v2_draft_forwards() -> None:
    """Wrap StandaloneARSpeculator._run_model to count draft forward passes."""
    try:
        from vllm.v1.worker.gpu.spec_decode.standalone_ar import speculator as sa
    except ImportError:
        return
    original = sa.StandaloneARSpeculator._run_model

    def counted(self, *args, **kwargs):
        DRAFT_FORWARDS["count"] += 1
        return original(self, *args, **kwargs)

    sa.StandaloneARSpeculator._run_model = counted


def run_case(case: dict, models: str, prompts: list[list[int]]) -> dict:
    from vllm import LLM, SamplingParams
    from vllm.distributed import cleanup_dist_env_and_memory

    kwargs = dict(
        model=os.path.join(models, case.get("target", "smollm2-135m")),
        max_model_len=1024,
        gpu_memory_utilization=0.3,
        seed=0,
        disable_log_stats=False,
    )
    kwargs.update(case.get("engine", {}))
    spec = case.get("spec")
    if spec is not None:
        spec = dict(spec)
        if "model" in spec:
            spec["model"] = os.path.join(models, spec["model"])
        kwargs["speculative_config"] = spec
    t0 = time.perf_counter()
    llm = LLM(**kwargs)
    init_s = time.perf_counter() - t0
    try:
        config = llm.llm_engine.vllm_config
        params = SamplingParams(
            temperature=case.get("temperature", 0.0),
            max_tokens=case.get("max_tokens", 64),
            seed=case.get("seed"),
            ignore_eos=case.get("ignore_eos", False),
        )
        inputs = [{"prompt_token_ids": p} for p in prompts]
        # Warm-up request so that timings exclude first-call compilation.
        llm.generate(inputs[:1], SamplingParams(max_tokens=8), use_tqdm=False)
        before = _metric_snapshot(llm)
        DRAFT_FORWARDS["count"] = 0
        t0 = time.perf_counter()
        if case.get("one_at_a_time"):
            outs = []
            for inp in inputs:
                outs += llm.generate([inp], params, use_tqdm=False)
        else:
            outs = llm.generate(inputs, params, use_tqdm=False)
        gen_s = time.perf_counter() - t0
        counters = _delta(before, _metric_snapshot(llm))
        tokens = [list(o.outputs[0].token_ids) for o in outs]
        return {
            "name": case["name"],
            "ok": True,
            "init_s": round(init_s, 2),
            "gen_s": round(gen_s, 4),
            "num_tokens": sum(len(t) for t in tokens),
            "token_ids": tokens,
            "counters": counters,
            "draft_forwards": DRAFT_FORWARDS["count"],
            "async_scheduling": bool(config.scheduler_config.async_scheduling),
            "enforce_eager": bool(config.model_config.enforce_eager),
        }
    finally:
        del llm
        gc.collect()
        cleanup_dist_env_and_memory()


def main(argv: list[str]) -> int:
    spec = json.load(open(argv[0]))
    _count_v2_draft_forwards()
    results = []
    for case in spec["cases"]:
        try:
            results.append(run_case(case, spec["models"], spec["prompts"]))
        except Exception as e:  # recorded per case; the test reports it
            traceback.print_exc()
            results.append({"name": case["name"], "ok": False, "error": repr(e)[:2000]})
        print(
            json.dumps({k: v for k, v in results[-1].items() if k != "token_ids"}),
            flush=True,
        )
        with open(argv[1], "w") as f:
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
