"""scripts/gpu-host/alone-proxies.sh on CPU: the proxies chain started with
no GPU suite beside it (proxies-start.sh's default: it builds its own
truncation), after.done at once, and the measuring run's go file written
only once the chain is done. proxies-start.sh is a stand-in in a scratch
checkout (it records what it was given and ends when the test says); the
script under test, go-when-quiet.sh and scripts/lib are the real ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_gpu_host_beside_proxies import PROXIES
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path):
    co = tmp_path / "checkout"
    (co / "scripts" / "gpu-host").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    for name in ("alone-proxies.sh", "go-when-quiet.sh"):
        shutil.copy(ROOT / "scripts" / "gpu-host" / name, co / "scripts" / "gpu-host")
    (co / "scripts" / "gpu-host" / "proxies-start.sh").write_text(PROXIES)
    return co


def _run(checkout: Path, tmp_path: Path, *args: str):
    release = tmp_path / "release"
    release.mkdir(exist_ok=True)
    env = {**os.environ, "PROXY_DIR": str(tmp_path / "proxies"),
           "RELEASE": str(release), "GPU_HOST_ROOT": str(tmp_path / "gpuhost")}
    return subprocess.run(["bash", "scripts/gpu-host/alone-proxies.sh", *args],
                          cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=60)


def test_go_comes_once_the_chain_is_done(checkout, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "go").write_text("")  # an earlier run's marker
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 0, r.stderr
    assert "no suite" in r.stdout
    # Alone, the chain builds its own truncation: no --beside-suite.
    assert (tmp_path / "proxies" / "seen").read_text().strip() == (
        f"root={tmp_path / 'gpuhost'} args=")
    assert (logs / "after.done").exists()
    assert "no GPU suite" in (logs / "after.skipped").read_text()
    time.sleep(0.5)
    assert not (logs / "go").exists()  # the proxies are still building
    (tmp_path / "release" / "proxies").write_text("")
    assert wait_for(logs / "go")
    assert (logs / "gpu-apps-at-go.csv").exists()


def test_a_failed_proxies_start_starts_nothing(checkout, tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "proxies-fail").write_text("")
    logs = tmp_path / "logs"
    r = _run(checkout, tmp_path, str(logs))
    assert r.returncode == 1
    assert "no env.sh: stage the bundle first" in r.stderr
    assert "proxies-start.sh failed (log:" in r.stderr
    assert not (logs / "after.done").exists()


def test_without_a_log_dir_it_shows_its_usage(checkout, tmp_path):
    r = _run(checkout, tmp_path)
    assert r.returncode == 2 and "Usage: bash scripts/gpu-host/alone-proxies.sh" in r.stdout
    r = _run(checkout, tmp_path, "a", "b")
    assert r.returncode == 2 and "one argument, LOG_DIR" in r.stderr
