"""scripts/gpu-host/ab-start.sh and ab-collect.sh on CPU: an A/B started in
its own process session outlives the command that started it, runs from a copy
of the checkout, and is collected (partly while it runs, then whole) into
$OUT. The A/B here is a stand-in ``benchmarks/abab.py`` in a scratch checkout
that records its arguments and waits for a file, so the test decides when it
ends; the scripts under test are the real ones."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts" / "gpu-host"

STAND_IN = '''
import json, sys, time
from pathlib import Path
args = sys.argv[1:]
out = Path(args[args.index("--out") + 1])
release = Path(args[args.index("--release") + 1])
out.write_text(json.dumps({"args": args, "points": [1]}))
print("c=1 (8 requests x 2 rounds): sd3 median 3.000 ms", flush=True)
while not release.exists():
    time.sleep(0.05)
out.write_text(json.dumps({"args": args, "points": [1, 8]}))
print("c=8 (16 requests x 2 rounds): sd3 median 3.500 ms", flush=True)
sys.exit(int(release.read_text() or 0))
'''


@pytest.fixture
def host(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "benchmarks").mkdir(parents=True)
    (checkout / "benchmarks" / "abab.py").write_text(STAND_IN)
    (checkout / "tests" / "e2e").mkdir(parents=True)
    (checkout / "tests" / "e2e" / "harness.py").write_text("")
    (checkout / ".gpu-bundles" / "prompts").mkdir(parents=True)
    (checkout / ".gpu-bundles" / "prompts" / "p.jsonl").write_text("{}\n")
    root = tmp_path / "gpuhost"
    root.mkdir()
    (root / "env.sh").write_text("export AB_TEST_ENV_SOURCED=1\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "AB_DIR": str(tmp_path / "ab"),
           "OUT": str(out)}
    return checkout, env, out, tmp_path


def _run(script, checkout, env, *args):
    return subprocess.run(["bash", str(SCRIPTS / script), *args], cwd=checkout,
                          env=env, capture_output=True, text=True, timeout=60)


def _members(tgz: Path) -> set[str]:
    with tarfile.open(tgz) as tf:
        return {m.name.lstrip("./") for m in tf.getmembers() if m.isfile()}


def _json(tgz: Path) -> dict:
    with tarfile.open(tgz) as tf:
        return json.load(tf.extractfile("./abab.json"))


def test_a_started_ab_is_collected_while_running_and_after(host):
    checkout, env, out, tmp = host
    release = tmp / "release"
    engine = '{"kv_cache_memory_bytes": 1, "note": "a b"}'
    started = _run("ab-start.sh", checkout, env, "s1", "--", "--out", "abab.json",
                   "--prompts", ".gpu-bundles/prompts", "--engine", engine,
                   "--release", str(release))
    assert started.returncode == 0, started.stderr
    assert "collect with: bash scripts/gpu-host/ab-collect.sh s1" in started.stdout
    # The checkout changes under a running A/B (the next command re-syncs it):
    # the run keeps its copy.
    (checkout / "benchmarks" / "abab.py").write_text("raise SystemExit(9)\n")
    run = tmp / "ab" / "s1"
    for _ in range(200):
        if (run / "abab.json").exists():
            break
        time.sleep(0.05)
    early = _run("ab-collect.sh", checkout, env, "s1", "--wait", "1")
    assert early.returncode == 3, early.stdout + early.stderr
    assert "still running" in early.stdout
    assert "c=1 (8 requests" in early.stdout
    assert _json(out / "s1.tgz")["points"] == [1]
    release.write_text("0")
    done = _run("ab-collect.sh", checkout, env, "s1", "--wait", "30")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ended with status 0" in done.stdout
    got = _json(out / "s1.tgz")
    assert got["points"] == [1, 8]
    # Arguments arrive as given, quotes and spaces included; relative paths
    # resolve in the run's folder, where the prompts were copied.
    assert got["args"][got["args"].index("--engine") + 1] == engine
    assert (run / ".gpu-bundles" / "prompts" / "p.jsonl").exists()
    members = _members(out / "s1.tgz")
    assert {"abab.json", "abab.log", "rc", "args"} <= members
    # The host's samplers ran beside it (scripts/lib/host_samplers.sh): top's
    # CPU lines, and a note where the host has no nvidia-smi.
    assert {"top.log", "gpu.csv"} <= members
    assert "%Cpu" in (run / "top.log").read_text()
    assert not any(m.startswith(("tree", ".gpu-bundles")) for m in members)


def test_a_failed_ab_returns_its_status(host):
    checkout, env, out, tmp = host
    release = tmp / "release"
    release.write_text("4")
    assert _run("ab-start.sh", checkout, env, "s2", "--out", "abab.json",
                "--release", str(release)).returncode == 0
    done = _run("ab-collect.sh", checkout, env, "s2", "--wait", "30")
    assert done.returncode == 4
    assert "ended with status 4" in done.stdout


def test_bad_input_is_one_clear_error(host):
    checkout, env, out, tmp = host
    bad = _run("ab-start.sh", checkout, env, "a/b", "--out", "x")
    assert bad.returncode == 2 and "NAME 'a/b'" in bad.stderr
    missing = _run("ab-collect.sh", checkout, env, "never")
    assert missing.returncode == 1 and "did not start 'never'" in missing.stderr
    wait = _run("ab-collect.sh", checkout, env, "never", "--wait", "soon")
    assert wait.returncode == 2 and "--wait 'soon'" in wait.stderr
    unstaged = _run("ab-start.sh", checkout, {**env, "GPU_HOST_ROOT": str(tmp / "no")},
                    "s3", "--out", "x")
    assert unstaged.returncode == 1 and "stage the bundle first" in unstaged.stderr
    assert _run("ab-start.sh", checkout, env, "--help").returncode == 0
    assert _run("ab-collect.sh", checkout, env, "--help").returncode == 0


def test_a_second_script_waits_for_the_first_run_to_end(host):
    """AB_SCRIPT runs another script of benchmarks/ (its arguments its own,
    its log named after it); AB_WAIT_FILE on the first run's rc makes the
    second start only once the first has ended, so one GPU runs them in
    turn."""
    checkout, env, out, tmp = host
    (checkout / "benchmarks" / "profile_step.py").write_text(
        "import sys, time\n"
        "from pathlib import Path\n"
        "Path('started').write_text(str(time.time()))\n"
        "print('c=32 profile', sys.argv[1:], flush=True)\n")
    release = tmp / "release"
    assert _run("ab-start.sh", checkout, env, "first", "--out", "abab.json",
                "--release", str(release)).returncode == 0
    second = _run("ab-start.sh", checkout,
                  {**env, "AB_SCRIPT": "profile_step.py",
                   "AB_WAIT_FILE": str(tmp / "ab" / "first" / "rc")},
                  "second", "--", "--arms", "target,sd3")
    assert second.returncode == 0, second.stderr
    assert "second (profile_step.py) started" in second.stdout
    time.sleep(1.0)
    assert not (tmp / "ab" / "second" / "started").exists()
    release.write_text("0")
    assert _run("ab-collect.sh", checkout, env, "first", "--wait", "30").returncode == 0
    done = _run("ab-collect.sh", checkout, env, "second", "--wait", "30")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "c=32 profile ['--arms', 'target,sd3']" in done.stdout
    first_end = (tmp / "ab" / "first" / "rc").stat().st_mtime
    assert float((tmp / "ab" / "second" / "started").read_text()) >= first_end - 0.01
    assert {"profile_step.log", "started", "rc"} <= _members(out / "second.tgz")


def test_a_bad_script_or_wait_is_one_clear_error(host):
    checkout, env, out, tmp = host
    bad = _run("ab-start.sh", checkout, {**env, "AB_SCRIPT": "../x.py"}, "s4", "--out", "x")
    assert bad.returncode == 2 and "AB_SCRIPT '../x.py'" in bad.stderr
    missing = _run("ab-start.sh", checkout, {**env, "AB_SCRIPT": "nope.py"}, "s5")
    assert missing.returncode == 2 and "not a script in benchmarks/" in missing.stderr
    wait = _run("ab-start.sh", checkout, {**env, "AB_WAIT_S": "long"}, "s6")
    assert wait.returncode == 2 and "AB_WAIT_S 'long'" in wait.stderr
