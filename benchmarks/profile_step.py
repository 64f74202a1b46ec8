"""Where an engine step's time goes, arm by arm: host Python, launches, GPU.

    python benchmarks/profile_step.py --models DIR --prompts DIR --out DIR \\
        [--arms sd4,dsl4t0,...] [--concurrency 1] [--requests 8] [--max-tokens 128]

Each arm runs in a process of its own with the engine core in that process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so the profilers see the scheduler,
the model runner and the speculator. Per arm, after a warm-up:

1. a timed closed-loop run (mean TPOT, engine steps, wall per engine step);
2. the same run under cProfile (``<arm>.prof``: host Python per function);
3. a short run under the torch profiler (``<arm>.ops.txt``: host launches by
   kind per engine step, GPU kernel time per engine step).

With ``--profile-window START:STEPS`` the torch profiler instead records
engine steps ``START`` to ``START + STEPS - 1`` of one run of ``--concurrency``
requests started together (``--max-tokens`` each): with enough tokens, steps
where every request decodes, the "full steps" of ``full_steps.py``. Per arm it
then records (GPU activity only, so the host runs at its own pace) the GPU
kernel time per step by kernel name, the GPU's busy time per step (the union
of the kernels' intervals), its span (first kernel's start to last one's end),
the window's wall time per step, and where the GPU sat idle: each gap of over
1 µs between the busy intervals, by the kernels on either side (``A -> B``),
and on a GPU the part of each gap before the host issued ``B`` (host-late:
from the runtime call of ``B``'s correlation id in the profiler's Chrome
trace; the rest of a gap had ``B`` queued behind a device-side dependency),
and the in-graph part, where ``A`` and ``B`` ran in one graph launch.
``--profile-repeats R`` profiles the window in R runs (waves) of the engine:
the figures are their mean, and each run's busy, span and wall time are kept,
so the report can give a difference with its run-to-run spread.
``report.txt`` lists, for each arm against ``--base`` (default: the SD arm
with the arm's K), the difference in busy, span and wall time (with a 95%
interval over the runs where R >= 2), the kernels whose time per step differs
most and the idle gaps that differ most: whether a per-step cost is GPU work
(and which) or the GPU waiting (and between which kernels).

The parent then writes ``report.txt``: per arm the per-step figures, and for
every arm but the base the functions whose host time per engine step differs
most from the base's (cProfile's own time, so nothing is counted twice;
built-in functions named without their address, so two processes' rows
match).
cProfile slows Python down several-fold: its per-step times rank the costs,
the timed run's TPOT is the real one. Not a benchmark: one run per arm, no
interleaving (``run.py`` is the benchmark).

Arms: ``target``, ``sd<K>``, ``dsl<K>`` (DSL's cost-aware stop at cap K,
``"dynamic_lookahead": true``, no threshold), ``dsl<K>t<tau>`` (DSL with the
per-row floor tau, e.g. ``dsl4t0``, ``dsl8t0.4``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cell import engine_args, run_workload  # noqa: E402
from run import load_prompts, model_path  # noqa: E402

ARM = re.compile(r"^(target|sd(\d+)(av)?|dsl(\d+)(?:t([0-9.]+))?(av)?)"
                 r"(?:@(\d+-\d+:\d+(?:/\d+-\d+:\d+)*))?$")
# Host calls the torch profiler records, per engine step.
LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch",
            "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamWaitEvent",
            "cudaEventRecord", "cudaEventSynchronize", "cudaStreamSynchronize")


def add_model_args(ap: argparse.ArgumentParser, dataset: str) -> None:
    """The model pair and prompts options ``profile_step.py`` and ``abab.py``
    share."""
    ap.add_argument("--models", required=True)
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--draft", default="smollm2-l4-kd")
    ap.add_argument("--prompts", required=True, type=Path)
    ap.add_argument("--dataset", default=dataset)


def parse_arm(name: str) -> dict:
    """``target``, ``sd<K>``, ``dsl<K>`` or ``dsl<K>t<tau>``, the last three
    optionally with ``av``, all but target optionally with a batch-size
    schedule for K
    (``num_speculative_tokens_per_batch_size``): ``@<lo>-<hi>:<K>/...``, e.g.
    ``dsl8t0.5@1-7:8/8-64:0`` drafts up to 8 with fewer than 8 requests
    scheduled and nothing from 8 on.

    ``av`` adds upstream's adaptive verification
    (``"enable_adaptive_verification": true``: each step verifies the draft
    budget its cost tables and online acceptance estimate pick). The series
    refuses it with DSL; ``dsl<K>av`` needs
    ``patches-wip/dsl-adaptive-verification`` on top.

    ``dynamic`` is True for both DSL forms: ``dsl<K>`` is DSL's cost-aware
    stop alone (``"dynamic_lookahead": true``, ``tau`` None), ``dsl<K>t<tau>``
    sets the floor ``draft_confidence_threshold`` tau (which turns DSL on by
    itself).

    ``<arm>+<label>`` is the same arm under another name, for two variants of
    one configuration in one run; ``abab.py --arm-options`` gives a label its
    engine overrides (e.g. sync scheduling) and worker call."""
    base_name, _, label = name.partition("+")
    if "+" in name and not re.fullmatch(r"[A-Za-z0-9_]+", label):
        raise SystemExit(f"--arms: arm {name!r}: the label after '+' must be "
                         "letters, digits or _")
    m = ARM.match(base_name)
    if m is None or (base_name.startswith("target") and m.group(7)):
        raise SystemExit(f"--arms: unknown arm {name!r} (target, sd<K>, dsl<K>, "
                         "dsl<K>t<tau>, any but target with av, "
                         "@<lo>-<hi>:<K>/...)")
    arm = _parse_base(name, m)
    arm["label"] = label or None
    return arm


def _parse_base(name: str, m: re.Match) -> dict:
    if m.group(1) == "target":
        return {"name": name, "k": 0, "tau": None, "schedule": None,
                "dynamic": False, "av": False}
    schedule = None
    if m.group(7):
        schedule = [[int(x) for x in part.replace(":", "-").split("-")]
                    for part in m.group(7).split("/")]
    if m.group(2):
        return {"name": name, "k": int(m.group(2)), "tau": None,
                "schedule": schedule, "dynamic": False, "av": bool(m.group(3))}
    tau = float(m.group(5)) if m.group(5) is not None else None
    return {"name": name, "k": int(m.group(4)), "tau": tau,
            "schedule": schedule, "dynamic": True, "av": bool(m.group(6))}


def arm_cell(arm: dict, models: str, target: str, draft: str,
             engine: dict) -> dict:
    """The ``cell.py`` cell (engine part) of a parsed arm."""
    return {"model": model_path(models, target),
            "draft": model_path(models, draft) if arm["k"] else None,
            "k": arm["k"], "tau": arm["tau"], "schedule": arm["schedule"],
            "dynamic": arm.get("dynamic", False), "av": arm.get("av", False),
            "engine": engine}


class StepCounter:
    """Counts ``engine.step()`` calls; ``on_step(n)``, where set, is called
    before the ``n``-th (from 1)."""

    def __init__(self, engine):
        self.n = 0
        self.on_step = None
        self._step = engine.step

        def step():
            self.n += 1
            if self.on_step is not None:
                self.on_step(self.n)
            return self._step()
        engine.step = step


def parse_window(text: str) -> tuple[int, int]:
    """``START:STEPS`` of ``--profile-window``, both >= 1."""
    try:
        start, steps = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--profile-window: expected START:STEPS, e.g. 40:30, got {text!r}"
        ) from None
    if start < 1 or steps < 1:
        raise argparse.ArgumentTypeError(
            f"--profile-window: START and STEPS must be >= 1, got {text!r}")
    return start, steps


def positive_int(text: str) -> int:
    """A whole number >= 1 (``--profile-repeats``)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"--profile-repeats: expected a whole number >= 1, got {text!r}")
    return int(text)


def kernel_table(kernels: list[tuple], nsteps: int, top: int = 60) -> dict:
    """GPU kernels ``(name, start_us, end_us, ...)`` of ``nsteps`` engine steps:
    the time per step by kernel name (the ``top`` names by time), the busy
    time per step (the union of their intervals: overlapping kernels count
    once) and the span from the first kernel's start to the last one's end,
    per step."""
    by_name: dict[str, float] = {}
    for name, start, end, *_ in kernels:
        by_name[name] = by_name.get(name, 0.0) + (end - start)
    busy = 0.0
    reach = None
    for _, start, end, *_ in sorted(kernels, key=lambda k: k[1]):
        if reach is None or start >= reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    span = (max(k[2] for k in kernels) - min(k[1] for k in kernels)
            if kernels else 0.0)
    ranked = sorted(by_name.items(), key=lambda kv: -kv[1])[:top]
    return {"kernels_us_per_step": {k: v / nsteps for k, v in ranked},
            "kernel_us_per_step": sum(by_name.values()) / nsteps,
            "busy_us_per_step": busy / nsteps,
            "span_us_per_step": span / nsteps}


def short_kernel_name(name: str, width: int = 90) -> str:
    """A kernel's name without ``void `` and its argument list, cut to
    ``width``; the template arguments stay, since they tell apart kernels of
    one template (``cutlass::device_kernel<flash::FlashAttnFwdSm90<...`` and
    ``cutlass::device_kernel<flash::FlashAttnFwdCombine<...``)."""
    name = name.removeprefix("void ")
    depth = 0
    for i, ch in enumerate(name):
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0 and i > 0:
            name = name[:i]
            break
    return name[:width]


def kernel_gaps(kernels: list[tuple], nsteps: int,
                min_gap_us: float = 1.0, top: int = 30) -> dict:
    """Where the GPU sat idle in one window of ``nsteps`` steps: each gap of
    over ``min_gap_us`` between the union of the kernels' intervals, keyed by
    the kernel that ended last before it and the one that starts it
    (``short_kernel_name``, ``A -> B``); µs per step and gaps per step, the
    ``top`` keys by time.

    Kernels are ``(name, start_us, end_us)``, or ``(name, start_us, end_us,
    launch_us, correlation)`` from ``trace_kernels``: then each gap's
    **host-late** part is kept too, the part of it before the host issued
    ``B`` (``launch_us``, clamped to the gap): the GPU waiting for the host.
    The rest of a gap had ``B`` queued (a device-side wait: a graph's or
    stream's dependency); the **in-graph** part is the gaps whose ``A`` and
    ``B`` ran in one host launch (one correlation id: one graph launch), a
    wait the graph itself holds. A gap whose ``B`` has no known launch counts
    as not host-late, and ``launch_known`` is the share of the idle time
    whose ``B`` had one."""
    time_of: dict[str, float] = {}
    count_of: dict[str, int] = {}
    late_of: dict[str, float] = {}
    in_graph_of: dict[str, float] = {}
    known = 0.0
    reach = None
    last = ""
    last_corr = None
    for kernel in sorted(kernels, key=lambda k: k[1]):
        name, start, end = kernel[:3]
        gap = start - reach if reach is not None else 0.0
        if gap > min_gap_us:
            key = f"{short_kernel_name(last)} -> {short_kernel_name(name)}"
            time_of[key] = time_of.get(key, 0.0) + gap
            count_of[key] = count_of.get(key, 0) + 1
            launch = kernel[3] if len(kernel) > 3 else None
            corr = kernel[4] if len(kernel) > 4 else None
            if launch is not None:
                known += gap
                late_of[key] = (late_of.get(key, 0.0)
                                + min(max(launch - reach, 0.0), gap))
            if corr is not None and corr == last_corr:
                in_graph_of[key] = in_graph_of.get(key, 0.0) + gap
        if reach is None or end > reach:
            reach, last = end, name
            last_corr = kernel[4] if len(kernel) > 4 else None
    ranked = sorted(time_of.items(), key=lambda kv: -kv[1])[:top]
    idle = sum(time_of.values())
    out = {"gaps_us_per_step": {k: v / nsteps for k, v in ranked},
           "gaps_per_step": {k: count_of[k] / nsteps for k, _ in ranked},
           "idle_us_per_step": idle / nsteps}
    if any(len(k) > 3 for k in kernels):
        out["host_late_us_per_step"] = sum(late_of.values()) / nsteps
        out["gaps_host_late_us_per_step"] = {k: late_of.get(k, 0.0) / nsteps
                                             for k, _ in ranked}
        out["launch_known"] = known / idle if idle else 1.0
        out["gaps_in_graph_us_per_step"] = {k: in_graph_of.get(k, 0.0) / nsteps
                                            for k, _ in ranked}
    return out


# Chrome-trace categories: the host calls that issue GPU work, and that work.
_HOST_CALLS = ("cuda_runtime", "cuda_driver")
_GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")


def trace_kernels(trace: dict) -> list[tuple]:
    """The GPU work of a torch profiler Chrome trace (``export_chrome_trace``:
    kernels, memcpys, memsets) as ``(name, start_us, end_us, launch_us,
    correlation)``: ``launch_us`` is the start of the host call of the same
    correlation id that issued it (a kernel launch, a memcpy, or the
    ``cudaGraphLaunch`` of the graph it ran in), None where the trace has
    none (and then no correlation either)."""
    launch: dict[int, float] = {}
    work = []
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        corr = (e.get("args") or {}).get("correlation")
        if cat in _HOST_CALLS and corr is not None:
            launch[corr] = float(e["ts"])
        elif cat in _GPU_WORK:
            start = float(e["ts"])
            work.append((e["name"], start, start + float(e.get("dur", 0.0)), corr))
    return [(n, s, t, launch.get(c), c if c in launch else None)
            for n, s, t, c in work]


def window_summary(windows: list[tuple[list[tuple], int, float]], top: int = 60,
                   run_gaps: int = 8) -> dict:
    """The window figures over one or more profiled runs ``(kernels, steps,
    wall_s)`` (kernels as ``kernel_gaps`` takes them: with launch times and
    correlation ids, from ``trace_kernels``, the gaps' host-late and
    in-graph parts too): kernel time by name, busy, span, idle gaps (and
    those parts) and wall
    time per step, each the mean over the runs (steps-weighted), and under
    ``"runs"`` each run's busy, span, idle and wall time per step (its
    host-late time, and its ``run_gaps`` largest gaps), so one odd run shows
    as one."""
    nsteps = sum(n for _, n, _ in windows)
    runs = []
    by_name: dict[str, float] = {}
    gaps: dict[str, float] = {}
    gap_counts: dict[str, float] = {}
    late: dict[str, float] = {}
    in_graph: dict[str, float] = {}
    late_steps = 0
    for kernels, n, wall in windows:
        t = kernel_table(kernels, n, top=len(kernels) or 1)
        g = kernel_gaps(kernels, n, top=len(kernels) or 1)
        run = {"steps": n, "wall_us_per_step": 1e6 * wall / n,
               **{k: t[k] for k in ("busy_us_per_step", "span_us_per_step",
                                    "kernel_us_per_step")},
               "idle_us_per_step": g["idle_us_per_step"],
               "gaps_us_per_step": dict(list(g["gaps_us_per_step"].items())[:run_gaps])}
        if "host_late_us_per_step" in g:
            run["host_late_us_per_step"] = g["host_late_us_per_step"]
            run["launch_known"] = g["launch_known"]
            for k, v in g["gaps_host_late_us_per_step"].items():
                late[k] = late.get(k, 0.0) + v * n
            for k, v in g["gaps_in_graph_us_per_step"].items():
                in_graph[k] = in_graph.get(k, 0.0) + v * n
            late_steps += n
        runs.append(run)
        for k, v in t["kernels_us_per_step"].items():
            by_name[k] = by_name.get(k, 0.0) + v * n
        for k, v in g["gaps_us_per_step"].items():
            gaps[k] = gaps.get(k, 0.0) + v * n
            gap_counts[k] = gap_counts.get(k, 0.0) + g["gaps_per_step"][k] * n

    def mean(key: str) -> float:
        return sum(r[key] * r["steps"] for r in runs) / nsteps

    ranked = sorted(by_name.items(), key=lambda kv: -kv[1])[:top]
    ranked_gaps = sorted(gaps.items(), key=lambda kv: -kv[1])[:top]
    out = {"torchprof_steps": nsteps,
           "window_wall_us_per_step": mean("wall_us_per_step"),
           "kernels_us_per_step": {k: v / nsteps for k, v in ranked},
           "kernel_us_per_step": mean("kernel_us_per_step"),
           "busy_us_per_step": mean("busy_us_per_step"),
           "span_us_per_step": mean("span_us_per_step"),
           "idle_us_per_step": mean("idle_us_per_step"),
           "gaps_us_per_step": {k: v / nsteps for k, v in ranked_gaps},
           "gaps_per_step": {k: gap_counts[k] / nsteps for k, _ in ranked_gaps},
           "runs": runs}
    if late_steps:
        out["gaps_host_late_us_per_step"] = {
            k: v / late_steps for k, v in sorted(late.items(), key=lambda kv: -kv[1])[:top]}
        out["gaps_in_graph_us_per_step"] = {
            k: v / late_steps
            for k, v in sorted(in_graph.items(), key=lambda kv: -kv[1])[:top]}
    return out


def difference_interval(mine: list[float], theirs: list[float]) -> str:
    """``mean(mine) - mean(theirs)``, with a 95% interval (Welch, normal
    quantile) where both sides have two runs or more: ``+12.3`` or ``+12.3
    [+4.1, +20.5]``."""
    d = statistics.fmean(mine) - statistics.fmean(theirs)
    if len(mine) < 2 or len(theirs) < 2:
        return f"{d:+.1f}"
    se = math.sqrt(statistics.variance(mine) / len(mine)
                   + statistics.variance(theirs) / len(theirs))
    return f"{d:+.1f} [{d - 1.96 * se:+.1f}, {d + 1.96 * se:+.1f}]"


def child(args) -> int:
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    import torch
    from vllm.v1.engine.llm_engine import LLMEngine

    arm = parse_arm(args.arm)
    cell = arm_cell(arm, args.models, args.target, args.draft,
                    json.loads(args.engine))
    prompts = load_prompts(args.prompts, args.dataset, 1024)
    engine = LLMEngine.from_engine_args(engine_args(cell))
    steps = StepCounter(engine)
    c, n = args.concurrency, args.requests
    run_workload(engine, prompts, c, c, 16, None, "warm")

    def measured(tag, max_tokens=args.max_tokens, requests=n):
        before = steps.n
        t0 = time.perf_counter()
        res = run_workload(engine, prompts, c, requests, max_tokens, None, tag)
        return res, steps.n - before, time.perf_counter() - t0

    res, nsteps, wall = measured("timed")
    tpots = [r["tpot"] for r in res["requests"] if r["tpot"]]
    out = {"arm": arm, "concurrency": c, "requests": n,
           "tpot_ms": 1e3 * sum(tpots) / len(tpots), "steps": nsteps,
           "wall_per_step_us": 1e6 * wall / nsteps,
           "tokens": sum(r["num_tokens"] for r in res["requests"]),
           "counters": res["counters"]}

    prof = cProfile.Profile()
    prof.enable()
    _, nsteps, wall = measured("cprofile")
    prof.disable()
    prof.dump_stats(str(args.out / f"{args.arm}.prof"))
    out["cprofile_steps"] = nsteps
    out["cprofile_wall_per_step_us"] = 1e6 * wall / nsteps

    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    if args.profile_window:
        # GPU activity only where there is a GPU: recording every host op
        # slows the host enough to change what the window's wall time says.
        window_activities = ([ProfilerActivity.CUDA] if torch.cuda.is_available()
                             else activities)
        windows = []
        events = []
        for _ in range(args.profile_repeats):
            tp, n, wall = profile_window(engine, steps, args, window_activities,
                                         c, measured)
            run_events = list(tp.events())
            events += run_events
            # On a GPU the trace's kernels (with their launches); the
            # events' where there is no trace.
            kernels = (traced_kernels(tp, args.out / f".{args.arm}.trace.json")
                       if torch.cuda.is_available() else None)
            windows.append((kernels or [(e.name, e.time_range.start, e.time_range.end)
                                        for e in run_events
                                        if e.device_type.name == "CUDA"],
                            n, wall))
        out.update(window_summary(windows))
        nsteps = out["torchprof_steps"]
    else:
        with profile(activities=activities) as tp:
            _, nsteps, _ = measured("torchprof", max_tokens=48,
                                    requests=max(2, c))
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        events = list(tp.events())
    calls: dict[str, int] = {}
    gpu_us = 0.0
    num_kernels = 0
    for e in events:
        if e.name in LAUNCHES:
            calls[e.name] = calls.get(e.name, 0) + 1
        if e.device_type.name == "CUDA":
            gpu_us += e.device_time
            num_kernels += 1
    out["torchprof_steps"] = nsteps
    out["host_calls_per_step"] = {k: v / nsteps for k, v in sorted(calls.items())}
    out["gpu_events_per_step"] = num_kernels / nsteps
    out["gpu_us_per_step"] = gpu_us / nsteps
    # The ops table of the last profiled run.
    (args.out / f"{args.arm}.ops.txt").write_text(
        tp.key_averages().table(sort_by="count", row_limit=80))
    (args.out / f"{args.arm}.json").write_text(json.dumps(out, indent=1))
    return 0


def traced_kernels(tp, path: Path) -> list[tuple] | None:
    """``trace_kernels`` of a stopped torch profiler, through a Chrome trace
    written to ``path`` and removed; None, with a warning, where the trace
    cannot be written or read (the window's other figures stand)."""
    try:
        tp.export_chrome_trace(str(path))
        return trace_kernels(json.loads(path.read_text()))
    except (OSError, ValueError, RuntimeError) as e:
        sys.stderr.write(f"profile_step: no host launch times ({e})\n")
        return None
    finally:
        path.unlink(missing_ok=True)


def profile_window(engine, steps: StepCounter, args, activities, c: int,
                   measured):
    """The torch profiler over engine steps ``START .. START + STEPS - 1`` of
    one run of ``c`` requests (``--profile-window``): the profiler, the steps
    it saw and their wall time (s)."""
    import torch
    from torch.profiler import profile

    start, count = args.profile_window
    tp = profile(activities=activities)
    state = {"first": None, "t0": 0.0, "t1": 0.0}

    def on_step(n: int) -> None:
        n -= state["first"]
        if n == start:
            tp.start()
            state["t0"] = time.perf_counter()
        elif n == start + count:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            state["t1"] = time.perf_counter()
            tp.stop()

    state["first"] = steps.n
    steps.on_step = on_step
    try:
        measured("torchprof-window", requests=c)
    finally:
        steps.on_step = None
    if not state["t1"]:
        raise SystemExit(
            f"--profile-window {start}:{count}: the run of {c} requests ended "
            f"before step {start + count}; raise --max-tokens or lower START")
    return tp, count, state["t1"] - state["t0"]


def own_time_per_step(prof: Path, nsteps: int) -> dict[str, float]:
    """cProfile's own time (µs) per engine step, by ``file:line(func)``;
    a built-in named by its address (``<function Event.synchronize at
    0x7f...>``) is named without it, so two processes' rows match."""
    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for (file, line, func), (_, _, tt, _, _) in stats.items():
        func = re.sub(r" at 0x[0-9a-f]+", "", func)
        key = f"{'/'.join(Path(file).parts[-3:])}:{line}({func})"
        out[key] = out.get(key, 0.0) + 1e6 * tt / nsteps
    return out


def _runs(r: dict, key: str) -> list[float]:
    """An arm's per-run values of a window figure (files written before
    ``--profile-repeats`` hold the mean only)."""
    if "runs" in r:
        return [run[key] for run in r["runs"]]
    return [r[key if key != "wall_us_per_step" else "window_wall_us_per_step"]]


def kernel_report(res: dict, base_of: dict[str, str], top: int) -> list[str]:
    """For each arm with a window profile, against its base arm: busy, span,
    idle and wall time per step (with a 95% interval over the profiled runs
    where both arms have two or more), the kernels whose time per step
    differs most, and the idle gaps that differ most."""
    lines: list[str] = []
    for a, r in res.items():
        base = base_of.get(a)
        if "busy_us_per_step" not in r or base not in res or base == a:
            continue
        b = res[base]
        figures = []
        for label, key in (("GPU busy", "busy_us_per_step"),
                           ("span", "span_us_per_step"),
                           ("idle", "idle_us_per_step"),
                           ("wall", "wall_us_per_step")):
            if key == "idle_us_per_step" and (key not in r or key not in b):
                continue  # a file written before the idle time was kept
            mine, theirs = _runs(r, key), _runs(b, key)
            figures.append(f"{label} {difference_interval(mine, theirs)}"
                           f" ({statistics.fmean(mine):.1f} vs "
                           f"{statistics.fmean(theirs):.1f})")
        nruns = len(r.get("runs", [None]))
        lines += ["", f"{a} - {base}, profiled window ({r['torchprof_steps']} "
                  f"steps in {nruns} run(s)), us a step: " + ", ".join(figures)
                  + f"; kernel sum {r['kernel_us_per_step'] - b['kernel_us_per_step']:+.1f}."
                  " Kernels differing most:"]
        lines += largest_differences(r["kernels_us_per_step"],
                                     b["kernels_us_per_step"], top, name_width=120)
        if "gaps_us_per_step" in r and "gaps_us_per_step" in b:
            lines.append("  Idle gaps (GPU waiting, by the kernels either side) "
                         "differing most:")
            lines += gap_differences(r, b, top)
    return lines


def gap_differences(mine: dict, theirs: dict, top: int) -> list[str]:
    """``largest_differences`` of two arms' idle gaps, each line with the
    gap's host-late and in-graph parts in both arms (``kernel_gaps``) where
    both have them: whether the GPU waited for the host's launch, for a
    queued dependency, or inside one graph launch; then how often the gap
    occurs a step in each arm and what it costs each time (session 55 read
    41.8 µs each off 6.9 µs a step at 0.165 a step by hand)."""
    ml = mine.get("gaps_host_late_us_per_step")
    tl = theirs.get("gaps_host_late_us_per_step")
    mg = mine.get("gaps_in_graph_us_per_step", {})
    tg = theirs.get("gaps_in_graph_us_per_step", {})
    mc = mine.get("gaps_per_step")
    tc = theirs.get("gaps_per_step")

    def each(arm: dict, counts: dict, key: str) -> str:
        n = counts.get(key, 0.0)
        return f"{arm['gaps_us_per_step'].get(key, 0.0) / n:.1f}" if n else "-"

    def note(key: str) -> str:
        text = ""
        if ml is not None and tl is not None:
            text += (f"; host-late {ml.get(key, 0.0):7.1f} vs {tl.get(key, 0.0):7.1f}"
                     f"; in-graph {mg.get(key, 0.0):7.1f} vs {tg.get(key, 0.0):7.1f}")
        if mc is not None and tc is not None:
            text += (f"; {mc.get(key, 0.0):.3f} vs {tc.get(key, 0.0):.3f} a step, "
                     f"{each(mine, mc, key)} vs {each(theirs, tc, key)} us each")
        return text

    return largest_differences(mine["gaps_us_per_step"], theirs["gaps_us_per_step"],
                               top, note=note)


def run_lines(res: dict) -> list[str]:
    """Each profiled arm's runs, one figure set each (busy / idle / wall µs
    a step, and the host-late idle where known): a run unlike the others
    (a host stall, another process on the GPU) shows as one."""
    lines = []
    for a, r in res.items():
        if "runs" not in r:
            continue
        late = all("host_late_us_per_step" in run for run in r["runs"])
        lines.append(f"{a} runs (busy / idle{' / host-late' if late else ''} / wall "
                     "us a step): " + " | ".join(
                         f"{run['busy_us_per_step']:.0f} / {run['idle_us_per_step']:.0f}"
                         + (f" / {run['host_late_us_per_step']:.0f}"
                            f" ({100 * run['launch_known']:.0f}% known)" if late else "")
                         + f" / {run['wall_us_per_step']:.0f}" for run in r["runs"]))
    return lines


def largest_differences(mine: dict[str, float], theirs: dict[str, float],
                        top: int, name_width: int | None = None,
                        note=lambda key: "") -> list[str]:
    """The ``top`` names whose µs per step differ most between two arms, a
    line each: the difference, both values (and ``note(name)``) and the name
    (cut to ``name_width``)."""
    delta = {k: mine.get(k, 0.0) - theirs.get(k, 0.0)
             for k in set(mine) | set(theirs)}
    return [f"  {v:+9.1f} us  ({mine.get(k, 0.0):8.1f} vs "
            f"{theirs.get(k, 0.0):8.1f}{note(k)})  {k[:name_width]}"
            for k, v in sorted(delta.items(), key=lambda kv: -abs(kv[1]))[:top]]


def report(out: Path, arms: list[str], top: int, base: str | None = None) -> str:
    """``report.txt`` of the arms' files in ``out``: each arm against
    ``base`` (default: the SD arm with the arm's K) where that arm ran."""
    res = {a: json.loads((out / f"{a}.json").read_text()) for a in arms}
    lines = ["arm       TPOT ms  steps  wall/step us  cProf wall/step us  "
             "GPU us/step  GPU events/step  launches/step"]
    for a, r in res.items():
        launches = sum(v for k, v in r["host_calls_per_step"].items()
                       if "Launch" in k or "Memcpy" in k or "Memset" in k)
        lines.append(f"{a:9} {r['tpot_ms']:7.3f} {r['steps']:6d} "
                     f"{r['wall_per_step_us']:13.1f} "
                     f"{r['cprofile_wall_per_step_us']:19.1f} "
                     f"{r['gpu_us_per_step']:12.1f} "
                     f"{r['gpu_events_per_step']:16.1f} {launches:14.1f}")
    lines.append("")
    for a, r in res.items():
        lines.append(f"{a} host calls per step: " + ", ".join(
            f"{k} {v:.1f}" for k, v in r["host_calls_per_step"].items()))
    base_of = {a: base or f"sd{r['arm']['k']}" for a, r in res.items()}
    for a, r in res.items():
        theirs_name = base_of[a]
        if theirs_name == a or theirs_name not in res:
            continue
        missing = [f"{x}.prof" for x in (a, theirs_name) if not (out / f"{x}.prof").is_file()]
        if missing:
            # A results folder keeps report.txt and drops the large dumps.
            lines += ["", f"{a} - {theirs_name}: host own time not compared "
                      f"(no {', '.join(missing)} here)"]
            continue
        mine = own_time_per_step(out / f"{a}.prof", r["cprofile_steps"])
        theirs = own_time_per_step(out / f"{theirs_name}.prof",
                                   res[theirs_name]["cprofile_steps"])
        total = sum(mine.values()) - sum(theirs.values())
        lines += ["", f"{a} - {theirs_name}: host own time per engine step, "
                  f"total {total:+.1f} us (under cProfile); largest differences:"]
        lines += largest_differences(mine, theirs, top)
    runs = run_lines(res)
    if runs:
        lines += ["", *runs]
    lines += kernel_report(res, base_of, top)
    text = "\n".join(lines) + "\n"
    (out / "report.txt").write_text(text)
    return text


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    add_model_args(ap, dataset="sharegpt-tune")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arms", default="target,sd4,dsl4t0")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--engine", default="{}",
                    help="EngineArgs overrides, JSON (e.g. '{\"enforce_eager\": true}')")
    ap.add_argument("--profile-window", type=parse_window, metavar="START:STEPS",
                    help="torch-profile engine steps START.. of one run of "
                    "--concurrency requests (see above)")
    ap.add_argument("--profile-repeats", type=positive_int, default=1,
                    metavar="R", help="profile the window in R runs (waves) "
                    "of --concurrency requests: the figures' run-to-run spread "
                    "(default 1)")
    ap.add_argument("--base", help="the arm each arm is compared with "
                    "(default: sd<K> of the arm)")
    ap.add_argument("--arm", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.arm:
        return child(args)
    arms = args.arms.split(",")
    for a in arms:
        parse_arm(a)
    if args.base is not None and args.base not in arms:
        ap.error(f"--base: {args.base!r} is not one of --arms ({args.arms})")
    for a in arms:
        cmd = [sys.executable, __file__, "--arm", a] + argv
        log = args.out / f"{a}.log"
        with log.open("w") as f:
            rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
        if rc != 0:
            sys.stderr.write(f"arm {a} failed (rc {rc}); see {log}\n")
            return rc
    print(report(args.out, arms, args.top, args.base))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
