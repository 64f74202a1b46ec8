"""The project's DSL_NO_SKIP hook (tests/conftest.py): under scripts/fastcheck.sh a
skipped test fails with its reason, except in the GPU host's suite (issue #20)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _pytest(tmp_path: Path, no_skip: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\n"
        "def test_needs_fixtures():\n    pytest.skip('no fixtures: run scripts/fixtures.sh')\n\n"
        "def test_runs():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    env.pop("DSL_NO_SKIP", None)
    if no_skip:
        env["DSL_NO_SKIP"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
         "-rfs", str(tmp_path / "test_x.py")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


def test_a_skip_fails_under_dsl_no_skip(tmp_path):
    proc = _pytest(tmp_path, no_skip=True)
    assert proc.returncode == 1, proc.stdout
    assert "1 failed, 1 passed" in proc.stdout
    assert "DSL_NO_SKIP=1" in proc.stdout and "run scripts/fixtures.sh" in proc.stdout


def test_a_skip_stays_a_skip_otherwise(tmp_path):
    proc = _pytest(tmp_path, no_skip=False)
    assert proc.returncode == 0, proc.stdout
    assert "1 passed, 1 skipped" in proc.stdout
