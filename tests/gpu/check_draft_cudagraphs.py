# SPDX-License-Identifier: Apache-2.0
"""GPU check for issue 7: CUDA graphs for BOTH passes of the MRV2 standalone
draft model (wip/draft-graphs2): the first draft pass (accepted tokens +
correction token, K+2 tokens per request in uniform decode batches) and the
draft decode steps. Not a pytest test; run it by hand on the GPU host from
the vLLM worktree under test:

    DSL_GPU_MODELS=/tmp/gpuhost/models \\
        python check_draft_cudagraphs.py [--out result.json] [--only a,b]

DSL_GPU_MODELS holds the HF checkpoints (bf16) ``smollm2-135m`` (target) and
``smollm2-l4`` (draft; DSL_GPU_DRAFT overrides the folder name). V2 model
runner, max_model_len=1024, gpu_memory_utilization=0.3, max_num_seqs=16.

Every engine runs in its OWN subprocess (this file with --engine NAME), so a
crash (CUDA error, abort) loses only that engine; the parent rewrites --out
after every engine, so partial results survive a later crash or a kill.
Inside the child the engine is in-process (VLLM_ENABLE_V1_MULTIPROCESSING=0)
so the probes reach the model runner.

Engines, in priority order (each only if DSL_GPU_BUDGET_S, default 300 s,
has not elapsed when it would start; each killed after DSL_GPU_ENGINE_TIMEOUT_S,
default 170 s, or when the run reaches DSL_GPU_HARD_LIMIT_S, default 345 s):
  sd_k4                  SD K=4, draft graphs ON (target graphs ON)
  sd_k4_drafteager       same, speculative_config.enforce_eager=True: draft
                         eager, target graphs unchanged
  dsl_t0.6_k8            DSL tau=0.6 K=8, draft graphs ON
  dsl_t0.6_k8_drafteager same, draft eager
  target                 target only (TPOT reference)
  sd_k2                  extra timing point if time is left

(a) Correctness (greedy, 16 prompts: all 64 tokens, then staggered 64..34
    tokens so the batch shrinks through padded graph buckets): each graph
    engine vs its draft-eager twin must give identical token ids (target
    numerics are the same in both, and greedy verification makes the output
    the target's), and >= 98% identical proposed drafts (100% expected; a
    padded graph batch may flip a rare bf16 near-tie in the draft).
(b) Timing, one request at a time (DSL_GPU_TIMING_PROMPTS prompts, 64
    tokens): per-step CUDA-event times of the target step (execute_model),
    the draft first pass (split into replayed / eager passes) and the draft
    decode steps; TPOT = (latency(64) - latency(1)) / 63.
(c) JSON to --out: {"summary": ..., "results": {engine: ...}}.

Graph use: in graph engines every draft decode step and most first passes
(all uniform decode steps) must replay a graph; draft-eager engines must
replay none (the enforce_eager knob works). Exit code 0 iff every check that
ran passed and no engine failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

T_START = time.perf_counter()
MODELS = os.environ.get("DSL_GPU_MODELS", "/tmp/gpuhost/models")
TARGET = os.environ.get("DSL_GPU_TARGET", "smollm2-135m")
DRAFT = os.environ.get("DSL_GPU_DRAFT", "smollm2-l4-kd")
BUDGET_S = float(os.environ.get("DSL_GPU_BUDGET_S", "300"))
ENGINE_TIMEOUT_S = float(os.environ.get("DSL_GPU_ENGINE_TIMEOUT_S", "170"))
# No engine runs past this point of the whole run (kept under 6 minutes).
HARD_LIMIT_S = float(os.environ.get("DSL_GPU_HARD_LIMIT_S", "345"))
NUM_TIMING_PROMPTS = int(os.environ.get("DSL_GPU_TIMING_PROMPTS", "16"))
TAU = 0.6

PROMPTS = [
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Explain how a hash table works and when you would use one.",
    'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n',
    "List five tips for staying productive while working from home.",
    "What is the difference between a process and a thread?",
    "Translate to French: The weather is nice today and we are going to the park.",
    "import numpy as np\n\ndef normalize(x):\n    # Scale x to zero mean and unit variance\n",
    "Summarize the plot of Romeo and Juliet in a few sentences.",
    "Give me a recipe for a simple tomato pasta sauce.",
    "Why is the sky blue? Answer for a ten year old.",
    "class Stack:\n    def __init__(self):\n",
    "Describe the water cycle step by step.",
    "What are the main causes of the French Revolution?",
    "Write a haiku about autumn leaves.",
    "How do vaccines train the immune system?",
    "SELECT name, COUNT(*) FROM orders GROUP BY name ORDER BY",
]


# --------------------------------------------------------------------------
# Instrumentation (child process; in-process engine)
# --------------------------------------------------------------------------


class Probe:
    """CUDA-event timings and call counters, reset per measured phase."""

    def __init__(self) -> None:
        self.record_drafts = False
        self.reset()

    def reset(self) -> None:
        self.prefill: list = []  # (start, end, replayed)
        self.decode: list = []  # (start, end, num_steps)
        self.target: list = []  # (start, end)
        self.decode_steps = 0
        self.graph_replays = 0  # every draft graph replay (both passes)
        self.prefill_replays = 0  # first-pass replays
        self.eager_draft_forwards = 0
        self.drafts: list = []

    def summary(self) -> dict:
        import torch

        torch.accelerator.synchronize()

        def ms(pairs):
            return [p[0].elapsed_time(p[1]) for p in pairs]

        pre_graph = ms([p for p in self.prefill if p[2]])
        pre_eager = ms([p for p in self.prefill if not p[2]])
        tgt = ms(self.target)
        dec_ms = [s.elapsed_time(e) for s, e, _ in self.decode]
        dec_steps = sum(n for _, _, n in self.decode)
        return {
            "draft_first_pass_ms_mean": _mean(pre_graph + pre_eager),
            "draft_first_pass_graphed_ms_mean": _mean(pre_graph),
            "draft_first_pass_eager_ms_mean": _mean(pre_eager),
            "draft_first_passes": len(self.prefill),
            "draft_first_pass_replays": self.prefill_replays,
            "draft_decode_step_ms_mean": (
                round(sum(dec_ms) / dec_steps, 4) if dec_steps else None
            ),
            "draft_decode_steps": dec_steps,
            "draft_decode_replays": self.graph_replays - self.prefill_replays,
            "draft_graph_replays": self.graph_replays,
            "draft_eager_forwards": self.eager_draft_forwards,
            "target_execute_ms_mean": _mean(tgt),
            "target_steps": len(tgt),
        }


PROBE = Probe()


def _mean(xs: list) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def install_probes() -> None:
    import torch

    from vllm.v1.worker.gpu import model_runner as mr
    from vllm.v1.worker.gpu.spec_decode.standalone_ar import speculator as sa

    cls = sa.StandaloneARSpeculator

    def event():
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    orig_prefill = cls._prefill

    def _prefill(self, *a, **k):
        replays_before = PROBE.prefill_replays
        s = event()
        out = orig_prefill(self, *a, **k)
        PROBE.prefill.append((s, event(), PROBE.prefill_replays > replays_before))
        return out

    cls._prefill = _prefill

    if hasattr(cls, "_replay_prefill"):
        orig_replay_prefill = cls._replay_prefill

        def _replay_prefill(self, *a, **k):
            PROBE.prefill_replays += 1
            return orig_replay_prefill(self, *a, **k)

        cls._replay_prefill = _replay_prefill

    orig_decode = cls._multi_step_decode

    def _multi_step_decode(self, *a, **k):
        steps_before = PROBE.decode_steps
        s = event()
        out = orig_decode(self, *a, **k)
        PROBE.decode.append((s, event(), PROBE.decode_steps - steps_before))
        return out

    cls._multi_step_decode = _multi_step_decode

    # One call per draft step (0 = first pass).
    orig_publish = cls._publish_step

    def _publish_step(self, step):
        if step >= 1:
            PROBE.decode_steps += 1
        return orig_publish(self, step)

    cls._publish_step = _publish_step

    orig_run_model = cls._run_model

    def _run_model(self, *a, **k):
        PROBE.eager_draft_forwards += 1
        return orig_run_model(self, *a, **k)

    cls._run_model = _run_model

    mgr = sa.SpeculatorCudaGraphManager
    orig_replay = mgr.run_fullgraph

    def run_fullgraph(self, desc):
        PROBE.graph_replays += 1
        return orig_replay(self, desc)

    mgr.run_fullgraph = run_fullgraph

    orig_propose = cls.propose

    def propose(self, *a, **k):
        out = orig_propose(self, *a, **k)
        if PROBE.record_drafts and not k.get("dummy_run", False):
            PROBE.drafts.append(out.tolist())  # syncs: correctness runs only
        return out

    cls.propose = propose

    runner = mr.GPUModelRunner
    orig_execute = runner.execute_model

    def execute_model(self, *a, **k):
        s = event()
        out = orig_execute(self, *a, **k)
        PROBE.target.append((s, event()))
        return out

    runner.execute_model = execute_model


# --------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------


def spec(k: int, tau: float | None = None, draft_eager: bool = False) -> dict:
    s: dict = {
        "method": "draft_model",
        "model": os.path.join(MODELS, DRAFT),
        "num_speculative_tokens": k,
    }
    if tau is not None:
        s["draft_confidence_threshold"] = tau
    if draft_eager:
        # Draft eager, target graphs unchanged.
        s["enforce_eager"] = True
    return s


# Priority order. "correct": correctness phase; "time": timing phase;
# "graphs": whether draft graphs are expected (True) or must be absent.
ENGINES = [
    {"name": "sd_k4", "spec": spec(4), "correct": True, "time": True, "graphs": True},
    {
        "name": "sd_k4_drafteager",
        "spec": spec(4, draft_eager=True),
        "correct": True,
        "time": True,
        "graphs": False,
    },
    {
        "name": "dsl_t0.6_k8",
        "spec": spec(8, TAU),
        "correct": True,
        "time": True,
        "graphs": True,
    },
    {
        "name": "dsl_t0.6_k8_drafteager",
        "spec": spec(8, TAU, draft_eager=True),
        "correct": True,
        "time": True,
        "graphs": False,
    },
    {"name": "target", "spec": None, "time": True},
    {"name": "sd_k2", "spec": spec(2), "time": True, "graphs": True},
]
PAIRS = [
    ("sd_k4", "sd_k4_drafteager"),
    ("dsl_t0.6_k8", "dsl_t0.6_k8_drafteager"),
]


def make_llm(cfg: dict):
    from vllm import LLM

    kwargs = dict(
        model=os.path.join(MODELS, TARGET),
        max_model_len=1024,
        gpu_memory_utilization=0.3,
        max_num_seqs=16,
        seed=0,
        dtype="bfloat16",
    )
    if cfg.get("spec") is not None:
        kwargs["speculative_config"] = cfg["spec"]
    kwargs.update(cfg.get("engine", {}))
    return LLM(**kwargs)


def inputs(prompts: list[str]) -> list[dict]:
    return [{"prompt": p} for p in prompts]


def correctness_run(llm) -> dict:
    from vllm import SamplingParams

    PROBE.reset()
    PROBE.record_drafts = True
    try:
        same = llm.generate(
            inputs(PROMPTS),
            SamplingParams(temperature=0.0, max_tokens=64, ignore_eos=True),
            use_tqdm=False,
        )
        # Requests finish one by one: the batch shrinks through sizes that
        # are padded to the next captured bucket.
        staggered = llm.generate(
            inputs(PROMPTS),
            [
                SamplingParams(temperature=0.0, max_tokens=64 - 2 * i, ignore_eos=True)
                for i in range(len(PROMPTS))
            ],
            use_tqdm=False,
        )
    finally:
        PROBE.record_drafts = False
    return {
        "tokens": [list(o.outputs[0].token_ids) for o in same]
        + [list(o.outputs[0].token_ids) for o in staggered],
        "drafts": PROBE.drafts,
        "probe": PROBE.summary(),
    }


def timing_run(llm) -> dict:
    from vllm import SamplingParams

    prompts = inputs(PROMPTS[:NUM_TIMING_PROMPTS])
    full = SamplingParams(temperature=0.0, max_tokens=64, ignore_eos=True)
    one = SamplingParams(temperature=0.0, max_tokens=1, ignore_eos=True)
    llm.generate(prompts[:2], full, use_tqdm=False)  # warm-up
    lat64, lat1 = [], []
    PROBE.reset()
    for p in prompts:
        t0 = time.perf_counter()
        llm.generate([p], full, use_tqdm=False)
        lat64.append(time.perf_counter() - t0)
    probe = PROBE.summary()
    for p in prompts:
        t0 = time.perf_counter()
        llm.generate([p], one, use_tqdm=False)
        lat1.append(time.perf_counter() - t0)
    tpot_ms = (sum(lat64) - sum(lat1)) / len(prompts) / 63 * 1e3
    return {
        "tpot_ms": round(tpot_ms, 4),
        "latency_64_ms_mean": round(sum(lat64) / len(lat64) * 1e3, 3),
        "latency_1_ms_mean": round(sum(lat1) / len(lat1) * 1e3, 3),
        **probe,
    }


def child_main(name: str, out_path: str) -> int:
    """Run one engine (this process) and write its result JSON."""
    cfg = next(c for c in ENGINES if c["name"] == name)
    res: dict = {"name": name, "ok": False}

    def flush() -> None:
        with open(out_path + ".tmp", "w") as f:
            json.dump(res, f)
        os.replace(out_path + ".tmp", out_path)

    try:
        install_probes()
        t0 = time.perf_counter()
        llm = make_llm(cfg)
        res["init_s"] = round(time.perf_counter() - t0, 1)
        vc = llm.llm_engine.vllm_config
        res["cudagraph_mode"] = str(vc.compilation_config.cudagraph_mode)
        res["async_scheduling"] = bool(vc.scheduler_config.async_scheduling)
        sc = vc.speculative_config
        res["spec_enforce_eager"] = None if sc is None else sc.enforce_eager
        flush()
        if cfg.get("correct"):
            res["correct"] = correctness_run(llm)
            flush()
        if cfg.get("time"):
            res["timing"] = timing_run(llm)
        res["ok"] = True
        res["total_s"] = round(time.perf_counter() - t0, 1)
    except BaseException as e:  # report, then exit non-zero
        traceback.print_exc()
        res["error"] = repr(e)[:2000]
    flush()
    sys.stdout.flush()
    # Skip interpreter teardown of the engine (can hang); results are on disk.
    os._exit(0 if res["ok"] else 1)


# --------------------------------------------------------------------------
# Parent: one subprocess per engine, checks, JSON
# --------------------------------------------------------------------------


def run_engine_subprocess(cfg: dict, work_dir: str) -> dict:
    name = cfg["name"]
    out_path = os.path.join(work_dir, f"{name}.json")
    log_path = os.path.join(work_dir, f"{name}.log")
    if os.path.exists(out_path):
        os.remove(out_path)
    t0 = time.perf_counter()
    rc: int | str
    with open(log_path, "w") as log:
        try:
            proc = subprocess.run(
                [
                    sys.executable,
                    os.path.abspath(__file__),
                    "--engine",
                    name,
                    "--engine-out",
                    out_path,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=max(
                    30.0,
                    min(
                        ENGINE_TIMEOUT_S, HARD_LIMIT_S - (time.perf_counter() - T_START)
                    ),
                ),
            )
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    res: dict = {"name": name, "ok": False}
    if os.path.exists(out_path):
        with open(out_path) as f:
            res = json.load(f)
    res["returncode"] = rc
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    if rc != 0:
        res["ok"] = False
        with open(log_path, errors="replace") as f:
            res["log_tail"] = f.read()[-3000:]
        res.setdefault("error", f"subprocess exit {rc}")
    res["log"] = log_path
    return res


def compare(results: dict, a: str, b: str) -> dict | None:
    ra = results.get(a, {}).get("correct")
    rb = results.get(b, {}).get("correct")
    if not ra or not rb:
        return None
    ta, tb = ra["tokens"], rb["tokens"]
    mismatched = [i for i, (x, y) in enumerate(zip(ta, tb)) if x != y]
    out: dict = {
        "pair": f"{a} vs {b}",
        "sequences": len(ta),
        "token_identical": not mismatched and len(ta) == len(tb),
        "mismatched_sequences": mismatched,
    }
    if mismatched:
        i = mismatched[0]
        first = next(
            (j for j, (x, y) in enumerate(zip(ta[i], tb[i])) if x != y),
            min(len(ta[i]), len(tb[i])),
        )
        out["first_mismatch"] = {"sequence": i, "position": first}
    da, db = ra["drafts"], rb["drafts"]
    out["draft_rounds"] = [len(da), len(db)]
    out["drafts_identical"] = da == db
    pairs = [
        (x, y)
        for ra_, rb_ in zip(da, db)
        for xa, yb in zip(ra_, rb_)
        for x, y in zip(xa, yb)
    ]
    out["draft_token_match_rate"] = (
        round(sum(x == y for x, y in pairs) / len(pairs), 5) if pairs else None
    )
    if da != db:
        out["first_draft_mismatch_round"] = next(
            (j for j, (x, y) in enumerate(zip(da, db)) if x != y),
            min(len(da), len(db)),
        )
    out["ok"] = out["token_identical"] and (
        out["draft_token_match_rate"] is None or out["draft_token_match_rate"] >= 0.98
    )
    return out


def graph_use(results: dict) -> dict:
    out = {}
    for cfg in ENGINES:
        if "graphs" not in cfg:
            continue
        probe = results.get(cfg["name"], {}).get("correct", {}).get("probe")
        if probe is None:
            probe = results.get(cfg["name"], {}).get("timing")
        if not probe:
            continue
        entry = {
            "first_passes": probe["draft_first_passes"],
            "first_pass_replays": probe["draft_first_pass_replays"],
            "decode_steps": probe["draft_decode_steps"],
            "decode_replays": probe["draft_decode_replays"],
            "eager_draft_forwards": probe["draft_eager_forwards"],
        }
        if cfg["graphs"]:
            entry["ok"] = (
                probe["draft_first_pass_replays"] > 0
                and probe["draft_decode_replays"] == probe["draft_decode_steps"]
            )
        else:
            entry["ok"] = probe["draft_graph_replays"] == 0
        entry["expected_graphs"] = cfg["graphs"]
        out[cfg["name"]] = entry
    return out


def build_summary(results: dict, skipped: list[str]) -> dict:
    checks = [c for c in (compare(results, a, b) for a, b in PAIRS) if c]
    use = graph_use(results)
    timing = {n: r["timing"] for n, r in results.items() if "timing" in r}
    target_tpot = timing.get("target", {}).get("tpot_ms")
    for t in timing.values():
        if target_tpot and t.get("tpot_ms"):
            t["speedup_vs_target"] = round(target_tpot / t["tpot_ms"], 3)
    # Graphed vs eager draft, per pair (same target graphs).
    keys = (
        "tpot_ms",
        "target_execute_ms_mean",
        "draft_first_pass_ms_mean",
        "draft_first_pass_graphed_ms_mean",
        "draft_first_pass_eager_ms_mean",
        "draft_decode_step_ms_mean",
    )
    timing_compare = {
        f"{a} vs {b}": {k: [timing[a].get(k), timing[b].get(k)] for k in keys}
        for a, b in PAIRS
        if a in timing and b in timing
    }
    failed = [n for n, r in results.items() if not r.get("ok")]
    ok = (
        not failed
        and all(c["ok"] for c in checks)
        and all(u["ok"] for u in use.values())
    )
    return {
        "ok": ok,
        "elapsed_s": round(time.perf_counter() - T_START, 1),
        "models": {"target": TARGET, "draft": DRAFT, "dir": MODELS},
        "checks": checks,
        "graph_use": use,
        "timing_compare_graphed_vs_drafteager": timing_compare,
        "timing": timing,
        "failed_engines": {n: results[n].get("error") for n in failed},
        "skipped_for_budget": skipped,
        "init_s": {n: r.get("init_s") for n, r in results.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="check_draft_cudagraphs.json")
    parser.add_argument("--only", default="", help="comma-separated engine names")
    parser.add_argument("--engine", default="", help=argparse.SUPPRESS)
    parser.add_argument("--engine-out", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.engine:
        return child_main(args.engine, args.engine_out)

    for name in (TARGET, DRAFT):
        if not os.path.isdir(os.path.join(MODELS, name)):
            print(
                f"missing checkpoint {os.path.join(MODELS, name)} "
                "(set DSL_GPU_MODELS / DSL_GPU_DRAFT)",
                file=sys.stderr,
            )
            return 2

    work_dir = os.path.abspath(args.out) + ".d"
    os.makedirs(work_dir, exist_ok=True)
    only = {n for n in args.only.split(",") if n}
    results: dict[str, dict] = {}
    skipped: list[str] = []

    def write(summary: dict) -> None:
        with open(args.out + ".tmp", "w") as f:
            json.dump({"summary": summary, "results": results}, f)
        os.replace(args.out + ".tmp", args.out)

    for cfg in ENGINES:
        if only and cfg["name"] not in only:
            continue
        if time.perf_counter() - T_START > BUDGET_S:
            skipped.append(cfg["name"])
            continue
        res = run_engine_subprocess(cfg, work_dir)
        results[cfg["name"]] = res
        line = {k: v for k, v in res.items() if k not in ("correct", "log_tail")}
        if "correct" in res:
            line["correct_probe"] = res["correct"]["probe"]
        print("ENGINE " + json.dumps(line), flush=True)
        if not res.get("ok"):
            print(res.get("log_tail", ""), flush=True)
        write(build_summary(results, skipped))  # partial results survive

    summary = build_summary(results, skipped)
    write(summary)
    print("SUMMARY " + json.dumps(summary, indent=1), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
