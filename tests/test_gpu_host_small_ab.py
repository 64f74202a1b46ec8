"""scripts/gpu-host/small-ab.sh on CPU: the small pair's A/B on a staged host.
small-start.sh and ab-start.sh are stand-ins in a scratch checkout
(scratch_checkout, whose staged root's env.sh sets a marker) that record what
they were given; the script under test and scripts/lib are the real ones.
What is checked: the A/B's arguments as session 61's plan passed them (its
small.sh, which ran as session 62's s62s), the options, the chain reused where
this host's chain ended with 0, small.tgz, and errors that name the option."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from scratch_checkout import scratch_checkout

ROOT = Path(__file__).resolve().parents[1]

SMALL = """#!/usr/bin/env bash
echo "small-start root=$GPU_HOST_ROOT dir=$SMALL_DIR env=${STAGED_ENV:-} $*" >> "$SEEN"
mkdir -p "$SMALL_DIR"; echo "build_models rc=0" > "$SMALL_DIR/chain.log"
"""
AB = """#!/usr/bin/env bash
echo "ab-start wait=$AB_WAIT_FILE wait_s=$AB_WAIT_S timeout=$AB_TIMEOUT_S root=$GPU_HOST_ROOT $*" >> "$SEEN"
[[ -z "${AB_FAIL:-}" ]] || { echo "abab.py: bad arm" ; exit 3; }
"""


@pytest.fixture
def checkout(tmp_path):
    co, _, _ = scratch_checkout(tmp_path, {"small-start.sh": SMALL, "ab-start.sh": AB},
                                "export STAGED_ENV=1\n")
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "small-ab.sh", co / "scripts" / "gpu-host")
    (tmp_path / "out").mkdir()
    return co


def _run(co: Path, tmp_path: Path, *args: str, **env: str):
    full = {**os.environ, "SEEN": str(tmp_path / "record" / "seen"),
            "OUT": str(tmp_path / "out"), "GPU_HOST_ROOT": str(tmp_path / "gpuhost"),
            "SMALL_DIR": str(tmp_path / "small"), **env}
    return subprocess.run(["bash", "scripts/gpu-host/small-ab.sh", *args], cwd=co,
                          env=full, capture_output=True, text=True, timeout=60)


def _seen(tmp_path: Path) -> list[str]:
    return (tmp_path / "record" / "seen").read_text().splitlines()


def test_the_defaults_are_session_61s_plan(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s62s")
    assert r.returncode == 0, r.stderr
    root, small = tmp_path / "gpuhost", tmp_path / "small"
    seen = _seen(tmp_path)
    assert seen[0] == f"small-start root={root} dir={small} env=1 "
    E = ('{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, '
         '"max_num_seqs": 64, "cudagraph_metrics": true}')
    T = ('{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, '
         '"rpc": "host_timer_on", "probe": "host_timer_read"}}')
    assert seen[1] == (
        f"ab-start wait={small}/done wait_s=600 timeout=900 root={root} s62s -- "
        f"--models {root}/models --target smollm2-135m --draft smollm2-l4-self "
        "--prompts .gpu-bundles/prompts --concurrency 1,8 --max-tokens 256 --waves 1 "
        f"--base-requests 8 --engine {E} --out abab.json --arms sd3+t,sd4+t,dsl4+t "
        f"--arm-options {T} --rounds 8 --warm-rounds 1 --dsl-starts-alone")
    with tarfile.open(tmp_path / "out" / "small.tgz") as t:
        assert {"small/chain.log", "small/ab-start-s62s.log"} <= set(t.getnames())
    assert "started: the small pair's chain; queued on" in r.stdout


def test_options_reach_the_ab(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s63s", "--arms", "sd3+t,dsl4+t", "--concurrency", "8",
             "--waves", "4", "--rounds", "6")
    assert r.returncode == 0, r.stderr
    ab = _seen(tmp_path)[1]
    assert "--concurrency 8 --max-tokens 256 --waves 4 --base-requests 8 " in ab
    assert "--arms sd3+t,dsl4+t " in ab and "--rounds 6 " in ab
    assert "(sd3+t,dsl4+t at 8, 6 rounds of 4 wave(s))" in r.stdout


@pytest.mark.parametrize("done, chain", [("0", False), ("1", True), (None, True)])
def test_a_chain_that_ended_with_0_is_reused(checkout, tmp_path, done, chain):
    """Session 62's s62t followed s62s on the same host: its chain had ended,
    so only the A/B is started; a failed chain (1) or none starts it again."""
    small = tmp_path / "small"
    small.mkdir()
    if done is not None:
        (small / "done").write_text(done + "\n")
    r = _run(checkout, tmp_path, "s62t", "--concurrency", "8", "--waves", "4")
    assert r.returncode == 0, r.stderr
    starts = [line.split()[0] for line in _seen(tmp_path)]
    assert starts == (["small-start", "ab-start"] if chain else ["ab-start"])
    assert ("of this host (done: 0)" in r.stdout) == (not chain)


def test_a_failed_ab_start_fails_with_its_log(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s62s", AB_FAIL="1")
    assert r.returncode == 1 and "abab.py: bad arm" in r.stderr
    assert not (tmp_path / "out" / "small.tgz").exists()


@pytest.mark.parametrize("args, says", [
    (["s62s", "--waves", "0"], "--waves '0' must be"),
    (["s62s", "--rounds", "x"], "--rounds 'x' must be"),
    (["s62s", "--concurrency", "1;8"], "--concurrency '1;8' must be"),
    (["s62s", "--arms", "sd3+t,dsl4"], "arm 'dsl4' needs the label +t"),
    (["s62s", "--arms"], "--arms needs a value"),
    (["s62s", "--cap", "8"], "unknown option --cap"),
    (["s6 2"], "must be letters, digits"),
])
def test_bad_options_are_named(checkout, tmp_path, args, says):
    r = _run(checkout, tmp_path, *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not (tmp_path / "record" / "seen").exists()


def test_an_unstaged_host_says_to_stage(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s62s", GPU_HOST_ROOT=str(tmp_path / "none"))
    assert r.returncode == 2 and "stage the bundle first" in r.stderr


def test_help():
    r = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-host" / "small-ab.sh"), "--help"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "Usage: bash scripts/gpu-host/small-ab.sh NAME" in r.stdout
    r = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-host" / "small-ab.sh")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "Usage: bash scripts/gpu-host/small-ab.sh NAME" in r.stdout
