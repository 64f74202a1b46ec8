"""pytest plugin of scripts/lib/common.sh's upstream_pytest: keep vLLM's per-test
garbage collection off the import-time heap.

vLLM's tests/conftest.py tears every test down with
``cleanup_dist_env_and_memory()``, which calls ``gc.unfreeze()`` then
``gc.collect()``: a full collection over everything torch, transformers, vLLM
and the test modules allocated when they were imported (about 650,000 objects,
0.3 s here), after every test. Of a CPU test run that is most of the time (the
DSL config tests: 17 s of 51 tests, 13 s of it in teardown).

Once collection is done (every test module imported), this plugin collects once
and freezes what is left (``gc.freeze()``: those objects are alive, imported
modules and the collected tests, and are not traversed again), and makes
``gc.unfreeze()`` a no-op for the session, so the teardown's ``gc.collect()``
still runs, and still frees every cycle a test left behind, but only walks what
was allocated since. Nothing else of the cleanup changes; the assertions of the
tests are untouched. ``gc.unfreeze`` is restored at the end of the session.
Objects frozen by code under test (the engine core freezes its start-up heap)
stay frozen until then: memory, not behaviour.

Off with ``DSL_GC_FREEZE=0``.
"""

from __future__ import annotations

import gc
import os

_real_unfreeze = gc.unfreeze


def _keep_frozen() -> None:
    """``gc.unfreeze`` during the session: the import-time heap stays frozen."""


def enabled() -> bool:
    """Whether the plugin freezes (``DSL_GC_FREEZE`` is not ``0``)."""
    return os.environ.get("DSL_GC_FREEZE", "1") != "0"


def pytest_collection_finish(session):
    if not enabled():
        return
    gc.collect()
    gc.freeze()
    gc.unfreeze = _keep_frozen


def pytest_unconfigure(config):
    if gc.unfreeze is _keep_frozen:
        gc.unfreeze = _real_unfreeze
        gc.unfreeze()
