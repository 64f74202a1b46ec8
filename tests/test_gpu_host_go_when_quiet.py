"""scripts/gpu-host/go-when-quiet.sh on CPU: the go file comes only once every
--after file exists and the GPU has no compute process left (or the wait is
over), with the GPU's processes at that moment written beside it. nvidia-smi is
a stand-in on PATH that lists a process until the test releases it; the script
under test and scripts/lib are the real ones."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "go-when-quiet.sh"

FAKE_SMI = """#!/usr/bin/env bash
[[ "$*" == *noheader* ]] || echo "pid, process_name, used_memory [MiB]"
[[ -f "$RELEASE/gpu-free" ]] || echo "4242, python3, 1000 MiB"
"""


@pytest.fixture
def env(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    (tmp_path / "release").mkdir()
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "RELEASE": str(tmp_path / "release")}


def _start(env, *args):
    return subprocess.Popen(["bash", str(SCRIPT), *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_go_waits_for_every_after_file_then_for_a_quiet_gpu(env, tmp_path):
    go, a, b = tmp_path / "go", tmp_path / "suite.rc", tmp_path / "done"
    p = _start(env, go, "--after", a, "--after", b, "--max-wait", 60)
    a.write_text("0")
    time.sleep(1.5)
    assert not go.exists()  # b is not there yet
    b.write_text("")
    time.sleep(2.5)
    assert not go.exists()  # the GPU still has a process
    (tmp_path / "release" / "gpu-free").write_text("")
    assert wait_for(go)
    assert p.wait(timeout=10) == 0
    csv = (tmp_path / "gpu-apps-at-go.csv").read_text()
    assert csv.startswith("pid, process_name") and "4242" not in csv


def test_a_busy_gpu_delays_go_at_most_max_wait_and_the_csv_names_who(env, tmp_path):
    go = tmp_path / "go2"
    t0 = time.time()
    p = _start(env, go, "--max-wait", 2)
    assert p.wait(timeout=20) == 0
    assert 2 <= time.time() - t0 < 10 and go.exists()
    assert "4242, python3" in (tmp_path / "gpu-apps-at-go2.csv").read_text()


def test_without_nvidia_smi_it_goes_at_once_and_says_so(tmp_path):
    go = tmp_path / "go"
    p = _start({**os.environ, "PATH": "/usr/bin:/bin"}, go)
    assert p.wait(timeout=10) == 0 and go.exists()
    assert "no nvidia-smi on PATH" in (tmp_path / "gpu-apps-at-go.csv").read_text()


@pytest.mark.parametrize("args,message", [
    (["--max-wait", "1m"], "--max-wait '1m' must be whole seconds"),
    (["--after"], "--after needs a FILE"),
    (["--later"], "unknown argument '--later'"),
])
def test_bad_arguments_are_named(env, tmp_path, args, message):
    p = _start(env, tmp_path / "go", *args)
    assert p.wait(timeout=10) == 2 and message in p.stderr.read()
    assert not (tmp_path / "go").exists()


def test_help_and_usage(env):
    p = _start(env, "--help")
    assert p.wait(timeout=10) == 0
    assert p.stdout.read().startswith("Usage: bash scripts/gpu-host/go-when-quiet.sh")
    assert _start(env).wait(timeout=10) == 2
