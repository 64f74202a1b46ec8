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
- ``StepCostsOff.dsl_unprice_draft_steps``: the stop rule prices a draft step
  at its GPU time ``D(B)`` against the GPU time of the step so far. Where the
  host, not the GPU, sets the engine step's time (a small pair under async
  scheduling: the GPU idles between steps), a draft step that fits in that
  idle time costs no wall time at all. This loads zero costs, so the loop
  drafts while any row clears its floor and cap: the host-bound limit of a
  rule that prices only the GPU time the host does not hide. The A/B against
  the priced rule asks whether pricing the host's time would pay (session 36).
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
"""

from __future__ import annotations


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
