"""Worker extensions for A/B runs that need a variant of the worker vLLM has no
option for (``worker_extension_cls``; ``abab.py --arm-options`` sets it and
calls the method on every worker once the engine is up, before any workload).

- ``SyncHandOffToggle.dsl_disable_sync_hand_off``: the MRV2 runner under sync
  scheduling with DSL hands the scheduler only the drafted slots of each
  request, which waits on the host for the draft loop every step. Turned off,
  it hands the scheduler K placeholder slots per request as without DSL: no
  wait, and the slots after an early exit are verified and rejected, as under
  async scheduling. The A/B of the two asks whether the wait pays. (Patch 0049
  removed the hand-off; kept for session 16's record.)
- ``FirstPassEagerToggle.draft_first_pass_eager_on_mixed_batches``: with
  ``patches-wip/dsl-pw-first-pass`` the MRV2 standalone draft model's first
  pass replays the draft's PIECEWISE CUDA graphs on a batch that carries
  prompt tokens (or any batch without a FULL first-pass graph), as the
  target's forward does. Turned off, such a pass runs eagerly, as in the
  series: the A/B of the two asks whether it pays (session 18: it does not,
  ``benchmarks/results/2026-12-02-h200-s18/``).
- ``DeviceLoopOff.dsl_close_device_loops``: the MRV2 standalone speculator's
  DSL draft loop runs as device-side WHILE loops (CUDA graphs with a
  conditional node, ``DeviceWhileLoop``). This frees those loop graphs, so
  the host drives the captured draft steps as without cuda-python. As an
  ``abab.py --bystanders`` engine it separates "an idle engine with
  conditional-node graphs alive" from "an idle DSL engine" (session 19: the
  speculative arms were noisy whenever a DSL engine was alive).
- ``GraphLaunchesOff.dsl_launch_every_step``: since 0034-0035 each
  proposal's draft loop setup (``DraftConfidenceExit.begin``) and
  drafted-count record (``DraftedTokenCounts.record``) replay CUDA graphs
  captured at start-up. This frees those graphs, so both launch their Triton
  kernels every proposal as the series did before 0034: the A/B of the two on
  one engine measures what the replays save (``GraphLaunchesOffTimer`` with
  ``HostTimer``'s per-call times; session 40).
- ``StepCostsOff.dsl_unprice_draft_steps``: the stop rule prices a draft step
  at its GPU time ``D(B)`` against the GPU time of the step so far. Where the
  host, not the GPU, sets the engine step's time (a small pair under async
  scheduling: the GPU idles between steps), a draft step that fits in that
  idle time costs no wall time at all. This loads zero costs, so the loop
  drafts while any row clears its floor and cap: the host-bound limit of a
  rule that prices only the GPU time the host does not hide. The A/B against
  the priced rule asks whether pricing the host's time would pay (session 36).
  The served width keeps its own table (the runner's ``draft_step_costs``),
  but not its reading of the draft step: every loop then drafts the width it
  serves, so no served step stopped early, and a block's counterfactual one
  narrower has no price. In session 62 the served width stayed at 3-4 drafts
  at 2-32 requests (it narrows only by exploration), and the arm was
  6.7-11.4% slower than SD K=2 where the priced engine tied or beat it: the
  stop and the width it steers are not separable with this hook.
  ``StepCostsOffTimer`` has ``HostTimer``'s methods too (``proxies-ab.sh``'s
  ``+u`` arms); ``LoopOffUnpricedTimer`` also closes the device loops
  (``DeviceLoopOff``, ``+v`` arms).
- ``HostClockOff.dsl_price_gpu_time_only``: since session 36 the MRV2 runner
  under async scheduling measures the host's time per engine step
  (``HostStepClock``) and the rule does not price the draft-step GPU time the
  host hides. This stops the clock and clears that time, so the rule prices
  every draft step's GPU time as before: the A/B of the two asks what
  measuring the host's time gives.
- ``HostStepProbe.dsl_host_step_ms``: reads, without changing anything, the
  host time per engine step the MRV2 DSL stop rule was last handed (None
  without the rule, 0.0 before the first estimate, under sync scheduling or
  with the clock off). ``abab.py --arm-options '{"<label>": {"probe":
  "dsl_host_step_ms"}}'`` calls it after each measured round: the rule's
  input beside the step times it should explain. ``HostClockOff`` has it too.
- ``ServedKeepsWidth.dsl_served_keeps_width``: the served width rule forgets
  a batch size's evidence when what its requests get a step shifts by more
  than ~22% from what the width was chosen for, and starts again from the
  nearest settled batch size's width (else the cap). On the small pair at 8
  requests the batch size of 8 forgot 16 and 14 times in two runs (waves of
  requests at different points of their lives), started again at the cap
  each time and ran there nearly throughout (one move to 3 in one run),
  where SD K = 2 was 5.6% cheaper a token (session 38). This makes it forget
  the evidence but keep its width, exploring both neighbours again as after
  a move (the engine core's rule, class-wide: one
  GPU puts the worker in the engine core's process). The A/B against the
  series asks whether keeping the width pays.
  ``ServedKeepsWidthTimer`` has ``HostTimer``'s methods too.
- ``ServedNarrowsOnTokens.dsl_served_narrows_on_tokens``: with
  patch 0037 the served width moves to a
  narrower width only where the paired units' steps were shorter there as
  well as their token cheaper (session 41: on the small pair, a host-bound
  engine, one request moved from 4 to 3 on the cost test and DSL lost 2.6% of
  its tokens a step). This turns that check off (class-wide, as
  ``ServedKeepsWidth``), for an arm that serves as the series did.
  ``ServedNarrowsOnTokensTimer`` has ``HostTimer``'s methods too.
- ``ServedExploresUntilCompared.dsl_served_explores_until_compared``: the
  served width explores a neighbouring width one block in 16 even once both
  neighbours were compared (to return to a width that became cheaper). This
  ends that exploration (class-wide), for an arm that measures what it costs
  (session 50: DSL at cap 4 ran 0.992x DSL at a fixed width of 2 at 64
  requests on one H100, 11.5% of its full-batch steps off that width).
- ``ServedForgetsOneRequestOnly.dsl_served_forgets_one_request_only``: the
  served width rule forgets a batch size's evidence where what its requests
  get a step at its width drifts by more than ``_SHIFT`` from what the width
  was chosen for, and starts again from a borrowed width with its paired
  windows cleared. In session 65's A/B (one H100, cap 8, one wave a round)
  the batch sizes of 32 and 64 forgot 9 times in one minute, on 24-29% more
  tokens a step (likely a wave's requests, started together, getting more
  late in their lives), and stayed at 3 drafts with no comparison finished, where SD K=2 was
  1.6-6.7% cheaper a token. This lets only the batch size of one forget (the
  case the rule was written for), class-wide as ``ServedKeepsWidth``; False
  where no calling engine core has the rule, as
  ``ServedExploresUntilCompared``. The A/B against the series at cap 8 asks
  whether the forgets are what keeps it at 3.
  ``ServedForgetsOneRequestOnlyTimer`` has ``HostTimer``'s methods too.
- ``KnownDraftsOff.dsl_known_drafts_off``: with
  patches 0038-0039 the speculator claims, before a
  loop whose every step the host hides, that every row drafts its K, and
  the runner then neither records nor reads back the drafted counts. This
  turns the claim off for one engine (its speculator instance), for an arm
  that records and reads them every step as the series does.
  ``KnownDraftsOffTimer`` has ``HostTimer``'s methods too.
- ``FirstPassBeginOff.dsl_first_pass_begin_off``: with
  patch 0040 the first draft pass's graph sets
  the DSL draft loop up; this disarms that for one engine, which then sets
  its loop up with a launch of its own every proposal, as the series does.
- ``SeriesDsl.dsl_as_the_series``: the three above turned off at once,
  for a control arm that runs DSL as the series did before 0037-0040. ``SeriesDslTimer`` has ``HostTimer``'s methods too.
- ``HostTimer.host_timer_on`` / ``host_timer_read``: times on the host, with
  no profiler, what the worker runs each engine step: the steps themselves
  (wall time and the stepping thread's CPU time from one ``execute_model``
  to the next, the ``HostStepClock``'s measure, for any arm) and, inclusive,
  ``execute_model``, ``sample_tokens``, the drafter's ``propose`` and the
  calls only a DSL engine makes (``begin``: the exit state's set-up,
  ``record`` and ``snapshot``, ``gather`` before 0036: the drafted counts,
  ``clock``: the host clock),
  the wait for a step's output (``wait_output``: the wait for its copy,
  then its conversion to lists, tens of µs when nothing is waited for; a
  long wait whose CPU time is close to its wall time spins, which the host
  clock counts as the host's work), and the
  scheduler's ``schedule`` and ``update_from_output`` with DSL's hand-off to
  the served width inside it (``served_width``), and the garbage collector's
  runs by generation (``gc0``-``gc2``, on any thread of the process, also
  inside whichever call triggered them: session 40 could not place the DSL
  step's extra time over SD's beyond DSL's named calls, and more allocation
  per step would show here).
  ``host_timer_on`` as the arm's ``rpc``, ``host_timer_read`` as its
  ``probe``: each round's answer is per step and starts afresh (session 38:
  a DSL step at one request took ~0.45 ms more host time than SD's at the
  same tokens a step; this says where). With ``DSL_DUMP_LOOP_GRAPHS=<dir>``
  in the engine's environment, ``host_timer_on`` also writes the DSL draft
  loop's graphs there (``dump_loop_graphs``), once.
"""

from __future__ import annotations

import functools
import gc
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable


class SyncHandOffToggle:
    def dsl_disable_sync_hand_off(self) -> bool:
        """True if the hand-off was on and is now off; False if there was
        none to turn off (async scheduling, no DSL, or the V1 runner)."""
        runner = self.model_runner  # type: ignore[attr-defined]
        if not getattr(runner, "hand_off_num_drafted", False):
            return False
        runner.hand_off_num_drafted = False
        runner.sync_drafted_counts = None
        return True


class FirstPassEagerToggle:
    def draft_first_pass_eager_on_mixed_batches(self) -> bool:
        """True if the draft's first pass could replay PIECEWISE graphs and
        now runs those batches eagerly; False if it could not (no draft
        model speculator, or no PIECEWISE first-pass graphs)."""
        speculator = getattr(self.model_runner, "speculator", None)  # type: ignore[attr-defined]
        manager = getattr(speculator, "prefill_cudagraph_manager", None)
        if manager is None or manager.cudagraph_mode.mixed_mode().name != "PIECEWISE":
            return False
        dispatch = speculator._dispatch_prefill

        def full_or_eager(input_batch, num_reqs, eager, num_speculative_steps):
            desc = dispatch(input_batch, num_reqs, eager, num_speculative_steps)
            if desc.cg_mode.name == "PIECEWISE":
                return dispatch(input_batch, num_reqs, True, num_speculative_steps)
            return desc

        speculator._dispatch_prefill = full_or_eager
        return True


class DeviceLoopOff:
    def dsl_close_device_loops(self) -> bool:
        """True if the draft loop ran as device-side loops and the host now
        drives its steps; False if there were none (no DSL, no cuda-python,
        eager draft steps, or not the MRV2 standalone speculator)."""
        speculator = getattr(self.model_runner, "speculator", None)  # type: ignore[attr-defined]
        if not getattr(speculator, "decode_loops", None):
            return False
        speculator._close_decode_loops()
        return True


class StepCostsOff:
    def dsl_unprice_draft_steps(self) -> bool:
        """True if the stop rule had step costs and now has none (every draft
        step free); False if there was no priced rule (no DSL, or a
        speculator without step costs)."""
        speculator = getattr(self.model_runner, "speculator", None)  # type: ignore[attr-defined]
        exit_state = getattr(speculator, "confidence_exit", None)
        costs = getattr(exit_state, "step_costs", None)
        if costs is None or not bool((costs > 0).any()):
            return False
        zeros = [0.0] * costs.shape[0]
        exit_state.set_step_costs(zeros, zeros)
        return True


class HostStepProbe:
    def dsl_host_step_ms(self) -> float | None:
        """The host time per engine step (ms) the stop rule last received,
        or None where the runner's drafter has no DSL exit state."""
        runner = self.model_runner  # type: ignore[attr-defined]
        state = getattr(getattr(runner, "speculator", None), "confidence_exit", None)
        host_ms = getattr(state, "host_ms", None)
        if host_ms is None:
            return None
        from vllm.utils.gpu_sync_debug import gpu_sync_allowed

        with gpu_sync_allowed():  # between rounds, outside any measured step
            return float(host_ms[0])


class HostClockOff(HostStepProbe):
    def dsl_price_gpu_time_only(self) -> bool:
        """True if the runner measured the host's time per step and now does
        not (the rule prices GPU time alone); False if it did not (no DSL,
        sync scheduling, unpriced draft steps, or a series without it)."""
        runner = self.model_runner  # type: ignore[attr-defined]
        if getattr(runner, "host_step_clock", None) is None:
            return False
        runner.host_step_clock = None
        runner.speculator.set_host_step_ms(0.0)
        return True


# A period from one step's start to the next over this many times the median
# spans a wait for work, not a step (see _StepTimes.read).
IDLE_GAP_FACTOR = 4


class _StepTimes:
    """Inclusive wall and thread CPU time of wrapped calls, and the engine
    step's period, since the last :meth:`read`."""

    def __init__(self) -> None:
        self.calls: dict[str, list[int]] = {}  # name -> [calls, wall ns, cpu ns]
        self.steps = 0
        self.step_wall_ns: list[int] = []
        self.step_cpu_ns: list[int] = []
        self._last: tuple[int, int, int] | None = None  # thread, wall, cpu

    def wrap(self, owner: object, attr: str, name: str, *, step: bool = False) -> None:
        """Time ``owner.attr`` (an instance attribute shadows the method);
        with ``step``, each call also starts an engine step."""
        inner: Callable = getattr(owner, attr)
        totals = self.calls.setdefault(name, [0, 0, 0])

        @functools.wraps(inner)
        def timed(*args, **kwargs):
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            if step:
                self._step_started(wall, cpu)
            try:
                return inner(*args, **kwargs)
            finally:
                totals[0] += 1
                totals[1] += time.perf_counter_ns() - wall
                totals[2] += time.thread_time_ns() - cpu

        setattr(owner, attr, timed)

    def time_gc(self) -> Callable:
        """Also time the garbage collector's runs, as calls named ``gc0``,
        ``gc1`` and ``gc2`` by generation, on any thread (a collection runs
        on the thread whose allocation triggers it, so its time is inside
        whichever timed call that was, too). Returns the callback added to
        ``gc.callbacks``, for the caller to remove."""
        totals = [self.calls.setdefault(f"gc{g}", [0, 0, 0]) for g in range(3)]
        started: dict[int, tuple[int, int]] = {}

        def on_gc(phase: str, info: dict) -> None:
            thread = threading.get_ident()
            if phase == "start":
                started[thread] = (time.perf_counter_ns(), time.thread_time_ns())
                return
            begun = started.pop(thread, None)
            if begun is None:  # timed from the middle of a collection
                return
            generation = totals[min(int(info.get("generation", 2)), 2)]
            generation[0] += 1
            generation[1] += time.perf_counter_ns() - begun[0]
            generation[2] += time.thread_time_ns() - begun[1]

        gc.callbacks.append(on_gc)
        return on_gc

    def _step_started(self, wall: int, cpu: int) -> None:
        # A thread's CPU time is its own: a step on another thread starts afresh.
        self.steps += 1
        thread = threading.get_ident()
        last, self._last = self._last, (thread, wall, cpu)
        if last is not None and last[0] == thread:
            self.step_wall_ns.append(wall - last[1])
            self.step_cpu_ns.append(cpu - last[2])

    def read(self) -> dict:
        """Since the last read, then start afresh: ``steps`` (engine steps
        started), the median and the mean wall and thread CPU time from one
        step's start to the next (ms), the same means over the busy periods
        only (``step_busy_*``: leaving out the ``idle_gaps``, periods over
        ``IDLE_GAP_FACTOR`` times the median, which wait for work; the calls'
        times are means, so a step's time outside them is the busy mean less
        their sum), and per wrapped call its calls, wall and CPU time (µs) a
        step."""
        steps = self.steps
        # A period that spans a wait for work (no request in flight: between
        # a client's requests, between rounds) is no step's: session 41's
        # means over every period were 4.2-32 ms against medians of 3.2-5.0.
        wall, cpu = self.step_wall_ns, self.step_cpu_ns
        limit = IDLE_GAP_FACTOR * statistics.median(wall) if wall else 0
        busy = [i for i, w in enumerate(wall) if w <= limit]
        out: dict = {
            "steps": steps,
            "step_wall_ms": _median_ms(wall),
            "step_cpu_ms": _median_ms(cpu),
            "step_wall_mean_ms": _mean_ms(wall),
            "step_cpu_mean_ms": _mean_ms(cpu),
            "step_busy_wall_mean_ms": _mean_ms([wall[i] for i in busy]),
            "step_busy_cpu_mean_ms": _mean_ms([cpu[i] for i in busy]),
            "idle_gaps": len(wall) - len(busy),
        }
        for name, totals in self.calls.items():
            calls, wall, cpu = totals
            out[name] = {
                "calls": calls / steps if steps else None,
                "wall_us": wall / 1e3 / steps if steps else None,
                "cpu_us": cpu / 1e3 / steps if steps else None,
            }
            totals[:] = [0, 0, 0]
        self.steps = 0
        self.step_wall_ns.clear()
        self.step_cpu_ns.clear()
        return out


def loop_sizes_to_dump(sizes: list[int]) -> list[int]:
    """The batch sizes whose draft loop graph ``dump_loop_graphs`` writes:
    the smallest and the largest captured (one request's loop and the full
    batch's), each once."""
    return sorted({min(sizes), max(sizes)}) if sizes else []


def dump_loop_graphs(speculator: object, out_dir: str) -> list[str]:
    """Write the DSL draft loop's CUDA graph (``DeviceWhileLoop``: control;
    WHILE { the captured decode step; control }) as a verbose Graphviz file
    (``cudaGraphDebugDotPrint``: every node's kind, kernel, launch shape and
    parameters, every edge) for ``loop_sizes_to_dump`` of the captured batch
    sizes: what the device runs each time the loop's body starts (session
    55: ~42 µs in-graph, where a body of plain kernels costs ~4-6 µs).
    Returns the files written; none where the speculator has no device
    loops. Reads the loops' private graph handle: a benchmark's probe."""
    loops = getattr(speculator, "decode_loops", None) or {}
    by_size = {desc.num_tokens: loop for desc, loop in loops.items()}
    if not by_size:
        return []
    from cuda.bindings import runtime as rt

    os.makedirs(out_dir, exist_ok=True)
    verbose = int(rt.cudaGraphDebugDotFlags.cudaGraphDebugDotFlagsVerbose)
    written = []
    for size in loop_sizes_to_dump(list(by_size)):
        path = os.path.join(out_dir, f"draft-loop-{size}.dot")
        result = rt.cudaGraphDebugDotPrint(by_size[size]._graph, path.encode(), verbose)
        err = result[0] if isinstance(result, tuple) else result
        if int(err) == 0:
            written.append(path)
    return written


def _median_ms(ns: list[int]) -> float | None:
    return statistics.median(ns) / 1e6 if ns else None


def _mean_ms(ns: list[int]) -> float | None:
    return statistics.fmean(ns) / 1e6 if ns else None


class HostTimer:
    def host_timer_on(self) -> bool:
        """True once the worker's step and its calls are timed; False if
        they already were. The calls a runner or drafter lacks (every DSL
        call without DSL) are not timed and not reported."""
        runner = self.model_runner  # type: ignore[attr-defined]
        if getattr(runner, "_host_timer", None) is not None:
            return False
        times = _StepTimes()
        times.wrap(runner, "execute_model", "execute_model", step=True)
        times.time_gc()
        speculator = getattr(runner, "speculator", None)
        counts = getattr(runner, "drafted_token_counts", None)
        clock = getattr(runner, "host_step_clock", None)
        for owner, attr, name in (
            (runner, "sample_tokens", "sample_tokens"),
            (speculator, "propose", "propose"),
            (speculator, "_begin_confidence_exit", "begin"),
            (counts, "record", "record"),
            # Since 0036 one copy of the counts (snapshot); gather before it.
            (counts, "snapshot", "snapshot"),
            (counts, "gather", "gather"),
            (clock, "step_started", "clock"),
        ):
            if owner is not None and callable(getattr(owner, attr, None)):
                times.wrap(owner, attr, name)
        # Class-wide, once per process, for the engine core this worker runs
        # in (one GPU: the worker lives in the engine core's process and
        # thread): the wait for a step's output (CPU time there is a wait
        # that spins, which the host clock would count as work), and the
        # scheduler's two calls a step with DSL's hand-off to the served
        # width inside the second.
        from vllm.v1.core.sched import scheduler
        from vllm.v1.worker.gpu import async_utils

        for cls, attr, name in (
            (async_utils.AsyncOutput, "get_output", "wait_output"),
            (scheduler.Scheduler, "schedule", "schedule"),
            (scheduler.Scheduler, "update_from_output", "update_from_output"),
            (scheduler.Scheduler, "_observe_draft_width", "served_width"),
        ):
            method = getattr(cls, attr, None)
            if callable(method) and not getattr(method, "_host_timed", False):
                times.wrap(cls, attr, name)
                getattr(cls, attr)._host_timed = True
        runner._host_timer = times
        # DSL_DUMP_LOOP_GRAPHS=<dir>: the draft loop's graphs, once, where
        # the runner has them (a DSL arm; no device time). A probe that
        # fails says so on stderr and leaves the timing on.
        if (out_dir := os.environ.get("DSL_DUMP_LOOP_GRAPHS")) and speculator is not None:
            try:
                dump_loop_graphs(speculator, out_dir)
            except Exception as e:  # noqa: BLE001 - a probe must not stop the arm
                print(f"ab_hooks: no loop graphs written ({e!r})", file=sys.stderr)
        return True

    def host_timer_read(self) -> dict | None:
        """What :meth:`_StepTimes.read` says since the last read; None
        before ``host_timer_on``."""
        times = getattr(self.model_runner, "_host_timer", None)  # type: ignore[attr-defined]
        return None if times is None else times.read()


class ServedKeepsWidth:
    def dsl_served_keeps_width(self) -> bool:
        """True once the engine core's served width rule keeps a batch
        size's width when it forgets its evidence; False if it already did.
        Since patch 0043 the series keeps it too where no other batch size
        has settled (it borrows a settled one's width where one has)."""
        from vllm.v1.spec_decode.dynamic import served_width

        cls = served_width.ServedWidthController
        if getattr(cls._forget, "_keeps_width", False):
            return False
        forget = cls._forget

        def forget_keeping_width(controller, size, shift):
            width = size.width
            forget(controller, size, shift)
            # Evidence cleared as the series does, at the width it had; an
            # unsettled batch size runs at a borrowed width (else the cap),
            # so it counts as settled, its neighbours open to explore.
            size.restart(width)
            size.settled = True

        forget_keeping_width._keeps_width = True  # type: ignore[attr-defined]
        cls._forget = forget_keeping_width
        return True


class ServedNarrowsOnTokens:
    def dsl_served_narrows_on_tokens(self) -> bool:
        """True once the engine core's served width rule moves to a narrower
        width on the price of its token alone, as before
        patch 0037 (which also asks for shorter
        steps there); False if the rule has no such check (the series
        without that patch) or it is already off."""
        from vllm.v1.spec_decode.dynamic import served_width

        window = getattr(served_width, "_Window", None)
        gate = getattr(window, "steps_shorter", None)
        if gate is None or getattr(gate, "_off", False):
            return False

        def steps_shorter_always(self) -> bool:
            return True

        steps_shorter_always._off = True  # type: ignore[attr-defined]
        window.steps_shorter = steps_shorter_always  # type: ignore[union-attr]
        return True


class ServedExploresUntilCompared:
    def dsl_served_explores_until_compared(self) -> bool:
        """True once the engine core's served width rule stops exploring a
        batch size's neighbours after both were compared: no block in
        ``_EXPLORE_SLOW`` at a neighbour any more (class-wide, as
        ``ServedKeepsWidth``; a batch size still explores every
        ``_EXPLORE_FAST``-th block while a neighbour is open, after a move
        or a forget, and the slot's price stays the last one measured).
        False if it already does, or where no engine core whose scheduler
        has a served width controller calls it (on one GPU the worker runs in
        the engine core's process, on the thread that serves the rpc:
        elsewhere the change would reach nothing, and ``abab.py`` stops on a
        False). Session 50: on one H100 DSL at cap 4 ran 0.992x DSL at a
        fixed width of 2 at 64 requests, with 11.5% of its full-batch steps
        at widths 1 and 3; an arm with this hook says how much of that the
        slow exploration is.

        The controller is looked for on the calling threads' stacks, not in
        ``gc.get_objects()``: the engine core freezes its heap after start-up
        (``gc.freeze()``), and frozen objects are not listed there (session
        51's run of this arm said False on the engine that had one)."""
        import sys

        from vllm.v1.spec_decode.dynamic import served_width

        if served_width._EXPLORE_SLOW == sys.maxsize:
            return False
        if not _engine_core_has(served_width.ServedWidthController):
            return False
        served_width._EXPLORE_SLOW = sys.maxsize
        return True


class ServedForgetsOneRequestOnly:
    def dsl_served_forgets_one_request_only(self) -> bool:
        """True once the engine core's served width rule lets only the batch
        size of one request forget its evidence (larger batch sizes keep
        their width, windows and reference when what their requests get a
        step drifts); False if it already does, or where no engine core
        whose scheduler has a served width controller calls it (see
        ``ServedExploresUntilCompared``)."""
        cls = _served_controller_to_wrap("_forget", "_one_request_only")
        if cls is None:
            return False
        forget = cls._forget

        def forget_one_request_only(controller, size, shift):
            if size.rows == 1:
                forget(controller, size, shift)

        forget_one_request_only._one_request_only = True  # type: ignore[attr-defined]
        cls._forget = forget_one_request_only
        return True


class ServedWidthExplains:
    def dsl_served_width_explains(self) -> bool:
        """True once the engine core's served width rule logs why a batch
        size keeps or leaves its width, and decides nothing differently:

        - each test of a window, at INFO (``served width test:``): the batch
          size, its width and the other width, paired blocks or blocks priced
          one narrower, the units, the mean log cost ratio and its t bound
          (a move needs mean < -``_MARGIN`` and bound < 0); for one narrower
          also whether the loop never filled the width, the most it drafted,
          the draft step's and the slot's prices, and what the window's steps
          one narrower save of their time and lose of their tokens;
        - every ``_EXPLAIN_EVERY_S`` s of steps, per batch size
          (``served width blocks:``): the blocks started, finished and
          compared since the last such line, those explored, and why a
          finished block was not compared (too few measured steps, or stale).

        Session 66: at a cap of 8 the batch sizes of 8-64 served 3 drafts
        with or without forgetting (``+f``), and the rule, which logs only
        its moves, logged none after its first second; this says which
        part held them. False if it already logs, or where no
        engine core whose scheduler has a served width controller calls it
        (see ``ServedExploresUntilCompared``)."""
        from vllm.v1.spec_decode.dynamic import served_width

        if _served_controller_to_wrap("_finish_block", "_explains") is None:
            return False
        _explain_served_width(served_width)
        return True


class ServedPricesSlotFirst:
    def dsl_served_prices_slot_first(self) -> bool:
        """True once the engine core's served width rule explores a batch
        size's narrower neighbour every ``_EXPLORE_FAST``-th block until
        the slot one narrower is priced at its width (the series counts the
        narrower width as compared, explored one block in
        ``_EXPLORE_SLOW``, as soon as the width has units priced one
        narrower, and until the slot is priced those units count it as
        nothing, which never favours narrowing); where the loop never filled
        the width (it narrows whatever the slot costs) the series' rule
        stands. False if it already does,
        or where no engine core whose scheduler has a served width
        controller calls it.

        Session 66: in a model of cap 8 on the drafter's traces
        (``benchmarks/results/2026-12-07-cpu-s66-cap8-life/``) the batch
        size of 8 held 3 drafts through windows of 4, 8 and 16 units with
        the slot not priced yet; exploring one narrower first reached 2
        sooner at 64 requests (+0.6-0.8% a token there, within +-0.3% at 8
        and 32). It is that model's ``sed`` variant, as a hook, with the
        never-filled exemption of session 67's wip
        (``benchmarks/results/2026-12-07-s67-plan/wip-slot-first.patch``)."""
        from vllm.v1.spec_decode.dynamic import served_width

        cls = _served_controller_to_wrap("_start_block", "_slot_first")
        if cls is None:
            return False
        start_block = cls._start_block

        @functools.wraps(start_block)
        def start_block_slot_first(controller, size):
            held = size.narrower
            if not (
                size.width > 1
                and size.last_slot is None
                and held.ratios
                and held.widest >= size.width
            ):
                return start_block(controller, size)
            # The series adds the narrower width to ``compared`` where the
            # window has units: hidden for this call.
            width = size.width
            size.narrower = served_width._Window()
            try:
                return start_block(controller, size)
            finally:
                if size.width != width:  # restarted: the series cleared it
                    held.clear()
                size.narrower = held

        start_block_slot_first._slot_first = True  # type: ignore[attr-defined]
        cls._start_block = start_block_slot_first
        return True


class ServedPricesDraftStepAtStartUp:
    def dsl_served_prices_draft_step_at_start_up(self) -> bool:
        """True once the engine core's served width rule prices a batch
        size's draft step at what start-up timed one draft forward of as
        many rows alone (the series' ceiling), where it timed one, and from
        the served steps (the series' price) only where it did not; the
        served price is still read and logged. False if it already does, or
        where no engine core whose scheduler has a served width controller
        calls it.

        Session 68: on session 67's H100 at 32 requests
        (``benchmarks/results/2026-12-07-h100-s67/``) the served steps
        priced a draft step at 1.38-1.55 ms where start-up timed 1.655 ms
        (28 rows) and 1.696 ms (32), and the client's full steps at 32 that
        drafted 3 took 1.63 ms more than those that drafted 2 at the same
        width. At 32 the tests of 3 against 2 held (one narrower +0.6% to
        +1.5% a token, the slot priced at ~0) where SD K=2 was 2.4% cheaper
        a token; on the served steps one narrower is 0-1.5% cheaper there,
        at the rule's margin (``benchmarks/results/2026-12-07-cpu-s68-draft-
        step-price/``). Start-up times a draft step at 32 rows 4-11% above a
        served one, so this prices it high: a test of how much of the gap
        moving 32 requests to 2 recovers, not a price to ship."""
        from vllm.v1.spec_decode.dynamic import served_width

        size_cls = served_width._Size
        draft_step_time = size_cls.draft_step_time
        if getattr(draft_step_time, "_start_up", False) or not _engine_core_has(
                served_width.ServedWidthController):
            return False

        @functools.wraps(draft_step_time)
        def draft_step_time_at_start_up(size):
            served = draft_step_time(size)
            if size.draft_step_ceiling is None:
                return served
            size.last_draft_step = size.draft_step_ceiling
            return size.last_draft_step

        draft_step_time_at_start_up._start_up = True  # type: ignore[attr-defined]
        size_cls.draft_step_time = draft_step_time_at_start_up
        return True


_EXPLAIN_EVERY_S = 10.0


def _explain_served_width(served_width) -> None:
    """Wrap the served width rule's window tests and block bookkeeping with
    logging (``ServedWidthExplains``); the decisions are the rule's own."""
    cls = served_width.ServedWidthController
    logger = served_width.logger
    mean_and_bound = served_width._mean_and_bound
    start_block, finish_block = cls._start_block, cls._finish_block
    # Per batch size (rows): started, finished, compared, explored,
    # unmeasured, stale, since the last summary.
    counts: dict[int, list[int]] = {}
    last = [time.monotonic()]

    def explained_mean_and_bound(ratios):
        mean, bound = mean_and_bound(ratios)
        caller = sys._getframe(1)
        where = caller.f_code.co_name
        if where not in ("_check_narrower", "_finish_block"):
            return mean, bound
        f = caller.f_locals
        size, block, window = f["size"], f["block"], f["window"]
        if where == "_check_narrower":
            never_filled = window.all_equal or window.widest < size.width
            detail = (
                f" narrower: never filled {never_filled}, drafted at most "
                f"{window.widest}, draft step {served_width._price(size.last_draft_step)}, "
                f"slot {served_width._price(size.last_slot)}")
            # What the window's steps priced one narrower save of their time
            # and lose of their tokens (the log of a move says it; a held
            # test did not).
            time_, tokens, narrower_time, narrower_tokens = window.totals
            if time_ > 0 and tokens > 0:
                detail += (
                    f", saves {100 * (1 - narrower_time / time_):.1f}% of the time, "
                    f"loses {100 * (1 - narrower_tokens / tokens):.1f}% of the tokens")
            other = size.width - 1
        else:
            detail = " paired"
            other = block.width
        logger.info(
            "served width test: batch size %d at %d vs %d, %d units, mean %+.4f, "
            "bound %+.4f%s", size.rows, size.width, other, len(ratios), mean,
            bound, detail)
        return mean, bound

    @functools.wraps(start_block)
    def explained_start_block(controller, size):
        block = start_block(controller, size)
        counts.setdefault(size.rows, [0] * 6)[0] += 1
        return block

    @functools.wraps(finish_block)
    def explained_finish_block(controller, size, block):
        c = counts.setdefault(size.rows, [0] * 6)
        c[1] += 1
        if block.sums() is None:
            c[4] += 1
        elif (block.steps_seen != served_width._BLOCK_STEPS
              or controller._steps - block.start > served_width._STALE_STEPS):
            c[5] += 1
        else:
            c[2] += 1
            c[3] += block.explore
        finish_block(controller, size, block)
        now = time.monotonic()
        if now - last[0] >= _EXPLAIN_EVERY_S:
            last[0] = now
            logger.info("served width blocks: %s", "; ".join(
                f"{rows} rows at {controller._state[controller._position[rows]].width}: "
                f"started {c[0]}, finished {c[1]}, compared {c[2]} ({c[3]} explored), "
                f"too few measured {c[4]}, stale {c[5]}"
                for rows, c in sorted(counts.items())))
            counts.clear()

    explained_finish_block._explains = True  # type: ignore[attr-defined]
    served_width._mean_and_bound = explained_mean_and_bound
    cls._start_block = explained_start_block
    cls._finish_block = explained_finish_block


def _served_controller_to_wrap(method: str, flag: str):
    """vLLM's ``ServedWidthController`` class, where its ``method`` is not yet
    wrapped by a hook that marks it with ``flag`` and an engine core in this
    process calls with one (``_engine_core_has``); else None (the served
    width hooks then say False)."""
    from vllm.v1.spec_decode.dynamic import served_width

    cls = served_width.ServedWidthController
    if getattr(getattr(cls, method), flag, False) or not _engine_core_has(cls):
        return None
    return cls


def _engine_core_has(controller_cls: type) -> bool:
    """Whether a method of an ``EngineCore`` runs on a stack of this process
    (any thread's, the caller's among them: the engine core serves the rpc
    from its busy loop) with a scheduler whose ``draft_width_controller`` is
    a ``controller_cls``."""
    import sys

    from vllm.v1.engine.core import EngineCore

    for frame in sys._current_frames().values():
        while frame is not None:
            core = frame.f_locals.get("self")
            if isinstance(core, EngineCore) and isinstance(
                    getattr(getattr(core, "scheduler", None),
                            "draft_width_controller", None), controller_cls):
                return True
            frame = frame.f_back
    return False


class GraphLaunchesOff:
    def dsl_launch_every_step(self) -> bool:
        """True if DSL's loop setup or drafted-count record replayed captured
        graphs (0034-0035) and now each launches its Triton kernel every
        proposal, as before 0034; False if there were none (a series before
        0034, no DSL, or no CUDA graphs)."""
        runner = self.model_runner  # type: ignore[attr-defined]
        exit_state = getattr(getattr(runner, "speculator", None), "confidence_exit", None)
        counts = getattr(runner, "drafted_token_counts", None)
        freed = False
        for graphs in (getattr(exit_state, "_begin_graphs", None),
                       getattr(counts, "_record_graphs", None)):
            if graphs:  # LaunchGraphs (0034-0035)
                graphs.clear()
                freed = True
        return freed


class KnownDraftsOff:
    def dsl_known_drafts_off(self) -> bool:
        """True once the engine's DSL speculator never claims on the host
        that every row drafts its K (patches 0038-0039):
        every proposal records its drafted counts on the device and the
        verifying step reads them back, as the series without that wip does;
        False where the speculator makes no such claim or it is already
        off."""
        speculator = getattr(self.model_runner, "speculator", None)  # type: ignore[attr-defined]
        note = getattr(speculator, "_note_known_drafts", None)
        if note is None or getattr(note, "_off", False):
            return False

        def never_known(*args, **kwargs) -> None:
            speculator.known_drafts = None

        never_known._off = True  # type: ignore[attr-defined]
        speculator._note_known_drafts = never_known
        speculator.known_drafts = None
        return True


class FirstPassBeginOff:
    def dsl_first_pass_begin_off(self) -> bool:
        """True once the engine's standalone drafter sets its DSL draft loop
        up with a launch of its own every proposal, as the series does,
        instead of inside its first pass's graph
        (patch 0040): the set-up the graphs
        recorded is disarmed for good and never armed again. False where
        the first pass records no set-up or it is already off."""
        speculator = getattr(self.model_runner, "speculator", None)  # type: ignore[attr-defined]
        if not getattr(speculator, "_begin_in_first_pass", False):
            return False
        speculator._begin_in_first_pass = False
        speculator.confidence_exit.arm_recorded_begin(False)
        return True


class SeriesDsl(KnownDraftsOff, FirstPassBeginOff, ServedNarrowsOnTokens):
    def dsl_as_the_series(self) -> list[bool]:
        """The engine's DSL as main's series ran it before patches 0037-0040:
        each patch's behaviour turned off (what each hook answered, in that
        order: the served width's step gate, the host-known drafted counts,
        the set-up in the first pass's graph)."""
        return [
            self.dsl_served_narrows_on_tokens(),
            self.dsl_known_drafts_off(),
            self.dsl_first_pass_begin_off(),
        ]


class GraphLaunchesOffTimer(GraphLaunchesOff, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_launch_every_step", "host_timer_on"]``."""


class ServedKeepsWidthTimer(ServedKeepsWidth, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_served_keeps_width", "host_timer_on"]``."""


class ServedForgetsOneRequestOnlyTimer(ServedForgetsOneRequestOnly, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_served_forgets_one_request_only",
    "host_timer_on"]`` (``proxies-ab.sh``'s ``+f`` arms)."""


class ServedWidthExplainsTimer(ServedWidthExplains, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_served_width_explains",
    "host_timer_on"]`` (``proxies-ab.sh``'s ``+e`` arms)."""


class ServedPricesSlotFirstExplainsTimer(ServedPricesSlotFirst, ServedWidthExplains,
                                          HostTimer):
    """All three, for one arm: ``"rpc": ["dsl_served_prices_slot_first",
    "dsl_served_width_explains", "host_timer_on"]`` (``proxies-ab.sh``'s
    ``+s`` arms)."""


class ServedPricesAtStartUpExplainsTimer(ServedPricesDraftStepAtStartUp,
                                        ServedPricesSlotFirst, ServedWidthExplains,
                                        HostTimer):
    """Slot first with the draft step priced at start-up, for one arm:
    ``"rpc": ["dsl_served_prices_draft_step_at_start_up",
    "dsl_served_prices_slot_first", "dsl_served_width_explains",
    "host_timer_on"]`` (``proxies-ab.sh``'s ``+d`` arms)."""


class ServedNarrowsOnTokensTimer(ServedNarrowsOnTokens, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_served_narrows_on_tokens",
    "host_timer_on"]``."""


class KnownDraftsOffTimer(KnownDraftsOff, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_known_drafts_off", "host_timer_on"]``."""


class SeriesDslTimer(SeriesDsl, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_as_the_series", "host_timer_on"]``."""


class StepCostsOffTimer(StepCostsOff, HostTimer):
    """Both, for one arm: ``"rpc": ["dsl_unprice_draft_steps", "host_timer_on"]``."""


class LoopOffUnpricedTimer(DeviceLoopOff, StepCostsOff, HostTimer):
    """The stop unpriced and the device loop closed, host timed, for one
    arm: ``"rpc": ["dsl_close_device_loops", "dsl_unprice_draft_steps",
    "host_timer_on"]`` (``proxies-ab.sh``'s ``+v`` arms). Every loop drafts the
    width it serves, its steps launched by the host as captured graphs, as
    SD's are: against ``+u`` (the same, in the WHILE loop) it measures what
    the device loop costs a step; against SD K at the same width, what DSL's
    other per-step work costs (session 61)."""
