"""scripts/gpu-host/beside-small.sh on CPU: the small pair's draft chain
(small-start.sh --beside-suite) and the GPU suite started side by side, each
outliving the command; the kernel files and in-tree tests (the real
after-suite.sh) once the suite has ended, where .gpu-bundles/intree is
carried; and the measuring run's go file only once all of it has ended.
small-start.sh and suite.sh are stand-ins in a scratch checkout (they record
what they were given and end when the test says); the script under test,
after-suite.sh, go-when-quiet.sh and scripts/lib are the real ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]

SMALL = """#!/usr/bin/env bash
set -euo pipefail
dir=${SMALL_DIR:?}
mkdir -p "$dir"
[[ -f "$RELEASE/small-fail" ]] && { echo "no env.sh: stage the bundle first" >&2; exit 1; }
echo "args=$*" > "$dir/seen"
setsid bash -c 'while [[ ! -f "$RELEASE/small" ]]; do sleep 0.05; done; echo 0 > "$SMALL_DIR/done"' \\
  < /dev/null > /dev/null 2>&1 &
"""

SUITE = """#!/usr/bin/env bash
set -euo pipefail
mkdir -p "$OUT"
{ echo "root=$GPU_HOST_ROOT"; echo "layers=$SUITE_DRAFT_LAYERS"
  echo "timeout=$SUITE_TIMEOUT_S"; echo "args=$PYTEST_ARGS"; } > "$OUT/seen"
while [[ ! -f "$RELEASE/suite" ]]; do sleep 0.05; done
exit "$(cat "$RELEASE/suite")"
"""


@pytest.fixture
def checkout(tmp_path):
    co = tmp_path / "checkout"
    gpu_host = co / "scripts" / "gpu-host"
    gpu_host.mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    for name in ("beside-small.sh", "after-suite.sh", "go-when-quiet.sh"):
        shutil.copy(ROOT / "scripts" / "gpu-host" / name, gpu_host)
    (gpu_host / "small-start.sh").write_text(SMALL)
    (gpu_host / "suite.sh").write_text(SUITE)
    return co


def _run(checkout: Path, tmp_path: Path, *args: str, **env: str):
    release = tmp_path / "release"
    release.mkdir(exist_ok=True)
    full = {**os.environ, "SMALL_DIR": str(tmp_path / "small"), "RELEASE": str(release),
            "GPU_HOST_ROOT": str(tmp_path / "gpuhost"), **env}
    return subprocess.run(["bash", "scripts/gpu-host/beside-small.sh", *args],
                          cwd=checkout, env=full, capture_output=True, text=True,
                          timeout=60)


def test_go_comes_once_the_draft_the_suite_and_its_kernel_tests_have_ended(
        checkout, tmp_path):
    (checkout / ".gpu-bundles" / "intree" / "tests").mkdir(parents=True)
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs), SUITE_ROOT="/tmp/wip-root")
    assert r.returncode == 0, r.stderr
    assert wait_for(logs / "suite-out" / "seen")
    seen = (logs / "suite-out" / "seen").read_text()
    # The suite runs on the wip root, the engine groups only, 4 layers.
    assert "root=/tmp/wip-root" in seen and "layers=4\n" in seen
    assert "timeout=480" in seen and "--ignore=tests/gpu/test_dsl_kernels.py" in seen
    assert (tmp_path / "small" / "seen").read_text().strip() == "args=--beside-suite"
    release = tmp_path / "release"
    (release / "small").write_text("")
    time.sleep(0.5)
    assert not (logs / "go").exists()  # the suite is still running
    (release / "suite").write_text("0")
    assert wait_for(logs / "suite.rc")
    # The kernel files and in-tree tests ran once it ended (none exist in
    # this scratch checkout, so both fail), and go came after them.
    assert wait_for(logs / "go")
    assert (logs / "after.done").exists() and not (logs / "after.skipped").exists()
    assert (logs / "kernels.rc").read_text().strip() != "0"
    assert (logs / "intree.rc").exists()


def test_without_the_intree_pack_go_waits_for_the_draft_only(checkout, tmp_path):
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 0, r.stderr
    (tmp_path / "release" / "suite").write_text("3")
    assert wait_for(logs / "after.done")
    assert "not run" in (logs / "after.skipped").read_text()
    assert (logs / "suite.rc").read_text().strip() == "3"
    time.sleep(0.5)
    assert not (logs / "go").exists()  # the draft is still distilling
    (tmp_path / "release" / "small").write_text("")
    assert wait_for(logs / "go")
    assert not (logs / "kernels.rc").exists()


def test_a_failed_small_start_starts_nothing(checkout, tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "small-fail").write_text("")
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 1
    assert "no env.sh: stage the bundle first" in r.stderr
    assert "small-start.sh failed (log:" in r.stderr
    time.sleep(0.5)
    assert not (logs / "suite-out" / "seen").exists()


def test_a_suite_without_the_4_layer_truncation_is_refused(checkout, tmp_path):
    r = _run(checkout, tmp_path, str(tmp_path / "logs"), SUITE_DRAFT_LAYERS="16")
    assert r.returncode == 2 and "SUITE_DRAFT_LAYERS '16' must include 4" in r.stderr
    assert not (tmp_path / "small" / "seen").exists()


def test_an_earlier_runs_markers_do_not_start_the_measuring_run(checkout, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("go", "after.done", "suite.rc"):
        (logs / name).write_text("0")
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 0, r.stderr
    assert wait_for(logs / "suite-out" / "seen")
    assert not (logs / "go").exists() and not (logs / "after.done").exists()
    (tmp_path / "release" / "small").write_text("")
    (tmp_path / "release" / "suite").write_text("0")
    assert wait_for(logs / "go")


def test_without_a_log_dir_it_shows_its_usage(checkout, tmp_path):
    r = _run(checkout, tmp_path)
    assert r.returncode == 2 and "Usage: bash scripts/gpu-host/beside-small.sh" in r.stdout
    r = _run(checkout, tmp_path, "a", "b")
    assert r.returncode == 2 and "one argument, LOG_DIR" in r.stderr
