"""One benchmark cell: a fresh engine, measured over closed-loop workloads.

    python benchmarks/cell.py CELL.json OUT.json [--ready FILE --go FILE]

The engine is vLLM's ``LLMEngine`` with its engine core in a subprocess (the
default, as under ``vllm serve``). The driver keeps exactly ``concurrency``
requests in flight (a new one enters when one finishes), like ``vllm bench
serve --max-concurrency`` with an unbounded request rate, and timestamps every
engine step's outputs. Why not ``vllm bench serve``: each cell needs a fresh
engine and the whole sweep must fit in minutes of GPU time; the HTTP/JSON
layer adds per-token CPU work that is the same for every arm and only blurs
the comparison, and this driver also records each request's per-step token
counts, which the oracle needs.

With ``--ready``/``--go`` the cell writes ``--ready`` once its engine is up,
then waits for ``--go`` before measuring: ``run.py`` starts many cells at once
(engine start-up overlaps) but measures one at a time.

CELL.json::

    {"name": str, "model": path, "draft": path | null, "k": int,
     "tau": float | null, "schedule": [[lo, hi, K], ...] | null,
     "dynamic": bool (optional: DSL without tau, "dynamic_lookahead"),
     "engine": {EngineArgs overrides},
     "max_tokens": int, "prompts": {"<dataset>-<split>": [[token ids], ...]},
     "workloads": [{"prompts": "<dataset>-<split>", "concurrency": int,
                    "num_requests": int, "reps": int,
                    "extra_args": {...} | null}, ...]}

OUT.json: the cell, its init time, and per workload and repetition the
per-request records (TTFT, TPOT, tokens, per-step token counts) and the
engine's ``vllm:spec_decode_*`` counters (delta).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The engine-counter snapshot and delta of the e2e harness (a library for the
# tests, the demo and the benchmarks) serve here too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from harness import _delta as counter_delta  # noqa: E402
from harness import _metric_snapshot as spec_counters  # noqa: E402


def speculative_config(draft: str, k: int, tau: float | None,
                       schedule: list[list[int]] | None = None,
                       dynamic: bool = False, av: bool = False) -> dict:
    """The ``--speculative-config`` of a draft-model arm: SD at K; DSL with a
    threshold (which turns DSL on by itself); DSL's cost-aware stop alone
    (``dynamic`` with no threshold: ``"dynamic_lookahead": true``); any of
    them with a batch-size schedule for K; ``av``: upstream's adaptive
    verification (``"enable_adaptive_verification": true``)."""
    spec: dict = {"method": "draft_model", "model": draft, "num_speculative_tokens": k}
    if tau is not None:
        spec["draft_confidence_threshold"] = tau
    elif dynamic:
        spec["dynamic_lookahead"] = True
    if schedule:
        spec["num_speculative_tokens_per_batch_size"] = schedule
    if av:
        spec["enable_adaptive_verification"] = True
    return spec


def engine_args(cell: dict):
    from vllm.engine.arg_utils import EngineArgs

    kwargs = dict(
        model=cell["model"],
        max_model_len=2048,
        max_num_seqs=64,
        enable_prefix_caching=False,
        # A fixed KV cache (no profiling, so cells can start side by side);
        # 2 GiB holds 64 requests of ~2k tokens for the 135M pair.
        kv_cache_memory_bytes=2 << 30,
        gpu_memory_utilization=0.04,
        seed=0,
        disable_log_stats=False,
    )
    if cell.get("draft"):
        kwargs["speculative_config"] = speculative_config(
            cell["draft"], cell["k"], cell.get("tau"), cell.get("schedule"),
            cell.get("dynamic", False), cell.get("av", False))
    kwargs.update(cell.get("engine", {}))
    return EngineArgs(**kwargs)


def run_workload(engine, prompts: list[list[int]], concurrency: int,
                 num_requests: int, max_tokens: int,
                 extra_args: dict | None, tag: str,
                 output_lengths: Sequence[int] | None = None,
                 drain_every: int | None = None) -> dict:
    """Closed loop: ``concurrency`` requests in flight until ``num_requests``
    have finished. Every step's outputs are timestamped; every step's start,
    duration, first tokens and the client's collection time inside it are
    logged (``step_quantiles``).

    Each request generates ``max_tokens`` tokens, or, with ``output_lengths``,
    request ``i`` generates ``output_lengths[i % len(output_lengths)]``:
    requests of one length started together also finish together, so the
    next wave's prefills arrive as one burst (``abab.py --output-lengths``).

    With ``drain_every``, the requests run in groups of that many: the next
    group's first request is added only once every request of the group
    before has finished, so a longer round repeats the same load instead of
    making it a steady stream of arrivals (``abab.py --repeats-at``)."""
    from vllm import SamplingParams

    lengths = list(output_lengths) if output_lengths else [max_tokens]
    params = {n: SamplingParams(temperature=0.0, max_tokens=n,
                                ignore_eos=True, detokenize=False,
                                extra_args=extra_args or None)
              for n in set(lengths)}
    queue = deque((f"{tag}-{i}", prompts[i % len(prompts)],
                   params[lengths[i % len(lengths)]])
                  for i in range(num_requests))
    inflight: dict[str, dict] = {}
    done: list[dict] = []
    before = spec_counters(engine)
    steps = StepLog()
    t_start = time.perf_counter()
    with GcClock() as gc_clock, HostClock() as host_clock:
        while queue or inflight:
            added = 0
            added_tokens = 0
            while queue and len(inflight) < concurrency:
                if (drain_every and inflight
                        and (num_requests - len(queue)) % drain_every == 0):
                    break
                added += 1
                rid, prompt, req_params = queue.popleft()
                added_tokens += len(prompt)
                engine.add_request(rid, {"prompt_token_ids": prompt}, req_params)
                inflight[rid] = {"t_add": time.perf_counter(), "times": [],
                                 "deltas": [], "n": 0, "prompt_len": len(prompt)}
            gc_before = gc_clock.ms
            in_flight = len(inflight)
            t_step = time.perf_counter()
            outs = engine.step()
            now = time.perf_counter()
            firsts = 0
            finished = 0
            for out in outs:
                rec = inflight.get(out.request_id)
                if rec is None:
                    continue
                n = len(out.outputs[0].token_ids)
                if n > rec["n"]:
                    firsts += rec["n"] == 0
                    rec["times"].append(now)
                    rec["deltas"].append(n - rec["n"])
                    rec["n"] = n
                if out.finished:
                    finished += 1
                    del inflight[out.request_id]
                    times = rec["times"]
                    done.append({
                        "prompt_len": rec["prompt_len"],
                        "num_tokens": rec["n"],
                        "ttft": times[0] - rec["t_add"],
                        "tpot": ((times[-1] - times[0]) / (rec["n"] - 1)
                                 if rec["n"] > 1 else None),
                        "latency": times[-1] - rec["t_add"],
                        "deltas": rec["deltas"],
                    })
            steps.add(1e3 * (t_step - t_start), 1e3 * (now - t_step), firsts,
                      gc_clock.ms - gc_before, added, added_tokens, in_flight, finished)
    wall = time.perf_counter() - t_start
    step_ms = steps.quantiles()
    # Where the steps' starts count from, on the clock other processes'
    # traces read (perf_counter is CLOCK_MONOTONIC on Linux; gc_trace).
    step_ms["start_monotonic_s"] = t_start
    return {"wall_s": wall, "requests": done,
            "step_ms": step_ms, "gc": gc_clock.summary(), "host": host_clock.summary(),
            "counters": counter_delta(before, spec_counters(engine))}


@dataclass
class StepLog:
    """Per client step: its start (ms since the workload began), duration
    (ms), how many requests got their first token, the client's garbage
    collection time inside it (ms), how many requests were added just
    before it, with how many prompt tokens, how many were in flight when it
    began and how many finished in it (session 24: DSL's slow steps come
    while a batch's requests finish)."""

    at: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    firsts: list[int] = field(default_factory=list)
    gc_ms: list[float] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    added_tokens: list[int] = field(default_factory=list)
    inflight: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)

    def add(self, at: float, ms: float, firsts: int, gc_ms: float,
            added: int = 0, added_tokens: int = 0, inflight: int = 0,
            finished: int = 0) -> None:
        self.at.append(at)
        self.ms.append(ms)
        self.firsts.append(firsts)
        self.gc_ms.append(gc_ms)
        self.added.append(added)
        self.added_tokens.append(added_tokens)
        self.inflight.append(inflight)
        self.finished.append(finished)

    def quantiles(self) -> dict:
        out = step_quantiles(self.ms, self.firsts, self.gc_ms, self.at, self.added)
        if out["n"]:
            out["trace"] = {"at_ms": [round(x, 2) for x in self.at],
                            "ms": [round(x, 3) for x in self.ms],
                            "firsts": list(self.firsts), "added": list(self.added),
                            "added_tokens": list(self.added_tokens),
                            "inflight": list(self.inflight),
                            "finished": list(self.finished)}
        return out


ARRIVAL_WINDOW = 3


def after_arrival(step_ms: list[float], added: list[int], median: float) -> dict:
    """Whether the long steps (over twice the median) are the ones that run
    arriving requests' prefills: the steps that a request was added before,
    or one of the ``ARRIVAL_WINDOW - 1`` steps after such a step (the engine
    core runs ahead of the client: under async scheduling a prefill's time can
    show in the client's next calls, and its first token later still). Gives
    the long steps' count and time, and how many of them, and how much of
    their time, fall in such a window. ``median`` is the steps' median
    (``step_quantiles`` has it, and checks that ``added`` has one count per
    step)."""
    near = [any(added[max(0, i - ARRIVAL_WINDOW + 1):i + 1])
            for i in range(len(step_ms))]
    long = [i for i, t in enumerate(step_ms) if t > 2 * median]
    return {"long": len(long), "long_ms": sum(step_ms[i] for i in long),
            "long_near_arrival": sum(near[i] for i in long),
            "long_ms_near_arrival": sum(step_ms[i] for i in long if near[i]),
            "steps_near_arrival": sum(near)}


class GcClock:
    """The time this process's garbage collector spends while entered, and
    its collections per generation (``gc.callbacks``): the client's own
    collections are a candidate for the long steps of a closed loop (the
    engine cores freeze their heaps after start-up; this process does not)."""

    def __init__(self):
        self.ms = 0.0
        self.max_ms = 0.0
        self.collections = [0, 0, 0]
        self._t: float | None = None

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        elif self._t is not None:
            ms = 1e3 * (time.perf_counter() - self._t)
            self.ms += ms
            self.max_ms = max(self.max_ms, ms)
            self.collections[info["generation"]] += 1
            self._t = None

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)

    def summary(self) -> dict:
        return {"ms": self.ms, "max_ms": self.max_ms,
                "collections": list(self.collections)}


class HostClock:
    """What the host did while a round ran, from the kernel's counters:
    CPU time by kind over all CPUs (``/proc/stat``: busy, iowait, and steal,
    the time a VM's CPUs waited for the hypervisor), the time tasks waited
    for a CPU (``/proc/pressure/cpu``, PSI "some"), and the container's CPU
    quota throttling (cgroup v2 ``cpu.stat``). Session 23's slow rounds ran
    the same steps as the fast ones, but their arrival steps took ~32 or ~49
    ms instead of ~15, in several arms at the same time: whether the host was
    short of CPU then is in these counters. A counter the host does not
    expose is left out of the summary."""

    def __init__(self, proc_stat: str = "/proc/stat",
                 pressure: str = "/proc/pressure/cpu",
                 cgroup_stat: str = "/sys/fs/cgroup/cpu.stat"):
        self.paths = (proc_stat, pressure, cgroup_stat)
        self.start: dict[str, float] = {}
        self.end: dict[str, float] = {}

    def read(self) -> dict[str, float]:
        proc_stat, pressure, cgroup_stat = self.paths
        out: dict[str, float] = {}
        text = _read_text(proc_stat)
        if text:
            for line in text.splitlines():
                if line.startswith("cpu "):
                    # user nice system idle iowait irq softirq steal (USER_HZ).
                    f = [float(x) for x in line.split()[1:9]]
                    f += [0.0] * (8 - len(f))
                    out["cpu_total"] = sum(f)
                    out["cpu_idle"] = f[3]
                    out["cpu_iowait"] = f[4]
                    out["cpu_steal"] = f[7]
                    break
        text = _read_text(pressure)
        if text:
            for line in text.splitlines():
                if line.startswith("some "):
                    for item in line.split()[1:]:
                        key, _, value = item.partition("=")
                        if key == "total":
                            out["cpu_wait_us"] = float(value)
        text = _read_text(cgroup_stat)
        if text:
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key in ("nr_throttled", "throttled_usec"):
                    out[key] = float(value)
        return out

    def __enter__(self) -> HostClock:
        self.start = self.read()
        return self

    def __exit__(self, *exc) -> None:
        self.end = self.read()

    def summary(self) -> dict:
        """Per round: ``busy``, ``iowait`` and ``steal`` as shares of all
        CPU time, ``cpu_wait_ms`` (PSI: time some task waited for a CPU),
        ``throttled_ms`` and ``throttled`` (quota periods throttled)."""
        d = {k: self.end[k] - self.start[k] for k in self.end if k in self.start}
        out: dict[str, float] = {}
        total = d.get("cpu_total", 0.0)
        if total > 0:
            out["busy"] = (total - d["cpu_idle"] - d["cpu_iowait"]) / total
            out["iowait"] = d["cpu_iowait"] / total
            out["steal"] = d["cpu_steal"] / total
        if "cpu_wait_us" in d:
            out["cpu_wait_ms"] = d["cpu_wait_us"] / 1e3
        if "throttled_usec" in d:
            out["throttled_ms"] = d["throttled_usec"] / 1e3
        if "nr_throttled" in d:
            out["throttled"] = d["nr_throttled"]
        return out


def _read_text(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


LONGEST_STEPS = 12


def step_quantiles(step_ms: list[float], firsts: list[int] | None = None,
                   gc_ms: list[float] | None = None,
                   at_ms: list[float] | None = None,
                   added: list[int] | None = None) -> dict:
    """How long the client's ``engine.step()`` calls took (ms): their count,
    median, 90th and 99th percentile, the longest, and the share of the
    workload's time in steps over twice the median. A few long steps (a
    stall: a collection, a recompile, a host hiccup) and a uniformly slower
    step tell different stories about a noisy round.

    With ``firsts`` (per step, how many requests got their first token in
    it), the steps are also split: ``"prefill"``, the steps that gave some
    request its first token (they ran the last chunk of its prompt, or under
    async scheduling the step after it), with their count, median and share
    of the workload's time; ``"decode"``, the others, with their count,
    median, 90th percentile and their own long share. So whether the long
    steps are the arriving requests' prefills or decode steps that stalled
    is in the record.

    With ``gc_ms`` (per step, the client's garbage collection time inside
    it), ``"gc_ms"`` and ``"gc_ms_in_long"`` say how much of the workload's
    time, and of its long steps' time, the client spent collecting. With
    ``at_ms`` (each step's start) as well, ``"longest"`` lists the
    ``LONGEST_STEPS`` longest steps over twice the median in time order, as
    ``[start, ms, first tokens, gc ms]``: whether stalls come alone or in a
    rhythm, and whether the client's collector was in them. With ``added``
    (per step, the requests added just before it), ``"after_arrival"``
    (``after_arrival``) says how many long steps came soon after an arrival."""
    if not step_ms:
        return {"n": 0}
    for name, values in (("first-token counts", firsts), ("collection times", gc_ms),
                         ("step starts", at_ms), ("arrival counts", added)):
        if values is not None and len(values) != len(step_ms):
            raise ValueError(f"{len(values)} {name} for {len(step_ms)} steps")
    out = duration_quantiles(step_ms)
    if firsts is not None:
        total = sum(step_ms)
        prefill = [t for t, f in zip(step_ms, firsts) if f]
        decode = [t for t, f in zip(step_ms, firsts) if not f]
        out["prefill"] = {"n": len(prefill),
                          "p50": duration_quantiles(prefill)["p50"] if prefill else None,
                          "time_share": sum(prefill) / total if total else 0.0}
        out["decode"] = ({k: v for k, v in duration_quantiles(decode).items()
                          if k in ("n", "p50", "p90", "long_share")}
                         if decode else {"n": 0})
    if gc_ms is not None:
        long = [i for i, t in enumerate(step_ms) if t > 2 * out["p50"]]
        out["gc_ms"] = sum(gc_ms)
        out["gc_ms_in_long"] = sum(gc_ms[i] for i in long)
        if at_ms is not None:
            top = sorted(sorted(long, key=lambda i: -step_ms[i])[:LONGEST_STEPS])
            out["longest"] = [[at_ms[i], step_ms[i], firsts[i] if firsts else None,
                               gc_ms[i]] for i in top]
    if added is not None:
        out["after_arrival"] = after_arrival(step_ms, added, out["p50"])
    return out


def duration_quantiles(step_ms: list[float]) -> dict:
    """Count, median, 90th and 99th percentile, longest, and the share of the
    total in durations over twice the median."""
    ordered = sorted(step_ms)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    median = q(0.5)
    total = sum(ordered)
    long = sum(x for x in ordered if x > 2 * median)
    return {"n": len(ordered), "p50": median, "p90": q(0.9), "p99": q(0.99),
            "max": ordered[-1], "long_share": long / total if total else 0.0}


def wait_for(path: str, timeout: float = 3600.0) -> None:
    t0 = time.time()
    while not os.path.exists(path):
        if time.time() - t0 > timeout:
            raise TimeoutError(f"no {path} after {timeout} s")
        time.sleep(0.2)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cell")
    ap.add_argument("out")
    ap.add_argument("--ready", help="file to create once the engine is up")
    ap.add_argument("--go", help="file to wait for before measuring")
    args = ap.parse_args(argv)
    cell = json.loads(Path(args.cell).read_text())

    from vllm.v1.engine.llm_engine import LLMEngine

    t0 = time.perf_counter()
    engine = LLMEngine.from_engine_args(engine_args(cell))
    init_s = time.perf_counter() - t0
    # Warm-up: every batch size the workloads reach, a few steps each.
    first = next(iter(cell["prompts"].values()))
    for c in sorted({w["concurrency"] for w in cell["workloads"]}):
        run_workload(engine, first, c, c, 16, None, f"warm{c}")
    if args.ready:
        Path(args.ready).write_text(str(init_s))
    if args.go:
        wait_for(args.go)
    results = []
    for w in cell["workloads"]:
        for rep in range(w.get("reps", 1)):
            tag = f"{w['prompts']}-c{w['concurrency']}-r{rep}"
            res = run_workload(engine, cell["prompts"][w["prompts"]],
                               w["concurrency"], w["num_requests"],
                               cell["max_tokens"], w.get("extra_args"), tag)
            res.update({"prompts": w["prompts"], "concurrency": w["concurrency"],
                        "rep": rep, "extra_args": w.get("extra_args")})
            results.append(res)
    out = {k: v for k, v in cell.items() if k != "prompts"}
    out.update({"init_s": init_s, "results": results})
    Path(args.out).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
