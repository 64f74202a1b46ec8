"""scripts/gpu-host/beside-proxies.sh on CPU: the proxies chain and the GPU
suite started side by side, each outliving the command, and the measuring
run's go file written only once both have ended. proxies-start.sh and suite.sh
are stand-ins in a scratch checkout (they record what they were given and end
when the test says); the script under test and scripts/lib are the real ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]

PROXIES = """#!/usr/bin/env bash
set -euo pipefail
dir=${PROXY_DIR:?}
mkdir -p "$dir"
[[ -f "$RELEASE/proxies-fail" ]] && { echo "no env.sh: stage the bundle first" >&2; exit 1; }
echo "root=${GPU_HOST_ROOT:-} args=$*" > "$dir/seen"
setsid bash -c 'while [[ ! -f "$RELEASE/proxies" ]]; do sleep 0.05; done; echo 0 > "$PROXY_DIR/done"' \
  < /dev/null > /dev/null 2>&1 &
"""

SUITE = """#!/usr/bin/env bash
set -euo pipefail
mkdir -p "$OUT"
{ echo "root=$GPU_HOST_ROOT"; echo "parallel=$DSL_GPU_PARALLEL"
  echo "layers=$SUITE_DRAFT_LAYERS"; echo "timeout=$SUITE_TIMEOUT_S"
  echo "args=$PYTEST_ARGS"; } > "$OUT/seen"
while [[ ! -f "$RELEASE/suite" ]]; do sleep 0.05; done
exit "$(cat "$RELEASE/suite")"
"""


@pytest.fixture
def checkout(tmp_path):
    co = tmp_path / "checkout"
    (co / "scripts" / "gpu-host").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "beside-proxies.sh", co / "scripts" / "gpu-host")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "after-suite.sh", co / "scripts" / "gpu-host")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "go-when-quiet.sh", co / "scripts" / "gpu-host")
    (co / "scripts" / "gpu-host" / "proxies-start.sh").write_text(PROXIES)
    (co / "scripts" / "gpu-host" / "suite.sh").write_text(SUITE)
    return co


def _run(checkout: Path, tmp_path: Path, *args: str, **env: str):
    release = tmp_path / "release"
    release.mkdir(exist_ok=True)
    full = {**os.environ, "PROXY_DIR": str(tmp_path / "proxies"),
            "RELEASE": str(release), "GPU_HOST_ROOT": str(tmp_path / "gpuhost"), **env}
    return subprocess.run(["bash", "scripts/gpu-host/beside-proxies.sh", *args],
                          cwd=checkout, env=full, capture_output=True, text=True,
                          timeout=60)


def test_go_comes_once_the_proxies_and_the_suite_have_ended(checkout, tmp_path):
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs), SUITE_ROOT="/tmp/wip-root")
    assert r.returncode == 0, r.stderr
    assert wait_for(logs / "suite-out" / "seen")
    seen = (logs / "suite-out" / "seen").read_text()
    # The suite runs on the wip root, the engine groups only, beside the proxies.
    assert "root=/tmp/wip-root" in seen and "parallel=15" in seen
    assert "layers=4,16" in seen and "timeout=480" in seen
    assert "--ignore=tests/gpu/test_dsl_kernels.py" in seen
    # Beside the suite, the chain waits for the suite's truncation.
    assert (tmp_path / "proxies" / "seen").read_text().strip() == (
        f"root={tmp_path / 'gpuhost'} args=--beside-suite")
    release = tmp_path / "release"
    (release / "suite").write_text("3")
    assert wait_for(logs / "suite.rc")
    assert (logs / "suite.rc").read_text().strip() == "3"
    time.sleep(0.5)
    assert not (logs / "go").exists()  # the proxies are still building
    (release / "proxies").write_text("")
    assert wait_for(logs / "go")
    assert (logs / "gpu-apps-at-go.csv").exists()
    # No .gpu-bundles/intree in this checkout: the kernel files and in-tree
    # tests were skipped, and said so.
    assert "not run" in (logs / "after.skipped").read_text()


def test_the_suite_arguments_can_be_set(checkout, tmp_path):
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs), SUITE_ARGS="", SUITE_TIMEOUT_S="300")
    assert r.returncode == 0, r.stderr
    assert wait_for(logs / "suite-out" / "seen")
    seen = (logs / "suite-out" / "seen").read_text()
    assert "args=\n" in seen and "timeout=300" in seen
    assert f"root={tmp_path / 'gpuhost'}" in seen
    (tmp_path / "release" / "suite").write_text("0")
    (tmp_path / "release" / "proxies").write_text("")
    assert wait_for(logs / "go")


def test_a_failed_proxies_start_starts_nothing(checkout, tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "proxies-fail").write_text("")
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 1
    assert "no env.sh: stage the bundle first" in r.stderr
    assert "proxies-start.sh failed (log:" in r.stderr
    time.sleep(0.5)
    assert not (logs / "suite-out" / "seen").exists()


def test_without_a_log_dir_it_shows_its_usage(checkout, tmp_path):
    r = _run(checkout, tmp_path)
    assert r.returncode == 2 and "Usage: bash scripts/gpu-host/beside-proxies.sh" in r.stdout
    r = _run(checkout, tmp_path, "a", "b")
    assert r.returncode == 2 and "one argument, LOG_DIR" in r.stderr
