"""Tests of the pytest plugins that scripts/lib/common.sh's upstream_pytest loads
into vLLM's test runs (tests/upstream/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A stand-in for vLLM's per-test cleanup (tests/conftest.py: gc.unfreeze() then
# gc.collect() after every test) and tests that check what the plugin promises.
INNER_TESTS = '''
import gc
import weakref

import pytest

IMPORT_TIME = [[i] for i in range(1000)]  # the import-time heap


@pytest.fixture(autouse=True)
def cleanup():
    yield
    gc.unfreeze()
    gc.collect()


def test_import_time_heap_is_frozen():
    assert gc.get_freeze_count() >= len(IMPORT_TIME) == 1000


def test_unfreeze_keeps_it_frozen():
    before = gc.get_freeze_count()
    gc.unfreeze()
    assert gc.get_freeze_count() == before > 0


class Node:
    pass


def test_collect_still_frees_a_cycle_made_by_a_test():
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = []
    weakref.finalize(a, gone.append, "a")
    del a, b
    gc.collect()
    assert gone == ["a"]
'''


def _run_inner(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "gc_freeze",
         str(tmp_path / "test_inner.py")],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests" / "upstream"), **env})


def test_gc_freeze_keeps_the_import_heap_out_of_each_teardown(tmp_path):
    proc = _run_inner(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_gc_freeze_is_off_with_dsl_gc_freeze_0(tmp_path):
    """Without the plugin the stand-in cleanup unfreezes: the first two inner
    tests fail (so they can tell the plugin's effect apart), the third passes."""
    proc = _run_inner(tmp_path, DSL_GC_FREEZE="0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed, 1 passed" in proc.stdout


def test_gc_freeze_restores_unfreeze_at_the_end_of_the_session():
    import gc

    sys.path.insert(0, str(ROOT / "tests" / "upstream"))
    try:
        import gc_freeze
    finally:
        sys.path.pop(0)
    real = gc.unfreeze
    try:
        gc_freeze.pytest_collection_finish(None)
        assert gc.unfreeze is gc_freeze._keep_frozen and gc.get_freeze_count() > 0
        gc_freeze.pytest_unconfigure(None)
        assert gc.unfreeze is real and gc.get_freeze_count() == 0
    finally:
        gc.unfreeze = real
        gc.unfreeze()
