"""Run a list of engine cases in one process on the GPU and write JSON results.

Used by the GPU tests (tests/gpu/test_*.py), one subprocess per environment
(model runner V1/V2, async scheduling, sync check), so that environment
variables apply cleanly and GPU memory is returned between groups:

    python tests/gpu/engine_worker.py CASES.json OUT.json

CASES.json: {"models": DIR, "prompts": [[token ids], ...], "cases": [
    {"name": ..., "spec": {...} | null, "engine": {...LLM kwargs...},
     "max_tokens": 64, "temperature": 0.0, "seed": 0,
     "workloads": ["greedy", "stress", "sample"]}, ...]}
A case's "spec" names draft models relative to "models". One engine per case
runs its workloads in order (default: greedy only):

- greedy: the prompts batched, greedy; token ids, timings, the engine's
  spec-decode counters (delta over the run) and, on the V2 runner, the number
  of draft-model forward passes and the draft slots scheduled vs verified
  (top-level keys of the case's result); with the case's
  ``greedy_logprobs`` = N each prompt's top-N logprobs per token too
  (``"logprobs"``, a list per prompt, as the stress workload's);
- stress: ``STRESS_REQUESTS`` requests in flight at once through
  ``LLMEngine.step`` with every ``ABORT_EVERY``-th aborted mid-generation; with
  the small KV cache of the GPU tests this preempts. Records every request's
  fate, so a test can check that nothing was lost (result["stress"]); with
  the case's ``stress_logprobs`` = N also each token's top-N logprobs
  (``"logprobs"``: per position ``[[token, logprob], ...]``, best first);
- sample: temperature 1 over the prompts, two seeds per prompt; token ids and
  the spec-decode counters incl. per-position acceptance (result["sample"]).
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
# The V2 draft model's device-side loops: launches, and per propose() that
# launched one (traced unless VLLM_GPU_SYNC_CHECK=error, since reading the
# loop's step count back syncs): [draft forwards, largest drafted count, K].
DEVICE_LOOP = {"launches": 0, "steps": [], "known": []}
# Draft slots of the V2 runner's verify batches: as scheduled, and as run.
VERIFY_SLOTS = {"scheduled": 0, "verified": 0}
# The V2 target's CUDA graph per uniform decode step: how many replayed a FULL
# graph, and (requests, tokens per request) of those that did not.
TARGET_DISPATCH: dict = {"uniform_full": 0, "uniform_not_full": []}
STRESS_REQUESTS = 64
STRESS_MAX_TOKENS = 192
ABORT_EVERY = 8
ABORT_AFTER_TOKENS = 16
SAMPLE_MAX_TOKENS = 128


def _count_v2_draft_forwards() -> None:
    """Count the V2 draft model's forward passes: eager ones through
    ``StandaloneARSpeculator._run_model``, graphed ones as replays of its
    first-pass and decode-step CUDA graph managers (a replay does not call
    ``_run_model``; capture and warm-up calls happen before any case runs)."""
    try:
        from vllm.v1.worker.gpu.spec_decode.standalone_ar import speculator as sa
    except ImportError:
        return
    original = sa.StandaloneARSpeculator._run_model

    def counted(self, *args, **kwargs):
        DRAFT_FORWARDS["count"] += 1
        return original(self, *args, **kwargs)

    sa.StandaloneARSpeculator._run_model = counted
    _trace_device_loops(sa)
    manager_cls = getattr(sa, "SpeculatorCudaGraphManager", None)
    if manager_cls is None or not hasattr(manager_cls, "run_fullgraph"):
        return
    run_fullgraph = manager_cls.run_fullgraph

    def counted_replay(self, *args, **kwargs):
        DRAFT_FORWARDS["count"] += 1
        return run_fullgraph(self, *args, **kwargs)

    # Patched on the module's name only: EAGLE's managers stay uncounted.
    sa.SpeculatorCudaGraphManager = type(
        "CountedSpeculatorCudaGraphManager",
        (manager_cls,),
        {"run_fullgraph": counted_replay},
    )


def _trace_device_loops(sa) -> None:
    """Count device-loop launches; unless the sync check is on, read each
    loop's forward count (its final step) and the rows' drafted counts back
    after propose(), and add the loop's decode forwards to DRAFT_FORWARDS."""
    try:
        from vllm.v1.worker.gpu import conditional_graph as cg
    except ImportError:
        return
    launch = cg.DeviceWhileLoop.launch

    def counted_launch(self):
        DEVICE_LOOP["launches"] += 1
        return launch(self)

    cg.DeviceWhileLoop.launch = counted_launch
    if os.environ.get("VLLM_GPU_SYNC_CHECK") == "error":
        return
    propose = sa.StandaloneARSpeculator.propose

    def traced(self, *args, **kwargs):
        out = propose(self, *args, **kwargs)
        exit_state = getattr(self, "confidence_exit", None)
        if exit_state is not None and not kwargs.get("dummy_run"):
            # What the host claimed before the loop ran (None: nothing; a
            # tree without the claim records no "known" at all), then what
            # the device drafted: the least and most drafts over the rows.
            drafted = exit_state.get_num_drafted()
            if drafted.numel() and DEVICE_LOOP["known"] is not None:
                if not hasattr(self, "known_drafts"):
                    DEVICE_LOOP["known"] = None
                else:
                    k = kwargs.get("num_speculative_tokens")
                    DEVICE_LOOP["known"].append(
                        [self.known_drafts, int(drafted.min()), int(drafted.max()),
                         k if k is not None else self.num_speculative_steps]
                    )
        if getattr(self, "_device_loop", None) is not None:
            forwards = int(self.current_draft_step)
            drafted = self.confidence_exit.get_num_drafted()
            max_drafted = int(drafted.max()) if drafted.numel() else 0
            k = kwargs.get("num_speculative_tokens") or self.num_speculative_steps
            DEVICE_LOOP["steps"].append([forwards, max_drafted, k])
            # The first pass was counted as a replay or an eager forward.
            DRAFT_FORWARDS["count"] += forwards - 1
        return out

    sa.StandaloneARSpeculator.propose = traced


def _count_v2_verify_slots() -> None:
    """Count the draft slots the V2 runner verifies against those the
    scheduler scheduled, per step, through ``gather_batch_req_state`` (the
    worker-side trim of exited slots happens there)."""
    try:
        from vllm.v1.worker.gpu import model_runner as mr
    except ImportError:
        return
    original = mr.GPUModelRunner.gather_batch_req_state

    def counted(self, scheduler_output, dummy_run):
        state, uniform = original(self, scheduler_output, dummy_run)
        spec = scheduler_output.scheduled_spec_decode_tokens
        if state is not None and spec:
            VERIFY_SLOTS["scheduled"] += sum(len(v) for v in spec.values())
            if state.num_draft_tokens_np is not None:
                VERIFY_SLOTS["verified"] += int(state.num_draft_tokens_np.sum())
        return state, uniform

    mr.GPUModelRunner.gather_batch_req_state = counted


def _count_v1_verify_slots() -> None:
    """Count the draft slots the V1 runner verifies against those the
    scheduler scheduled, per step: the scheduled ones as ``execute_model``
    receives them, the verified ones as ``_calc_spec_decode_metadata``
    builds the verify batch from (after any trim: upstream's GPU n-gram
    drafter's is the runner's only one; a DSL exit's empty slots are
    verified), and the steps that verified fewer than were scheduled."""
    try:
        from vllm.v1.worker import gpu_model_runner as v1
    except ImportError:
        return
    runner = v1.GPUModelRunner
    execute, calc = runner.execute_model, runner._calc_spec_decode_metadata

    def counted_calc(self, num_draft_tokens, *args, **kwargs):
        VERIFY_SLOTS["verified"] += int(num_draft_tokens.sum())
        return calc(self, num_draft_tokens, *args, **kwargs)

    def counted_execute(self, scheduler_output, *args, **kwargs):
        spec = scheduler_output.scheduled_spec_decode_tokens
        scheduled = sum(len(v) for v in spec.values())
        verified = VERIFY_SLOTS["verified"]
        out = execute(self, scheduler_output, *args, **kwargs)
        VERIFY_SLOTS["scheduled"] += scheduled
        if VERIFY_SLOTS["verified"] - verified < scheduled:
            VERIFY_SLOTS["trimmed_steps"] = VERIFY_SLOTS.get("trimmed_steps", 0) + 1
        return out

    runner._calc_spec_decode_metadata = counted_calc
    runner.execute_model = counted_execute


def _top_logprobs(position_logprobs) -> list[list[list[float]]]:
    """A request's logprobs (vLLM's per-position {token: Logprob}) as
    ``[[token, logprob], ...]`` per position, best first."""
    out = []
    for d in position_logprobs or []:
        ranked = sorted(d.items(), key=lambda kv: -kv[1].logprob)
        out.append([[int(t), round(float(lp.logprob), 5)] for t, lp in ranked])
    return out


def _counter(llm, name: str) -> int:
    """Sum of an engine counter over its labels (0 when absent)."""
    total = 0
    for m in llm.get_metrics():
        if m.name == name and isinstance(getattr(m, "value", None), (int, float)):
            total += int(m.value)
    return total


def _count_v2_target_dispatch() -> None:
    """Record the CUDA graph the V2 runner picks for the target's uniform
    decode steps (``dispatch_cg_and_sync_dp`` as the model runner calls it;
    the drafters import their own name, so only the target's calls count)."""
    try:
        from vllm.config import CUDAGraphMode
        from vllm.v1.worker.gpu import model_runner as mr
    except ImportError:
        return
    original = mr.dispatch_cg_and_sync_dp

    def counted(manager, num_reqs, num_tokens, uniform_token_count, *args, **kwargs):
        desc, sync = original(
            manager, num_reqs, num_tokens, uniform_token_count, *args, **kwargs
        )
        if uniform_token_count is not None and not kwargs.get("need_eager"):
            if desc.cg_mode == CUDAGraphMode.FULL:
                TARGET_DISPATCH["uniform_full"] += 1
            else:
                TARGET_DISPATCH["uniform_not_full"].append(
                    [num_reqs, uniform_token_count]
                )
        return desc, sync

    mr.dispatch_cg_and_sync_dp = counted


def run_greedy(llm, case: dict, inputs: list[dict]) -> dict:
    from vllm import SamplingParams

    # Per-request DSL overrides (SamplingParams.extra_args), cycled over the
    # prompts: a mixed batch in which requests exit at different steps.
    request_args = case.get("request_args") or [None]
    params = [
        SamplingParams(
            temperature=case.get("temperature", 0.0),
            max_tokens=case.get("max_tokens", 64),
            seed=case.get("seed"),
            ignore_eos=case.get("ignore_eos", False),
            extra_args=request_args[i % len(request_args)],
            logprobs=case.get("greedy_logprobs"),
        )
        for i in range(len(inputs))
    ]
    before = _metric_snapshot(llm)
    DRAFT_FORWARDS["count"] = 0
    DEVICE_LOOP.update(launches=0, steps=[], known=[])
    VERIFY_SLOTS.clear()
    VERIFY_SLOTS.update(scheduled=0, verified=0, trimmed_steps=0)
    TARGET_DISPATCH.update(uniform_full=0, uniform_not_full=[])
    t0 = time.perf_counter()
    if case.get("one_at_a_time"):
        outs = []
        for inp, param in zip(inputs, params):
            outs += llm.generate([inp], param, use_tqdm=False)
    else:
        outs = llm.generate(inputs, params, use_tqdm=False)
    gen_s = time.perf_counter() - t0
    tokens = [list(o.outputs[0].token_ids) for o in outs]
    extra = {}
    if case.get("greedy_logprobs"):
        extra["logprobs"] = [_top_logprobs(o.outputs[0].logprobs) for o in outs]
    return {
        **extra,
        "gen_s": round(gen_s, 4),
        "num_tokens": sum(len(t) for t in tokens),
        "token_ids": tokens,
        "counters": _delta(before, _metric_snapshot(llm)),
        "draft_forwards": DRAFT_FORWARDS["count"],
        "device_loop": {
            "launches": DEVICE_LOOP["launches"],
            "steps": list(DEVICE_LOOP["steps"]),
            "known": (
                None if DEVICE_LOOP["known"] is None else list(DEVICE_LOOP["known"])
            ),
        },
        "verify_slots": dict(VERIFY_SLOTS),
        "target_dispatch": {
            "uniform_full": TARGET_DISPATCH["uniform_full"],
            "uniform_not_full": list(TARGET_DISPATCH["uniform_not_full"]),
        },
    }


def run_stress(llm, inputs: list[dict], logprobs: int | None = None) -> dict:
    """STRESS_REQUESTS greedy requests at once, every ABORT_EVERY-th aborted
    after ABORT_AFTER_TOKENS tokens; each request's outcome is recorded (with
    ``logprobs``: each token's top-``logprobs`` logprobs too)."""
    from vllm import SamplingParams

    engine = llm.llm_engine
    params = SamplingParams(
        temperature=0.0,
        max_tokens=STRESS_MAX_TOKENS,
        ignore_eos=True,
        logprobs=logprobs,
    )
    last_logprobs: dict[str, object] = {}
    preempted_before = _counter(llm, "vllm:num_preemptions")
    ids = [f"stress-{i}" for i in range(STRESS_REQUESTS)]
    to_abort = {rid for i, rid in enumerate(ids) if i % ABORT_EVERY == ABORT_EVERY - 1}
    for i, rid in enumerate(ids):
        engine.add_request(rid, inputs[i % len(inputs)], params)
    outcome: dict[str, dict] = {
        rid: {"tokens": [], "finished": False, "finish_reason": None} for rid in ids
    }
    aborted: set[str] = set()
    after_abort: dict[str, int] = {}
    steps = 0
    t0 = time.perf_counter()
    while engine.has_unfinished_requests():
        steps += 1
        if steps > 20000:
            raise RuntimeError("stress workload did not finish in 20000 steps")
        for out in engine.step():
            rid = out.request_id
            rec = outcome[rid]
            if rid in aborted:
                after_abort[rid] = after_abort.get(rid, 0) + 1
            rec["tokens"] = list(out.outputs[0].token_ids)
            if logprobs:
                last_logprobs[rid] = out.outputs[0].logprobs
            rec["finished"] = out.finished
            rec["finish_reason"] = out.outputs[0].finish_reason
        ready = [
            rid
            for rid in to_abort - aborted
            if len(outcome[rid]["tokens"]) >= ABORT_AFTER_TOKENS
        ]
        if ready:
            engine.abort_request(ready)
            aborted.update(ready)
    gen_s = time.perf_counter() - t0
    if logprobs:
        for rid, rec in outcome.items():
            rec["logprobs"] = _top_logprobs(last_logprobs.get(rid))
    return {
        "gen_s": round(gen_s, 3),
        "steps": steps,
        "requests": outcome,
        "aborted": sorted(aborted),
        "outputs_after_abort": after_abort,
        "preemptions": _counter(llm, "vllm:num_preemptions") - preempted_before,
        "unfinished_after": engine.has_unfinished_requests(),
    }


def run_sample(llm, inputs: list[dict]) -> dict:
    """Temperature 1, two seeds per prompt; the spec-decode counters."""
    from vllm import SamplingParams

    params = [
        SamplingParams(temperature=1.0, max_tokens=SAMPLE_MAX_TOKENS, seed=seed)
        for seed in (1, 2)
        for _ in inputs
    ]
    before = _metric_snapshot(llm)
    outs = llm.generate(inputs + inputs, params, use_tqdm=False)
    return {
        "token_ids": [list(o.outputs[0].token_ids) for o in outs],
        "counters": _delta(before, _metric_snapshot(llm)),
    }


def _host_step_ms(worker) -> float | None:
    """The host time per engine step the MRV2 DSL stop rule last received
    (0.0 until one is measured), or None without that rule."""
    speculator = getattr(worker.model_runner, "speculator", None)
    host_ms = getattr(getattr(speculator, "confidence_exit", None), "host_ms", None)
    if host_ms is None:
        return None
    from vllm.utils.gpu_sync_debug import gpu_sync_allowed

    with gpu_sync_allowed():
        return float(host_ms[0])


def _draft_step_ceilings_ms(llm) -> dict[int, float | None] | None:
    """The ceiling (ms) each batch size of the in-process scheduler's served
    draft width prices a draft step at, or None without that controller (or
    without an in-process engine core to read it from)."""
    engine_core = getattr(llm.llm_engine.engine_core, "engine_core", None)
    scheduler = getattr(engine_core, "scheduler", None)
    controller = getattr(scheduler, "draft_width_controller", None)
    if controller is None:
        return None
    return {
        size.rows: None
        if size.draft_step_ceiling is None
        else 1e3 * size.draft_step_ceiling
        for size in controller._state
    }


def run_case(case: dict, models: str, prompts: list[list[int]]) -> dict:
    from vllm import LLM, SamplingParams
    from vllm.distributed import cleanup_dist_env_and_memory

    kwargs = dict(
        model=os.path.join(models, case.get("target", "smollm2-135m")),
        max_model_len=1024,
        # A fixed, small KV cache: no memory profiling (engines of other
        # groups may share the GPU), and the stress workload preempts.
        gpu_memory_utilization=0.1,
        kv_cache_memory_bytes=192 << 20,
        # At most the stress workload's requests in flight: fewer CUDA graph
        # sizes to capture and to time at start-up (session 15: engines
        # started in 7-161 s with 16 on the GPU).
        max_num_seqs=STRESS_REQUESTS,
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
        inputs = [{"prompt_token_ids": p} for p in prompts]
        # Warm-up request so that timings exclude first-call compilation.
        llm.generate(inputs[:1], SamplingParams(max_tokens=8), use_tqdm=False)
        result = {
            "name": case["name"],
            "ok": True,
            "init_s": round(init_s, 2),
            "async_scheduling": bool(config.scheduler_config.async_scheduling),
            "enforce_eager": bool(config.model_config.enforce_eager),
            "cudagraph_mode": str(config.compilation_config.cudagraph_mode),
        }
        for workload in case.get("workloads", ["greedy"]):
            if workload == "greedy":
                result.update(run_greedy(llm, case, inputs))
            elif workload == "stress":
                result["stress"] = run_stress(
                    llm, inputs, case.get("stress_logprobs")
                )
            elif workload == "sample":
                result["sample"] = run_sample(llm, inputs)
            else:
                raise ValueError(f"unknown workload {workload!r}")
        result["host_step_ms"] = llm.collective_rpc(_host_step_ms)[0]
        result["draft_step_costs_ms"] = llm.collective_rpc("get_draft_step_costs")[0]
        result["draft_step_ceilings_ms"] = _draft_step_ceilings_ms(llm)
        return result
    finally:
        del llm
        gc.collect()
        cleanup_dist_env_and_memory()


def main(argv: list[str]) -> int:
    spec = json.load(open(argv[0]))
    _count_v2_draft_forwards()
    _count_v2_verify_slots()
    _count_v2_target_dispatch()
    _count_v1_verify_slots()
    results = []
    for case in spec["cases"]:
        try:
            results.append(run_case(case, spec["models"], spec["prompts"]))
        except Exception as e:  # recorded per case; the test reports it
            traceback.print_exc()
            results.append({"name": case["name"], "ok": False, "error": repr(e)[:2000]})
        print(
            json.dumps(
                {
                    k: v
                    for k, v in results[-1].items()
                    if k not in ("token_ids", "stress", "sample")
                }
            ),
            flush=True,
        )
        with open(argv[1], "w") as f:
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
