"""The GPU suite's engine-level tests, replayed on CPU on a committed run's raw
results (DSL_GPU_REPLAY, tests/gpu/conftest.py), so that a change to those tests
or to the helpers they share (gpu_groups.py, near_ties.py, engine_worker.py's
constants) that breaks them fails scripts/fastcheck.sh, not the next GPU session.

Each replayed run has ``replay-expected.txt`` beside its ``raw.tar.xz``: one line
per test, ``OUTCOME<TAB>test id[<TAB>text its failure message contains]``. A run
recorded before the suite checked something new fails those tests for that
reason (the expected file says which and why); every other test must pass, and
the TP = 2 tests skip (one GPU). After a GPU session, commit its raw results and
add the run here with its expected file (all passed but the TP skips).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "tests" / "gpu" / "results"
MODULES = ["test_dsl_greedy.py", "test_dsl_stress.py", "test_dsl_eagle.py"]
# Each committed run's raw results, beside its replay-expected.txt.
ARCHIVE = "raw.tar.xz"
# Committed runs with raw results: folder, folder inside the archive.
RUNS = [
    ("2026-12-01-h200-s9", "gpu-raw"),
    ("2026-12-02-h200-s12", "raw"),
    ("2026-12-02-h200-s13", "raw"),
    ("2026-12-02-h200-s14", "raw"),
    ("2026-12-02-h200-s15", "raw"),
    ("2026-12-02-h200-s16", "raw"),
    ("2026-12-02-h200-s17", "raw"),
    ("2026-12-04-h200-s24", "raw"),
    ("2026-12-04-h200-s25", "raw"),
    ("2026-12-04-h200-s26-wip", "raw"),
    ("2026-12-04-h200-s28-wip", "raw"),
    ("2026-12-04-h200-s29-wip", "raw"),
    ("2026-12-04-h200-s30-wip", "raw"),
    ("2026-12-04-h200-s31", "raw"),
    ("2026-12-05-h200-s34", "raw"),
    ("2026-12-05-h100-s37", "raw"),
    ("2026-12-05-h200-s40", "raw"),
    ("2026-12-05-h100-s41-wip", "raw"),
    ("2026-12-05-h100-s42-wip", "raw"),
    ("2026-12-06-h100-s44", "raw"),
    ("2026-12-06-h100-s45-cut", "raw"),
    ("2026-12-06-h100-s47", "raw"),
    ("2026-12-06-h100-s48", "raw"),
    ("2026-12-06-h100-s49", "raw"),
    ("2026-12-06-h100-s50", "raw"),
    ("2026-12-06-h100-s51", "raw"),
    ("2026-12-07-h100-s58", "raw"),
    ("2026-12-07-h100-s60", "raw"),
    ("2026-12-07-h100-s61", "raw"),
]


def expected_outcomes(run: str) -> dict[str, tuple[str, str]]:
    out = {}
    for line in (RESULTS / run / "replay-expected.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        outcome, test_id, *why = line.split("\t")
        out[test_id] = (outcome, why[0] if why else "")
    return out


def replay(run: str, inner: str, tmp: Path) -> dict[str, tuple[str, str]]:
    """Outcome and failure message of every engine-level test on ``run``."""
    with tarfile.open(RESULTS / run / ARCHIVE) as tf:
        tf.extractall(tmp, filter="data")
    junit = tmp / "junit.xml"
    env = {**os.environ, "DSL_GPU_REPLAY": str(tmp / inner)}
    env.pop("DSL_GPU_TP", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--junitxml={junit}", *[f"tests/gpu/{m}" for m in MODULES]],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert junit.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    got = {}
    for tc in ET.parse(junit).iter("testcase"):
        test_id = f"{tc.get('classname').split('.')[-1]}.py::{tc.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = tc.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "error"}.get(tag, tag)
                message = node.get("message") or ""
                break
        got[test_id] = (outcome, message)
    return got


@pytest.mark.parametrize("run,inner", RUNS)
def test_gpu_suite_replays_committed_results(tmp_path, run, inner):
    got = replay(run, inner, tmp_path)
    want = expected_outcomes(run)
    assert sorted(got) == sorted(want), (
        f"tests added: {sorted(set(got) - set(want))}, "
        f"removed: {sorted(set(want) - set(got))} (update {run}/replay-expected.txt)"
    )
    wrong = {
        t: got[t]
        for t, (outcome, why) in want.items()
        if got[t][0] != outcome or why not in got[t][1]
    }
    assert not wrong, wrong


def test_default_results_dir_is_outside_the_committed_results():
    """Without DSL_GPU_RESULTS a run writes under build/ (ignored by git):
    tests/gpu/results holds committed runs only, and an empty folder left there
    by a CPU run once passed for a run's results."""
    env = {k: v for k, v in os.environ.items() if k != "DSL_GPU_RESULTS"}
    out = subprocess.run(
        [sys.executable, "-c", "import gpu_groups; print(gpu_groups.results_dir())"],
        cwd=ROOT / "tests" / "gpu", env=env, capture_output=True, text=True,
        check=True,
    ).stdout.strip()
    path = Path(out)
    assert RESULTS not in path.parents, path
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(path.relative_to(ROOT))], cwd=ROOT
    )
    assert ignored.returncode == 0, f"{path} is not ignored by git"


def test_committed_raw_results_are_xz():
    """Every call to the GPU host sends the whole tree: raw results travel as
    ``raw.tar.xz`` (6-7x smaller than ``.tgz`` on these logs, whose repeats lie
    further apart than gzip's 32 KB window), and each replayed run has one."""
    tracked = subprocess.run(
        ["git", "ls-files", "tests/gpu/results"], cwd=ROOT, capture_output=True,
        text=True, check=True,
    ).stdout.split()
    assert not [f for f in tracked if f.endswith((".tgz", ".tar.gz"))]
    for run, _ in RUNS:
        assert f"tests/gpu/results/{run}/{ARCHIVE}" in tracked, run
