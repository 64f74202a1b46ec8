"""Worker extensions for A/B runs that need a variant of the worker vLLM has no
option for (``worker_extension_cls``; ``abab.py --arm-options`` sets it and
calls the method on every worker once the engine is up, before any workload).

- ``SyncHandOffToggle.dsl_disable_sync_hand_off``: the MRV2 runner under sync
  scheduling with DSL hands the scheduler only the drafted slots of each
  request, which waits on the host for the draft loop every step. Turned off,
  it hands the scheduler K placeholder slots per request as without DSL: no
  wait, and the slots after an early exit are verified and rejected, as under
  async scheduling. The A/B of the two asks whether the wait pays.
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
