"""Interleaved A/B TPOT: all arms' engines up at once, measured in turns.

    python benchmarks/abab.py --models DIR --prompts DIR --out FILE.json \\
        [--arms sd4,dsl4t0] [--concurrency 1,8] [--rounds 6] [--max-tokens 128] \\
        [--bystanders sd4/dsl4]

Each arm is an ``LLMEngine`` with its engine core in its own process (as
``run.py``'s cells), all started side by side and warmed up; then, per
concurrency, ``--rounds`` rounds run the same closed-loop workload on every
arm in turn, the order reversed every other round (ABBA...), so drift of the
host or the GPU hits the arms alike. Per round the ratio of each arm's mean
TPOT to the first arm's is taken from adjacent runs; the report gives per
arm the median TPOT, and per ratio its median, mean and a 95% t-interval
over the rounds, with the spread of the first arm's own TPOT between rounds
(the noise floor). With ``--warm-rounds N`` every arm first runs each point's
workload N times unmeasured (what an engine learns while serving settles).

Arms: ``target``, ``sd<K>``, ``dsl<K>`` (DSL's cost-aware stop at cap K,
``"dynamic_lookahead": true``, no threshold), ``dsl<K>t<tau>`` (DSL with the
per-row floor tau), all but target optionally with a batch-size schedule for
K, ``@<lo>-<hi>:<K>/...`` (as ``profile_step.py``), or
from a tune-split choice (``run.py --phase select``): with ``--selection
FILE`` the arm ``sd*`` is the chosen SD K, ``dsl*`` the chosen DSL (K, tau)
and ``dsl*t0`` DSL at tau 0 with SD's K (the bookkeeping overhead), all as
chosen at ``--select-at`` (default ``<dataset>-c<first concurrency>``).
Besides TPOT, each arm's tokens per engine step per request (the accepted
length plus one) come from the requests' own step records, and per round the
durations of the client's ``engine.step()`` calls (``points[i]["step_ms"]``:
median, 90th and 99th percentile, longest, and the share of time in steps
over twice the median), so a noisy round shows whether a few steps stalled
or every step was slower (with the host's CPU counters of the round,
``cell.HostClock``); the summary sets each arm's median step (what a
start-up cost table prices) beside TPOT x tokens per step (which also
carries the steps that run arriving requests' prefills). The engines'
Prometheus counters are not per arm here (one registry per process), so every
engine gets a stat logger of its own (``SpecCounters``) that sums the
scheduler's spec-decode stats and counts engine steps (the records that carry
scheduler stats). Per arm and concurrency point (``points[i]["spec"]``, summed
over the rounds; per round under ``points[i]["spec_rounds"]``): draft forward
passes per engine step (DSL arms only: without DSL the worker does not count
them; SD runs K per drafting step), accepted draft tokens per engine step
(summed over the batch), drafted tokens per draft (K for SD; less with DSL's
exits), the acceptance rate and early exits per draft.

Bystanders: ``--bystanders sd4/dsl4`` measures every point again after
each group of engines (``/``-separated, cumulative) has been started beside
the arms and left idle; each point carries its ``"bystanders"`` (the
engines alive besides the arms). Same arms, same host, same run: whether
idle engines on the GPU change the arms' TPOT and step times (session 19:
SD K=3 at 64 requests served 5.8 ms with one other SD engine alive, 6.5-7.7
ms with a DSL engine or three others alive, on another host).

Pinned engines: ``--pin-engines 2-3`` pins every thread of every engine
process to those CPUs once the engines are up (and again after each group
of bystanders), this client left unpinned unless ``--pin-client`` names CPUs
for it (none of the engines'); the arms run one at a time, so
each then runs on the same cores. On a host-bound pair an engine's step time
moved 10-20% from one round to the next, arm by arm, while its median over
the rounds held (session 38): whether the cores an engine lands on are that
noise is what a pinned run asks. The output's ``"pinned"`` says what was
pinned.

Two variants of one configuration: ``<arm>+<label>`` arms with
``--arm-options '{"<label>": {"engine": {...}, "rpc": "<method>" (or a
list of methods, called in order), "env":
{...}, "probe": "<method>"}}'`` (``env``: e.g. ``{"VLLM_USE_V2_MODEL_RUNNER":
"0"}``, the V1 runner; such an arm starts alone, in that environment;
``probe``: a worker method that changes nothing, called after each measured
round, its answers per round and worker in the point's ``"probes"``, e.g.
``ab_hooks.HostStepProbe.dsl_host_step_ms``), e.g.
the MRV2 sync-scheduling hand-off A/B (``ab_hooks.py``)::

    --arms dsl4+handoff,dsl4+nohandoff --arm-options '{
      "handoff": {"engine": {"async_scheduling": false}},
      "nohandoff": {"engine": {"async_scheduling": false,
                    "worker_extension_cls": "ab_hooks.SyncHandOffToggle"},
                    "rpc": "dsl_disable_sync_hand_off"}}'
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cell import ARRIVAL_WINDOW, duration_quantiles, engine_args, run_workload  # noqa: E402
from profile_step import add_model_args, arm_cell, parse_arm  # noqa: E402
from run import load_prompts, num_requests  # noqa: E402

# Two-sided 95% Student t quantiles by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
       9: 2.26, 10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df: int) -> float:
    return T95[max(k for k in T95 if k <= df)] if df >= 1 else float("nan")


def ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% t-interval."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, float("nan"), float("nan")
    half = t95(len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return m, m - half, m + half


def resolve_arms(names: list[str], selection: dict | None) -> list[str]:
    """``sd*``, ``dsl*`` and ``dsl*t0`` replaced by the selection's choice."""
    out = []
    for name in names:
        if "*" not in name:
            out.append(name)
            continue
        if selection is None:
            raise SystemExit(f"--arms: {name!r} needs --selection")
        if selection.get("sd_k") is None or selection.get("dsl") is None:
            raise SystemExit(f"--selection: no SD or DSL choice at this key for {name!r}")
        k, tau = selection["dsl"]
        sd_k = selection["sd_k"]
        table = {"sd*": f"sd{sd_k}", "dsl*": f"dsl{k}t{tau:g}", "dsl*t0": f"dsl{sd_k}t0"}
        if name not in table:
            raise SystemExit(f"--arms: unknown arm {name!r} (sd*, dsl*, dsl*t0)")
        out.append(table[name])
    return list(dict.fromkeys(out))


SPEC_FIELDS = ("num_drafts", "num_draft_tokens", "num_accepted_tokens",
               "num_draft_forwards", "num_draft_tokens_requested",
               "num_early_exits")


class SpecCounters:
    """One engine's spec-decode totals and engine steps, summed from its own
    stat logger's records (``stat_logger_factory``)."""

    def __init__(self):
        # steps_with_drafts: engine steps that verified drafts (a fixed-K
        # arm's drafter ran K forwards for each; its worker does not count).
        self.totals = dict.fromkeys(("steps", "steps_with_drafts") + SPEC_FIELDS, 0)
        # Per record with decode tokens: the engine core's output period (ms),
        # the median over its requests of the time between their last two
        # outputs as the core stamped them. Beside the client's step times it
        # tells a stall of the core (or GPU) from one of this process.
        self.core_period_ms: list[float] = []
        # Per engine step (a record with scheduler stats), in order: the
        # requests running, the target forward's CUDA graph mode and padded
        # token count (with the engine option "cudagraph_metrics": true, else
        # None), and the tokens drafted and draft forwards it reported. Beside
        # the core periods they say what a slow phase of steps ran.
        self.engine_steps: list[tuple] = []

    def record(self, scheduler_stats, iteration_stats=None) -> None:
        itls = getattr(iteration_stats, "inter_token_latencies_iter", None)
        if itls:
            self.core_period_ms.append(1e3 * statistics.median(itls))
        if scheduler_stats is None:
            return
        self.totals["steps"] += 1
        spec = getattr(scheduler_stats, "spec_decoding_stats", None)
        graph = getattr(scheduler_stats, "cudagraph_stats", None)
        self.engine_steps.append((
            getattr(scheduler_stats, "num_running_reqs", None),
            None if graph is None else str(graph.runtime_mode),
            None if graph is None else graph.num_padded_tokens,
            None if spec is None else spec.num_draft_tokens,
            None if spec is None else getattr(spec, "num_draft_forwards", None)))
        if spec is None:
            return
        if getattr(spec, "num_draft_tokens", 0):
            self.totals["steps_with_drafts"] += 1
        for f in SPEC_FIELDS:
            self.totals[f] += int(getattr(spec, f, 0) or 0)

    def engine_steps_since(self, start: int) -> dict:
        """The engine steps recorded from index ``start`` on, as columns."""
        rows = self.engine_steps[start:]
        names = ("running", "graph_mode", "padded_tokens", "drafted", "draft_forwards")
        return {name: [r[i] for r in rows] for i, name in enumerate(names)}

    def snapshot(self) -> dict:
        return dict(self.totals)

    def since(self, before: dict) -> dict:
        return {k: v - before.get(k, 0) for k, v in self.totals.items()}


def stat_logger_factory(counters: SpecCounters):
    """A per-engine stat logger factory for ``LLMEngine.from_engine_args(...,
    stat_loggers=[...])`` whose loggers feed ``counters``."""
    from vllm.v1.metrics.loggers import StatLoggerBase

    class _Logger(StatLoggerBase):
        def __init__(self, vllm_config, engine_index: int = 0):
            self.engine_index = engine_index

        def record(self, scheduler_stats, iteration_stats,
                   mm_cache_stats=None, engine_idx: int = 0):
            counters.record(scheduler_stats, iteration_stats)

        def log_engine_initialized(self):
            pass

    return lambda vllm_config, engine_index=0: _Logger(vllm_config, engine_index)


# draft_forwards_source of a fixed-K arm, whose worker does not count forwards.
FIXED_K_FORWARDS = "K a step that verified drafts"


def spec_rates(t: dict, dynamic: bool, k: int | None = None) -> dict:
    """Per-step and per-draft figures of summed ``SpecCounters`` totals.
    ``draft_forwards_per_step``: with DSL (``dynamic``) the forwards its worker
    counted; for a fixed-K arm (``k``), which its worker does not count, K for
    each step that verified drafts (``draft_forwards_source`` says which; 0
    for target-only, None where neither is known, as in totals from before
    ``steps_with_drafts``)."""
    def div(a, b):
        return a / b if b else None
    if dynamic:
        forwards, source = div(t["num_draft_forwards"], t["steps"]), "counted"
    elif k == 0:
        forwards, source = 0.0, "no drafter"
    elif k and "steps_with_drafts" in t:
        forwards = div(k * t["steps_with_drafts"], t["steps"])
        source = FIXED_K_FORWARDS
    else:
        forwards, source = None, None
    return {**t,
            "draft_forwards_per_step": forwards,
            "draft_forwards_source": source,
            "accepted_per_step": div(t["num_accepted_tokens"], t["steps"]),
            "drafted_per_draft": div(t["num_draft_tokens"], t["num_drafts"]),
            "accepted_per_draft": div(t["num_accepted_tokens"], t["num_drafts"]),
            "acceptance_rate": div(t["num_accepted_tokens"], t["num_draft_tokens"]),
            "early_exits_per_draft": div(t["num_early_exits"], t["num_drafts"])}


def spec_line(r: dict) -> str:
    """The summary's spec-decode figures of one arm (``spec_rates``)."""
    def f(x, fmt="{:.2f}"):
        return "n/a" if x is None else fmt.format(x)
    fixed = r.get("draft_forwards_source") == FIXED_K_FORWARDS
    return (f"draft fwd/step {f(r['draft_forwards_per_step'])}"
            f"{' (K a drafting step)' if fixed else ''}, "
            f"accepted/step {f(r['accepted_per_step'])}, "
            f"drafted/draft {f(r['drafted_per_draft'])}, "
            f"acceptance {f(r['acceptance_rate'], '{:.3f}')}, "
            f"exits/draft {f(r['early_exits_per_draft'])} "
            f"({r['steps']} steps)")


def step_line(step_rounds: list[dict | None], tpots: list[float],
              per_step: list[float]) -> str | None:
    """The summary's step figures of one arm: the median engine step (median
    over rounds of each round's median), which a start-up cost table prices,
    and per token (over the tokens a request gets per step: what decode steps
    alone would give, comparable across arms of any width),
    against TPOT x tokens per step, the mean period a token sees, which also
    carries the steps that run arriving requests' prefills; where the rounds
    split their steps (``cell.step_quantiles``), the decode-only steps'
    median and 90th percentile and the share of time in steps that gave a
    request its first token; where they record arrivals
    (``cell.after_arrival``), how many of the long steps came within
    ``ARRIVAL_WINDOW`` steps of a request's arrival, and how much of their
    time; None without step records."""
    medians = [r["p50"] for r in step_rounds if r and r.get("n")]
    if not medians or not tpots or not per_step:
        return None
    tokens = statistics.fmean(per_step)
    period = statistics.median(tpots) * tokens
    median = statistics.median(medians)
    text = (f"engine step median {median:.2f} ms ({median / tokens:.2f} ms a token), "
            f"TPOT x tokens/step {period:.2f} ms")
    split = [r for r in step_rounds
             if r and r.get("decode", {}).get("n") and "prefill" in r]
    if split:
        text += (f"; decode-only steps median "
                 f"{statistics.median(r['decode']['p50'] for r in split):.2f} ms "
                 f"(p90 {statistics.median(r['decode']['p90'] for r in split):.2f}), "
                 f"steps giving a first token "
                 f"{statistics.fmean(r['prefill']['time_share'] for r in split):.0%}"
                 f" of the time")
    core = [r for r in step_rounds if r and r.get("core", {}).get("n")]
    if core:
        text += (f"; core output period median "
                 f"{statistics.median(r['core']['p50'] for r in core):.2f} ms, long share "
                 f"{statistics.fmean(r['core']['long_share'] for r in core):.0%} (client "
                 f"{statistics.fmean(r['long_share'] for r in core):.0%})")
    near = [(r["n"], r["after_arrival"]) for r in step_rounds
            if r and r.get("after_arrival")]
    long = sum(a["long"] for _, a in near)
    if long:
        long_ms = sum(a["long_ms"] for _, a in near)
        near_ms = sum(a["long_ms_near_arrival"] for _, a in near)
        near_share = (sum(a["steps_near_arrival"] for _, a in near)
                      / sum(n for n, _ in near))
        text += (f"; long steps within {ARRIVAL_WINDOW} of an arrival "
                 f"{sum(a['long_near_arrival'] for _, a in near)} of {long} "
                 f"({near_ms / long_ms:.0%} of their time; such steps "
                 f"{near_share:.0%} of all)")
    gcs = [r["gc"] for r in step_rounds if r and r.get("gc")]
    if gcs:
        text += (f"; client GC {statistics.fmean(g['ms'] for g in gcs):.0f} ms a round"
                 f" (longest {max(g['max_ms'] for g in gcs):.0f})")
    text += host_text([r.get("host") for r in step_rounds if r])
    return text


def host_text(hosts: list[dict | None]) -> str:
    """The rounds' host counters (``cell.HostClock``) in a few words: median
    and largest per round, so a round the host was short of CPU stands out."""
    hosts = [h for h in hosts if h]
    parts = []
    for key, label, scale, unit in (("busy", "CPU busy", 100, "%"),
                                    ("steal", "steal", 100, "%"),
                                    ("cpu_wait_ms", "CPU wait", 1, " ms"),
                                    ("throttled_ms", "throttled", 1, " ms")):
        values = [scale * h[key] for h in hosts if key in h]
        if values:
            parts.append(f"{label} {statistics.median(values):.1f}{unit} "
                         f"(max {max(values):.1f})")
    return f"; host a round: {', '.join(parts)}" if parts else ""


def with_core_periods(step_ms: dict | None, periods: list[float],
                      gc: dict | None, host: dict | None = None,
                      engine_steps: dict | None = None) -> dict | None:
    """A round's client step record with the engine core's output periods of
    the same round (``"core"``: count, median, 90th and 99th percentile,
    longest, long share, and ``"core_ms"``, each period in order;
    ``SpecCounters``), the client's collections (``"gc"``: ms, longest, per
    generation; ``cell.GcClock``), what the host's CPUs did meanwhile
    (``"host"``: ``cell.HostClock``) and the engine's own per-step record
    (``"engine_steps"``: ``SpecCounters.engine_steps_since``)."""
    if step_ms is None:
        return None
    out = dict(step_ms)
    if periods:
        out["core"] = duration_quantiles(periods)
        out["core_ms"] = [round(x, 3) for x in periods]
    if engine_steps is not None:
        out["engine_steps"] = engine_steps
    if gc is not None:
        out["gc"] = gc
    if host:
        out["host"] = host
    return out


def tokens_per_step(requests: list[dict]) -> float:
    """Mean tokens a request gets per engine step that gives it any."""
    steps = sum(len(r["deltas"]) for r in requests)
    return sum(sum(r["deltas"]) for r in requests) / steps if steps else float("nan")


def tokens_by_life(requests: list[dict], bins: int = 10) -> tuple[list[float], list[int]]:
    """Tokens a request got per step that gave it any, summed by the tenth
    (``bins``) of its life the step fell in, and the steps counted there: a
    step's share of its request's steps places it. Whether what requests
    accept drifts over their lives (a comparison of consecutive blocks of
    steps would read a drift as a difference between them)."""
    sums = [0.0] * bins
    counts = [0] * bins
    for r in requests:
        deltas = r["deltas"]
        for i, d in enumerate(deltas):
            b = i * bins // len(deltas)
            sums[b] += d
            counts[b] += 1
    return sums, counts


def parse_bystanders(text: str, arms: list[dict]) -> list[list[dict]]:
    """``--bystanders``: ``/``-separated groups of arms, started one group
    after another and never measured. A bystander is an engine of its own, so
    its name may be neither an arm's nor another bystander's."""
    if not text:
        return []
    taken = {a["name"] for a in arms}
    groups = []
    for group in text.split("/"):
        names = [n for n in group.split(",") if n]
        if not names:
            raise SystemExit(f"--bystanders: empty group in {text!r}")
        parsed = []
        for name in names:
            if "*" in name:
                raise SystemExit(f"--bystanders: {name!r}: name the arm (no selection)")
            if name in taken:
                raise SystemExit(f"--bystanders: {name!r} is already an arm or a "
                                 "bystander; each bystander is another engine")
            taken.add(name)
            parsed.append(parse_arm(name))
        groups.append(parsed)
    return groups


def parse_arm_options(text: str, arms: list[dict]) -> dict[str, dict]:
    """``--arm-options``: per label, ``engine`` (EngineArgs overrides),
    ``rpc`` (a worker method, e.g. of ``ab_hooks.py``) and ``env``
    (environment variables the engine starts with, e.g.
    ``{"VLLM_USE_V2_MODEL_RUNNER": "0"}`` for the V1 runner). Every label of
    ``arms`` must have an entry, and every entry a label in use."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError as e:
        raise SystemExit(f"--arm-options: not JSON: {e}") from None
    if not isinstance(options, dict):
        raise SystemExit("--arm-options: must be a JSON object of labels")
    labels = {a["label"] for a in arms if a.get("label")}
    missing = sorted(labels - set(options))
    if missing:
        raise SystemExit(f"--arm-options: no entry for label {missing[0]!r}")
    for label, opts in options.items():
        if label not in labels:
            raise SystemExit(f"--arm-options: label {label!r} is not used by any arm")
        if not isinstance(opts, dict) or set(opts) - {"engine", "rpc", "env", "probe"}:
            raise SystemExit(f"--arm-options: {label!r} takes only 'engine' (an "
                             "object), 'rpc' (a worker method name), 'env' "
                             "(an object of strings) and 'probe' (a worker "
                             "method name)")
        env = opts.get("env", {})
        if not isinstance(env, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise SystemExit(f"--arm-options: {label!r}.env must be an object "
                             "of strings")
        if not isinstance(opts.get("engine", {}), dict):
            raise SystemExit(f"--arm-options: {label!r}.engine must be an object")
        if not isinstance(opts.get("probe", ""), str):
            raise SystemExit(f"--arm-options: {label!r}.probe must be a method name")
        rpc = opts.get("rpc", "")
        if not (isinstance(rpc, str) or (
                isinstance(rpc, list) and rpc and all(isinstance(m, str) for m in rpc))):
            raise SystemExit(f"--arm-options: {label!r}.rpc must be a method name or "
                             "a list of them (called in order)")
    return options


@contextlib.contextmanager
def arm_environment(env: dict[str, str] | None):
    """The process environment with ``env`` set, restored afterwards: an
    engine reads it when its config is made and its engine core (spawned)
    inherits it, so the arm that has one starts alone."""
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def start_engines(arms: list[dict], start, dsl_alone: bool) -> list:
    """Start every arm's engine (``start(arm)``, None for one that failed),
    side by side; with ``dsl_alone`` the DSL arms start one at a time once
    the others are up: a DSL engine measures its step costs at start-up, and
    engines compiling and capturing beside it inflate them. Arms with an
    environment of their own (``env``) also start one at a time, in it."""
    engines: list = [None] * len(arms)
    alone = [i for i, a in enumerate(arms)
             if (dsl_alone and a.get("dynamic")) or a.get("env")]
    together = [i for i in range(len(arms)) if i not in alone]
    with ThreadPoolExecutor(max(1, len(together))) as pool:
        for i, engine in zip(together, pool.map(start, [arms[i] for i in together])):
            engines[i] = engine
    for i in alone:
        with arm_environment(arms[i].get("env")):
            engines[i] = start(arms[i])
    return engines


def parse_cpus(text: str, flag: str = "--pin-engines") -> set[int]:
    """``--pin-engines`` (or ``flag``): a CPU list (``2-3``, ``2,5-6``), every
    CPU one this process may run on."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise SystemExit(f"{flag}: {text!r} is not a CPU list (e.g. 2-3 or "
                         "2,5-6)") from None
    allowed = os.sched_getaffinity(0)
    if not cpus or not cpus <= allowed:
        raise SystemExit(f"{flag}: {text!r} names CPUs this process may not "
                         f"use (it may use {sorted(allowed)})")
    return cpus


def _pin_threads(pid: int | str, cpus: set[int]) -> tuple[int, int]:
    """Pin every thread of process ``pid`` (``"self"``: this one) to ``cpus``;
    threads it starts later inherit it. Returns the threads pinned and those
    refused (e.g. by a cpuset: counted, not fatal); a thread that ended
    meanwhile is neither. FileNotFoundError if the process has ended."""
    threads = refused = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
            threads += 1
        except ProcessLookupError:  # the thread ended meanwhile
            pass
        except OSError:
            refused += 1
    return threads, refused


def pin_children(cpus: set[int]) -> dict:
    """Pin every thread of every process below this one (the engine cores
    and whatever they started) to ``cpus``; threads they start later inherit
    it. This process (the client) stays where it was. Returns what was
    pinned, for the output."""
    import psutil

    processes = threads = refused = 0
    for child in psutil.Process().children(recursive=True):
        try:
            pinned_here, refused_here = _pin_threads(child.pid, cpus)
        except FileNotFoundError:  # it ended meanwhile
            continue
        processes += 1
        threads += pinned_here
        refused += refused_here
    pinned = {"cpus": sorted(cpus), "processes": processes, "threads": threads,
              "refused": refused}
    print(f"[abab] pinned {threads} threads of {processes} engine processes to CPUs "
          f"{sorted(cpus)} ({refused} refused)", flush=True)
    return pinned


def pin_client(cpus: set[int]) -> int:
    """``--pin-client``: pin every thread of this process (the client) to
    ``cpus``; threads it starts later inherit it. Returns the threads pinned."""
    threads, refused = _pin_threads("self", cpus)
    print(f"[abab] pinned this client's {threads} threads to CPUs {sorted(cpus)} "
          f"({refused} refused)", flush=True)
    return threads


def pin_all(engine_cpus: set[int], client_cpus: set[int] | None) -> dict:
    """The engines' pinning (:func:`pin_children`), then the client's where
    ``--pin-client`` asks; what the output records as ``"pinned"``."""
    pinned = pin_children(engine_cpus)
    if client_cpus:
        pin_client(client_cpus)
        pinned["client_cpus"] = sorted(client_cpus)
    return pinned


WARM_LENGTHS = (4, 32)


def parse_output_lengths(text: str) -> tuple[int, int]:
    """``LO-HI`` with 1 <= LO <= HI (``--output-lengths``)."""
    lo, sep, hi = text.partition("-")
    if not (sep and lo.isdigit() and hi.isdigit() and 1 <= int(lo) <= int(hi)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not LO-HI with 1 <= LO <= HI (e.g. 64-256)")
    return int(lo), int(hi)


def parse_waves_at(text: str) -> dict[int, int]:
    """``C:N[,C:N...]`` (``--waves-at``): N waves per round at concurrency C
    instead of ``--waves``, e.g. ``64:2`` to lengthen only the point whose
    rounds spread most (session 29: one wave of 64 requests spread 3.3%
    round to round, the smaller points 0.3-1.5%)."""
    out: dict[int, int] = {}
    for item in text.split(","):
        c, sep, n = item.partition(":")
        if not (sep and c.isdigit() and n.isdigit() and int(c) >= 1 and int(n) >= 1):
            raise argparse.ArgumentTypeError(
                f"{item!r} is not C:N with C, N >= 1 (e.g. 64:2)")
        out[int(c)] = int(n)
    return out


def parse_repeats_at(text: str) -> dict[int, int]:
    """``C:N[,C:N...]`` (``--repeats-at``): each round at concurrency C runs
    N groups of the point's request count (the next prompts in turn, the
    same output lengths), each group drained before the next starts, e.g.
    ``64:3``: a longer round of the same load. (``--waves-at 64:2`` instead
    keeps 64 requests in flight over 128, so the second wave's requests
    arrive as the first one's leave: session 30 saw prefills in a quarter of
    the steps, SD's round-to-round spread rise to 19.9% and target-only pass
    SD, another workload than one wave's.) Read as ``--waves-at`` is."""
    return parse_waves_at(text)


def round_prompts(prompts: list, index: int, n: int) -> list:
    """The prompts of the ``index``-th round of ``n`` requests
    (``--rotate-prompts``; index 0 without it): the list rotated to start
    at request ``index * n``, wrapping around, so consecutive rounds take
    consecutive requests and every arm of one round gets the same ones."""
    start = (index * n) % len(prompts)
    return prompts[start:] + prompts[:start] if start else prompts


def request_lengths(bounds: tuple[int, int] | None, n: int) -> list[int] | None:
    """The output length of each of a point's ``n`` requests: drawn from one
    fixed seed, so every arm and round of the point runs the same requests."""
    if bounds is None:
        return None
    rng = random.Random(0)
    return [rng.randint(*bounds) for _ in range(n)]


def probe_text(answers: list[list]) -> str:
    """A probe's answers, one per round (the first worker's), floats to 3
    places; an answer that is an object is written ``{key: value, ...}``
    and the rounds are separated by ``|``."""
    values = [a[0] if a else None for a in answers]
    sep = " | " if any(isinstance(v, dict) for v in values) else " "
    return sep.join(_probe_value(v) for v in values)


def _probe_value(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_probe_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def probe(engine, method: str) -> list:
    """``method``'s answer on every worker (a probe: it changes nothing)."""
    return list(engine.collective_rpc(method))


def call_rpc(engine, method: str) -> None:
    """Call ``method`` on every worker; each must return a truthy value (a
    variant that did not take effect would make the A/B meaningless)."""
    results = engine.collective_rpc(method)
    if not results or not all(results):
        raise RuntimeError(f"worker call {method} returned {results}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    add_model_args(ap, dataset="sharegpt-test")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arms", default="sd4,dsl4t0")
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--warm-rounds", type=int, default=0,
                    help="per point, rounds of its workload every arm runs before "
                         "the measured ones, not measured: what an engine learns "
                         "while serving (the DSL draft width per batch size) "
                         "settles first, as on a server that has run a while")
    ap.add_argument("--base-requests", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--output-lengths", type=parse_output_lengths,
                    help="LO-HI: each request generates a length drawn uniformly "
                         "from LO..HI (seeded: the same lengths for every arm and "
                         "round) instead of --max-tokens, so requests finish at "
                         "different steps and their successors' prefills spread "
                         "over the round instead of arriving as one burst per wave")
    ap.add_argument("--waves", type=int, default=2,
                    help="requests per point: max(--base-requests, WAVES x c)")
    ap.add_argument("--waves-at", type=parse_waves_at, default={},
                    help="C:N[,C:N...]: N waves instead of --waves at concurrency C")
    ap.add_argument("--repeats-at", type=parse_repeats_at, default={},
                    help="C:N[,C:N...]: each round at concurrency C runs N "
                         "groups of the point's request count (the next prompts, "
                         "the same output lengths), each drained before the next "
                         "(a longer round of the same load)")
    ap.add_argument("--rotate-prompts", action="store_true",
                    help="each round starts at the prompt after the previous "
                         "round's last (warm rounds after the measured ones), "
                         "every arm of a round on the same prompts: short "
                         "rounds then cover the prompt set instead of "
                         "repeating its first requests")
    ap.add_argument("--engine", default="{}", help="EngineArgs overrides, JSON")
    ap.add_argument("--dsl-starts-alone", action="store_true",
                    help="start the DSL arms one at a time after the others are "
                         "up, so that each DSL engine times its draft and target "
                         "steps at start-up (the stop rule's cost table) on an "
                         "otherwise idle GPU, as a server would")
    ap.add_argument("--arm-options", default="{}",
                    help='per arm label (<arm>+<label>), JSON: {"<label>": '
                         '{"engine": {EngineArgs overrides}, "rpc": "<worker '
                         'method called once the engine is up>"}}')
    ap.add_argument("--pin-engines", type=parse_cpus, metavar="CPULIST",
                    help="pin every engine process's threads to these CPUs once "
                         "the engines are up (e.g. 2-3: the arms run one at a "
                         "time, so each then runs on the same cores), leaving "
                         "this client unpinned; recorded as \"pinned\"")
    ap.add_argument("--pin-client", type=lambda text: parse_cpus(text, "--pin-client"),
                    metavar="CPULIST",
                    help="with --pin-engines: pin this client's threads to these "
                         "CPUs at the same time, none of them an engine CPU (e.g. "
                         "the CPUs of other cores, so that nothing of the run "
                         "shares the engines' cores); recorded in \"pinned\"")
    ap.add_argument("--bystanders", default="",
                    help="groups of arms ('/'-separated, e.g. sd4/dsl4) started "
                         "one group after another once every point was measured, "
                         "never measured themselves; after each group every point "
                         "is measured again (a bystander that fails to start is "
                         "reported and left out)")
    ap.add_argument("--selection", type=Path,
                    help="selection.json of run.py --phase select (for sd*, dsl*)")
    ap.add_argument("--select-at", help="its key (default <dataset>-c<first c>)")
    args = ap.parse_args(argv)
    if args.waves < 1:
        ap.error(f"--waves: {args.waves} must be at least 1")
    if args.warm_rounds < 0:
        ap.error(f"--warm-rounds: {args.warm_rounds} must be at least 0")
    if args.pin_client and not args.pin_engines:
        ap.error("--pin-client: needs --pin-engines (the client is pinned with them)")
    if args.pin_client and args.pin_client & args.pin_engines:
        ap.error(f"--pin-client: CPUs {sorted(args.pin_client & args.pin_engines)} "
                 "are engine CPUs (--pin-engines)")
    conc = [int(c) for c in args.concurrency.split(",")]
    for flag, table in (("--waves-at", args.waves_at), ("--repeats-at", args.repeats_at)):
        unmeasured = sorted(set(table) - set(conc))
        if unmeasured:
            ap.error(f"{flag}: concurrency {unmeasured} "
                     f"is not in --concurrency {args.concurrency}")
    selection = None
    if args.selection:
        key = args.select_at or f"{args.dataset.rsplit('-', 1)[0]}-c{conc[0]}"
        table = json.loads(args.selection.read_text())
        if key not in table:
            raise SystemExit(f"--select-at: {key!r} is not in {args.selection} "
                             f"({', '.join(table)})")
        selection = table[key]
    arms = [parse_arm(a) for a in resolve_arms(args.arms.split(","), selection)]
    bystander_groups = parse_bystanders(args.bystanders, arms)
    bystanders = [a for group in bystander_groups for a in group]
    arm_options = parse_arm_options(args.arm_options, arms + bystanders)
    for arm in arms + bystanders:
        opts = arm_options.get(arm.get("label") or "", {})
        arm["env"], arm["probe"] = opts.get("env"), opts.get("probe")
    prompts = load_prompts(args.prompts, args.dataset, 1024)

    # The engines start from threads of this process: forking their engine
    # cores there failed on the H200 host ("os.fork is unsafe while filelock
    # is changing descriptor ownership"), so they are spawned.
    os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
    from vllm.v1.engine.llm_engine import LLMEngine

    def start(arm):
        try:
            return start_arm(arm)
        except Exception as e:  # noqa: BLE001 - one arm's failure is reported
            failed[arm["name"]] = f"start-up: {type(e).__name__}: {e}"
            print(f"[abab] arm {arm['name']} dropped: {failed[arm['name']]}", flush=True)
            return None

    # Worker extensions named in --arm-options (ab_hooks.py) are imported by
    # the engine cores, which are spawned: they find this folder this way.
    here = str(Path(__file__).resolve().parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p)

    def start_arm(arm):
        opts = arm_options.get(arm.get("label") or "", {})
        cell = arm_cell(arm, args.models, args.target, args.draft,
                        {**json.loads(args.engine), **opts.get("engine", {})})
        engine = LLMEngine.from_engine_args(
            engine_args(cell), stat_loggers=[stat_logger_factory(spec[arm["name"]])])
        rpc = opts.get("rpc") or []
        for method in [rpc] if isinstance(rpc, str) else rpc:
            call_rpc(engine, method)
        # Two waves of short requests of different lengths per point: batches
        # that mix arriving prefills with decodes at every size the point
        # reaches (the draft model's prefill-input kernel compiles again for a
        # larger batch: session 22 saw it stall the first measured round at 64
        # for 131-205 ms after a one-wave warm-up).
        for c in conc:
            run_workload(engine, prompts, c, 2 * c, 16, None, f"warm{c}",
                         output_lengths=request_lengths(WARM_LENGTHS, 2 * c))
        return engine

    # An arm whose engine fails (at start-up or in a round) is dropped with
    # its error in the output; the others go on.
    failed: dict[str, str] = {}
    spec = {a["name"]: SpecCounters() for a in arms + bystanders}
    t0 = time.perf_counter()
    engines = start_engines(arms, start, args.dsl_starts_alone)
    init_s = time.perf_counter() - t0
    kept = [i for i, e in enumerate(engines) if e is not None]
    if not kept or kept[0] != 0:
        raise SystemExit(f"abab: the base arm {arms[0]['name']} did not start: "
                         f"{failed.get(arms[0]['name'])}")
    arms = [arms[i] for i in kept]
    engines = [engines[i] for i in kept]
    pinned = pin_all(args.pin_engines, args.pin_client) if args.pin_engines else None

    out: dict = {"arms": [a["name"] for a in arms], "dataset": args.dataset,
                 "selection": selection, "engine": json.loads(args.engine),
                 "target": args.target, "draft": args.draft,
                 "max_tokens": args.max_tokens, "rounds": args.rounds,
                 "warm_rounds": args.warm_rounds,
                 "output_lengths": (list(args.output_lengths)
                                    if args.output_lengths else None),
                 "waves": args.waves,
                 "waves_at": {str(c): n for c, n in args.waves_at.items()},
                 "repeats_at": {str(c): n for c, n in args.repeats_at.items()},
                 "rotate_prompts": args.rotate_prompts,
                 "init_s": init_s, "failed": failed, "pinned": pinned,
                 "points": [],
                 "bystanders": [[]]}
    lines: list[str] = []
    printed = 0

    def measure(alive: list[str]) -> None:
        """Every point, with ``alive`` (bystander engines) beside the arms."""
        nonlocal printed
        note = f" [bystanders alive: {', '.join(alive)}]" if alive else ""
        for c in conc:
            group = num_requests(c, args.base_requests, args.waves_at.get(c, args.waves))
            repeats = args.repeats_at.get(c, 1)
            n = group * repeats
            lengths = request_lengths(args.output_lengths, group)
            if lengths is not None:
                lengths = lengths * repeats
            tpots: dict[str, list[float]] = {a["name"]: [] for a in arms}
            counters: dict[str, list[dict]] = {a["name"]: [] for a in arms}
            per_step: dict[str, list[float]] = {a["name"]: [] for a in arms}
            spec_rounds: dict[str, list[dict]] = {a["name"]: [] for a in arms}
            step_rounds: dict[str, list[dict]] = {a["name"]: [] for a in arms}
            probes: dict[str, list[list]] = {}
            life: dict[str, list[list]] = {a["name"]: [[0.0] * 10, [0] * 10] for a in arms}

            def run_or_drop(i: int, tag: str, where: str, start: int) -> dict | None:
                """Arm ``i``'s workload of this point on ``round_prompts(start)``;
                an arm other than the base whose engine fails is dropped with
                its error. Each turn is marked in the output ("[abab] turn ARM
                TAG"): an engine logs its stats from its own steps, so the
                stats lines up to the next mark are that arm's
                (``served_widths.py --arm``)."""
                print(f"[abab] turn {arms[i]['name']} {tag}", flush=True)
                try:
                    return run_workload(engines[i], round_prompts(prompts, start, n),
                                        c, n, args.max_tokens,
                                        None, tag, output_lengths=lengths,
                                        drain_every=group if repeats > 1 else None)
                except Exception as e:  # noqa: BLE001
                    if i == 0:
                        raise
                    failed[arms[i]["name"]] = f"c={c} {where}: {type(e).__name__}: {e}"
                    print(f"[abab] arm {arms[i]['name']} dropped: "
                          f"{failed[arms[i]['name']]}", flush=True)
                    return None

            for r in range(args.warm_rounds):
                for i in range(len(arms)):
                    if arms[i]["name"] not in failed:
                        res = run_or_drop(i, f"w{r}c{c}", f"warm round {r}",
                                          args.rounds + r if args.rotate_prompts else 0)
                        if res is not None and arms[i]["probe"]:
                            # Read and dropped: a probe that answers since its
                            # last read (HostTimer) then gives the first
                            # measured round that round alone.
                            probe(engines[i], arms[i]["probe"])
            for r in range(args.rounds):
                order = list(range(len(arms)))
                if r % 2:
                    order.reverse()
                for i in order:
                    if arms[i]["name"] in failed:
                        continue
                    before = spec[arms[i]["name"]].snapshot()
                    periods_before = len(spec[arms[i]["name"]].core_period_ms)
                    engine_steps_before = len(spec[arms[i]["name"]].engine_steps)
                    res = run_or_drop(i, f"r{r}c{c}", f"round {r}",
                                      r if args.rotate_prompts else 0)
                    if res is None:
                        continue
                    if arms[i]["probe"]:
                        probes.setdefault(arms[i]["name"], []).append(
                            probe(engines[i], arms[i]["probe"]))
                    vals = [x["tpot"] for x in res["requests"] if x["tpot"]]
                    tpots[arms[i]["name"]].append(1e3 * statistics.fmean(vals))
                    counters[arms[i]["name"]].append(res["counters"])
                    per_step[arms[i]["name"]].append(tokens_per_step(res["requests"]))
                    for total, part in zip(life[arms[i]["name"]],
                                           tokens_by_life(res["requests"])):
                        total[:] = [x + y for x, y in zip(total, part)]
                    spec_rounds[arms[i]["name"]].append(spec[arms[i]["name"]].since(before))
                    step_rounds[arms[i]["name"]].append(with_core_periods(
                        res.get("step_ms"),
                        spec[arms[i]["name"]].core_period_ms[periods_before:],
                        res.get("gc"), res.get("host"),
                        spec[arms[i]["name"]].engine_steps_since(engine_steps_before)))
            base = arms[0]["name"]
            spec_point = {}
            for a in arms:
                rounds = spec_rounds[a["name"]]
                if rounds:
                    total = {k: sum(x[k] for x in rounds) for k in rounds[0]}
                    spec_point[a["name"]] = spec_rates(total, a.get("dynamic", False),
                                                       a.get("k"))
            point = {"concurrency": c, "requests": n, "tpot_ms": tpots,
                     "counters": counters, "tokens_per_step": per_step,
                     "spec": spec_point, "spec_rounds": spec_rounds,
                     "step_ms": step_rounds, "probes": probes, "ratios": {},
                     "tokens_by_life": {
                         name: [s / k if k else None for s, k in zip(*sums_counts)]
                         for name, sums_counts in life.items() if tpots[name]},
                     "bystanders": alive}
            m, lo, hi = ci(tpots[base])
            noise = (max(tpots[base]) - min(tpots[base])) / statistics.median(tpots[base])
            lines.append(f"c={c} ({n} requests x {args.rounds} rounds): {base} "
                         f"median {statistics.median(tpots[base]):.3f} ms, "
                         f"round-to-round spread {100 * noise:.1f}%{note}")
            for a in arms[1:]:
                if a["name"] in failed:
                    lines.append(f"  {a['name']:10} dropped: {failed[a['name']]}")
                    continue
                ratios = [x / y for x, y in zip(tpots[a["name"]], tpots[base])]
                rm, rlo, rhi = ci(ratios)
                point["ratios"][a["name"]] = {"per_round": ratios,
                                              "median": statistics.median(ratios),
                                              "mean": rm, "ci95": [rlo, rhi]}
                lines.append(f"  {a['name']:10} median {statistics.median(tpots[a['name']]):.3f}"
                             f" ms; TPOT / {base}: median {statistics.median(ratios):.4f}, "
                             f"mean {rm:.4f} [95% CI {rlo:.4f}, {rhi:.4f}]; tokens/step "
                             f"{statistics.fmean(per_step[a['name']]):.2f}")
            for a in arms:
                r = spec_point.get(a["name"])
                if r is not None and (r["num_drafts"] or a["k"]):
                    lines.append(f"  {a['name']:10} {spec_line(r)}")
                    by_life = point["tokens_by_life"].get(a["name"]) or []
                    lines.append(f"  {a['name']:10} tokens a step by tenth of a request's "
                                 "life: " + " ".join("-" if x is None else f"{x:.2f}"
                                                     for x in by_life))
            for a in arms:
                if a["name"] in failed:
                    continue
                text = step_line(step_rounds[a["name"]], tpots[a["name"]],
                                 per_step[a["name"]])
                if text is not None:
                    lines.append(f"  {a['name']:10} {text}")
            for name, answers in probes.items():
                lines.append(f"  {name:10} probe per round: {probe_text(answers)}")
            out["points"].append(point)
            out["summary"] = lines
            # After every point, so a run cut by a time limit keeps what it measured.
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(out, indent=1))
            print("\n".join(lines[printed:]), flush=True)
            printed = len(lines)

    measure([])
    idle: list[str] = []  # the bystanders started so far
    kept_bystanders: list = []  # their engines stay up while measured beside
    for group in bystander_groups:
        started = start_engines(group, start, args.dsl_starts_alone)
        if args.pin_engines:
            out["pinned"] = pin_all(args.pin_engines, args.pin_client)
        kept_bystanders.extend(e for e in started if e is not None)
        up = [a["name"] for a, e in zip(group, started) if e is not None]
        down = [a["name"] for a, e in zip(group, started) if e is None]
        if down:
            # Its error is in "failed"; the next groups still start.
            lines.append(f"bystanders {', '.join(down)} did not start"
                         + ("" if up else ": nothing new to measure beside"))
            print(lines[-1], flush=True)
            args.out.write_text(json.dumps(out, indent=1))
        if not up:
            continue
        idle += up
        out["bystanders"].append(list(idle))
        measure(list(idle))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
