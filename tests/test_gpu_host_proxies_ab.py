"""scripts/gpu-host/proxies-ab.sh on CPU: the first long command of a
proxies A/B. stage-last.sh, alone-proxies.sh, beside-proxies.sh, ab-start.sh
and nvidia-smi are stand-ins in a scratch checkout (scratch_checkout, whose
staged root's env.sh sets a marker) that record what they were given (the GPU's
memory set by the test); the script under test and scripts/lib are the real
ones. What is checked: the arms chosen by the GPU's memory, the A/B's
arguments as the plans of sessions 52-56 passed them, the order (stage, chain,
A/B queued on the chain's go file), a.tgz, and errors that name the option."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from scratch_checkout import scratch_checkout

ROOT = Path(__file__).resolve().parents[1]

STAGE = """#!/usr/bin/env bash
echo "stage-last $*" >> "$SEEN"
mkdir -p "$1"; echo host > "$1/host.txt"
echo "$GPU_HOST_ROOT"
"""
ALONE = """#!/usr/bin/env bash
echo "alone-proxies root=$GPU_HOST_ROOT $* env=${STAGED_ENV:-}" >> "$SEEN"
"""
BESIDE = """#!/usr/bin/env bash
echo "beside-proxies root=$GPU_HOST_ROOT suite_root=$SUITE_ROOT args=$SUITE_ARGS $*" >> "$SEEN"
"""
AB = """#!/usr/bin/env bash
echo "ab-start wait=$AB_WAIT_FILE root=$GPU_HOST_ROOT $*" >> "$SEEN"
[[ -z "${AB_FAIL:-}" ]] || { echo "abab.py: bad arm" ; exit 3; }
"""
SMI = """#!/usr/bin/env bash
echo "$GPU_MIB"
"""


@pytest.fixture
def checkout(tmp_path):
    co, _, _ = scratch_checkout(
        tmp_path, {"stage-last.sh": STAGE, "alone-proxies.sh": ALONE,
                   "ab-start.sh": AB, "beside-proxies.sh": BESIDE},
        "export STAGED_ENV=1\n")
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "proxies-ab.sh", co / "scripts" / "gpu-host")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvidia-smi").write_text(SMI)
    (tmp_path / "bin" / "nvidia-smi").chmod(0o755)
    (tmp_path / "out").mkdir()
    # Chunks an earlier call carried linger beside the last one (numbered past 9).
    for chunk in ("b3", "b11"):
        (co / ".gpu-bundles" / chunk).mkdir()
    return co


def _run(co: Path, tmp_path: Path, *args: str, mib: int = 143771, **env: str):
    full = {**os.environ, "SEEN": str(tmp_path / "record" / "seen"), "GPU_MIB": str(mib),
            "OUT": str(tmp_path / "out"), "GPU_HOST_ROOT": str(tmp_path / "gpuhost"),
            "SETTLE_S": "0", "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", **env}
    return subprocess.run(["bash", "scripts/gpu-host/proxies-ab.sh", *args], cwd=co,
                          env=full, capture_output=True, text=True, timeout=60)


ARGS = ("s57p", None, "--arms", "sd2+t,sd3+t,target+t,dsl4+t,dsl8+t",
        "--arms-small", "sd2+t,dsl4+t,dsl8+t", "--concurrency", "1,64,8,32,16,2,4")


def _args(tmp_path: Path, *more: str) -> list[str]:
    return [str(tmp_path / "s57") if a is None else a for a in ARGS] + list(more)


@pytest.mark.parametrize("mib, arms", [(143771, "sd2+t,sd3+t,target+t,dsl4+t,dsl8+t"),
                                       (81559, "sd2+t,dsl4+t,dsl8+t")])
def test_the_arms_follow_the_gpus_memory(checkout, tmp_path, mib, arms):
    r = _run(checkout, tmp_path, *_args(tmp_path), mib=mib)
    assert r.returncode == 0, r.stderr
    plan = tmp_path / "s57"
    seen = (tmp_path / "record" / "seen").read_text().splitlines()
    assert [line.split()[0] for line in seen] == ["stage-last", "alone-proxies", "ab-start"]
    assert seen[0] == f"stage-last {plan} .gpu-bundles/b11"
    # The staged env.sh is sourced before the chain starts.
    assert seen[1] == f"alone-proxies root={tmp_path / 'gpuhost'} {plan} env=1"
    ab = seen[2]
    assert ab.startswith(f"ab-start wait={plan}/go root={tmp_path / 'gpuhost'} s57p -- ")
    assert f"--models {tmp_path / 'gpuhost'}/models --target smollm2-135m-x8b" in ab
    assert f"--arms {arms} --arm-options" in ab
    assert "--concurrency 1,64,8,32,16,2,4 --max-tokens 256 --waves 1 --base-requests 8" in ab
    assert "--rounds 10 --warm-rounds 1 --dsl-starts-alone" in ab
    assert "ab_hooks.HostTimer" in ab and '"cudagraph_metrics": true' in ab
    assert (plan / "ab-plan.txt").read_text() == (
        f"GPU memory {mib} MiB: s57p {arms} at 1,64,8,32,16,2,4, 10 rounds, "
        f"once {plan}/go exists\n")
    with tarfile.open(tmp_path / "out" / "a.tgz") as t:
        assert {"s57/host.txt", "s57/ab-plan.txt"} <= set(t.getnames())


def test_with_suite_the_chain_runs_beside_the_gpu_suite(checkout, tmp_path):
    r = _run(checkout, tmp_path, *_args(tmp_path, "--suite"), SUITE_ARGS="-k sync")
    assert r.returncode == 0, r.stderr
    seen = (tmp_path / "record" / "seen").read_text().splitlines()
    root = tmp_path / "gpuhost"
    assert seen[1] == (f"beside-proxies root={root} suite_root={root} args=-k sync "
                       f"{tmp_path / 's57'}")
    assert seen[2].startswith(f"ab-start wait={tmp_path / 's57'}/go ")
    assert "beside the GPU suite" in r.stdout


def test_same_prompts_runs_every_round_on_the_same_prompts(checkout, tmp_path):
    """Rotated prompts by default (each round's own); --same-prompts drops
    abab.py's --rotate-prompts and the plan line says so."""
    r = _run(checkout, tmp_path, *_args(tmp_path))
    assert r.returncode == 0, r.stderr
    assert " --rotate-prompts " in (tmp_path / "record" / "seen").read_text()
    (tmp_path / "record" / "seen").unlink()
    r = _run(checkout, tmp_path, *_args(tmp_path, "--same-prompts"), mib=81559)
    assert r.returncode == 0, r.stderr
    ab = (tmp_path / "record" / "seen").read_text().splitlines()[2]
    assert "--rotate-prompts" not in ab
    assert "--base-requests 8 --engine " in ab
    assert (tmp_path / "s57" / "ab-plan.txt").read_text() == (
        "GPU memory 81559 MiB: s57p sd2+t,dsl4+t,dsl8+t at 1,64,8,32,16,2,4, 10 rounds, "
        f"the same prompts every round, once {tmp_path / 's57'}/go exists\n")


def _arm_options(ab: str) -> dict:
    return json.loads(ab.split(" --arm-options ", 1)[1].split(" --rounds ", 1)[0])


def _assert_hook_answers(option: dict, cls_name: str) -> None:
    """The arm's worker extension is ``ab_hooks.<cls_name>`` and has every
    method its ``rpc`` and ``probe`` name."""
    assert option["engine"]["worker_extension_cls"] == f"ab_hooks.{cls_name}"
    spec = importlib.util.spec_from_file_location("ab_hooks", ROOT / "benchmarks" / "ab_hooks.py")
    ab_hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab_hooks)
    for method in option["rpc"] + [option["probe"]]:
        assert callable(getattr(getattr(ab_hooks, cls_name), method)), method


def test_a_u_arm_runs_its_dsl_engine_with_the_stop_unpriced(checkout, tmp_path):
    """+u: the same DSL engine with StepCostsOff (the loop never stops), its
    host timed as +t's; only the labels the arms use get options (abab.py
    refuses any other)."""
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl4+t,dsl4+u", "--concurrency", "8", "--same-prompts", mib=81559)
    assert r.returncode == 0, r.stderr
    ab = (tmp_path / "record" / "seen").read_text().splitlines()[2]
    options = _arm_options(ab)
    assert options["t"]["engine"]["worker_extension_cls"] == "ab_hooks.HostTimer"
    assert options["u"] == {
        "engine": {"worker_extension_cls": "ab_hooks.StepCostsOffTimer"},
        "rpc": ["dsl_unprice_draft_steps", "host_timer_on"],
        "probe": "host_timer_read"}
    _assert_hook_answers(options["u"], "StepCostsOffTimer")
    (tmp_path / "record" / "seen").unlink()
    r = _run(checkout, tmp_path, *_args(tmp_path), mib=81559)
    assert r.returncode == 0, r.stderr
    assert set(_arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])) == {"t"}
    (tmp_path / "record" / "seen").unlink()
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl4+t,dsl4+u,dsl4+v", "--arms-small", "sd2+t,dsl4+t,dsl4+u", mib=81559)
    assert r.returncode == 0, r.stderr
    assert set(_arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])) == {
        "t", "u"}
    (tmp_path / "record" / "seen").unlink()
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl4+t,dsl4+u,dsl4+v", "--arms-small", "sd2+t,dsl4+t,dsl4+u")
    assert r.returncode == 0, r.stderr
    v = _arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])["v"]
    assert v["rpc"] == ["dsl_close_device_loops", "dsl_unprice_draft_steps", "host_timer_on"]
    _assert_hook_answers(v, "LoopOffUnpricedTimer")


def test_an_f_arm_lets_only_one_requests_batch_size_forget(checkout, tmp_path):
    """+f: the same DSL engine with ServedForgetsOneRequestOnly, host timed
    as +t's; the options name methods the hook class has."""
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl8+t,dsl8+f", "--concurrency", "32,64", mib=81559)
    assert r.returncode == 0, r.stderr
    options = _arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])
    assert set(options) == {"t", "f"}
    assert options["f"] == {
        "engine": {"worker_extension_cls": "ab_hooks.ServedForgetsOneRequestOnlyTimer"},
        "rpc": ["dsl_served_forgets_one_request_only", "host_timer_on"],
        "probe": "host_timer_read"}
    _assert_hook_answers(options["f"], "ServedForgetsOneRequestOnlyTimer")


def test_e_and_s_arms_log_the_served_widths_tests(checkout, tmp_path):
    """+e: the same DSL engine with ServedWidthExplains, host timed as +t's;
    +s: also ServedPricesSlotFirst; beside a +f arm. The options name
    methods the hook classes have."""
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl4+e,dsl8+e,dsl8+s,dsl8+f", "--concurrency", "8,64", mib=81559)
    assert r.returncode == 0, r.stderr
    options = _arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])
    assert set(options) == {"t", "e", "s", "f"}
    assert options["s"] == {
        "engine": {"worker_extension_cls": "ab_hooks.ServedPricesSlotFirstExplainsTimer"},
        "rpc": ["dsl_served_prices_slot_first", "dsl_served_width_explains",
                "host_timer_on"],
        "probe": "host_timer_read"}
    _assert_hook_answers(options["s"], "ServedPricesSlotFirstExplainsTimer")
    assert options["e"] == {
        "engine": {"worker_extension_cls": "ab_hooks.ServedWidthExplainsTimer"},
        "rpc": ["dsl_served_width_explains", "host_timer_on"],
        "probe": "host_timer_read"}
    _assert_hook_answers(options["e"], "ServedWidthExplainsTimer")


def test_d_arms_price_the_draft_step_at_start_up_with_slot_first(checkout, tmp_path):
    """+d: slot first (+s) with the draft step priced at what start-up
    timed, logged and host timed as +e's; its options name methods the
    hook class has."""
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms",
             "sd2+t,dsl8+s,dsl8+d", "--concurrency", "32", mib=81559)
    assert r.returncode == 0, r.stderr
    options = _arm_options((tmp_path / "record" / "seen").read_text().splitlines()[2])
    assert set(options) == {"t", "s", "d"}
    assert options["d"] == {
        "engine": {"worker_extension_cls": "ab_hooks.ServedPricesAtStartUpExplainsTimer"},
        "rpc": ["dsl_served_prices_draft_step_at_start_up", "dsl_served_prices_slot_first",
                "dsl_served_width_explains", "host_timer_on"],
        "probe": "host_timer_read"}
    _assert_hook_answers(options["d"], "ServedPricesAtStartUpExplainsTimer")


def test_without_arms_small_every_gpu_runs_the_arms(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms", "sd2+t,dsl4+t",
             "--rounds", "4", "--concurrency", "8", mib=81559)
    assert r.returncode == 0, r.stderr
    ab = (tmp_path / "record" / "seen").read_text().splitlines()[2]
    assert "--arms sd2+t,dsl4+t " in ab and "--rounds 4 " in ab and "--concurrency 8 " in ab
    assert "--waves 1 " in ab


def test_waves_make_a_round_longer(checkout, tmp_path):
    r = _run(checkout, tmp_path, "s9p", str(tmp_path / "s9"), "--arms", "sd2+t,dsl4+t",
             "--concurrency", "2", "--waves", "4", mib=81559)
    assert r.returncode == 0, r.stderr
    ab = (tmp_path / "record" / "seen").read_text().splitlines()[2]
    assert "--waves 4 --base-requests 8 " in ab
    assert "at 2, 10 rounds of 4 waves," in r.stdout


def test_a_failed_ab_start_fails_with_its_log(checkout, tmp_path):
    r = _run(checkout, tmp_path, *_args(tmp_path), AB_FAIL="1")
    assert r.returncode == 1
    assert "abab.py: bad arm" in r.stderr
    assert not (tmp_path / "out" / "a.tgz").exists()


@pytest.mark.parametrize("args, says", [
    (["s57p", "/x"], "--arms is needed"),
    (["s57p", "/x", "--arms", "sd2", "--rounds", "0"], "--rounds '0' must be"),
    (["s57p", "/x", "--arms", "sd2", "--waves", "two"], "--waves 'two' must be"),
    (["s57p", "/x", "--arms", "sd2", "--concurrency", "1;8"], "--concurrency '1;8' must be"),
    (["s57p", "/x", "--arms"], "--arms needs a value"),
    (["s57p", "/x", "--arms", "sd2", "--cap", "8"], "unknown option --cap"),
    (["s5 7", "/x", "--arms", "sd2"], "must be letters, digits"),
    (["s57p"], "NAME and PLAN_DIR are needed"),
    (["s57p", "/x", "--arms", "sd2+t,sd2+u"], "arm 'sd2+u': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "target+v"], "arm 'target+v': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "sd2+f"], "arm 'sd2+f': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "sd2+e"], "arm 'sd2+e': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "target+s"], "arm 'target+s': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "sd2+d"], "arm 'sd2+d': +u, +v, +f, +e, +s and +d act on a DSL"),
    (["s57p", "/x", "--arms", "sd2+t", "--arms-small", "dsl4"], "arm 'dsl4' needs a label"),
])
def test_bad_arguments_are_named_and_nothing_starts(checkout, tmp_path, args, says):
    r = _run(checkout, tmp_path, *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not (tmp_path / "record" / "seen").exists()


def test_without_prompts_or_out_it_says_what_to_carry(checkout, tmp_path):
    shutil.rmtree(checkout / ".gpu-bundles" / "prompts")
    r = _run(checkout, tmp_path, *_args(tmp_path))
    assert r.returncode == 2 and "carry it with the last chunk" in r.stderr
    (checkout / ".gpu-bundles" / "prompts").mkdir()
    r = _run(checkout, tmp_path, *_args(tmp_path), OUT="")
    assert r.returncode == 2 and "OUT is not set" in r.stderr
    assert not (tmp_path / "record" / "seen").exists()


def test_the_last_chunk_is_the_highest_numbered_unless_named(checkout, tmp_path):
    r = _run(checkout, tmp_path, *_args(tmp_path), CHUNK=".gpu-bundles/b3")
    assert r.returncode == 0, r.stderr
    seen = (tmp_path / "record" / "seen").read_text().splitlines()
    assert seen[0] == f"stage-last {tmp_path / 's57'} .gpu-bundles/b3"
    for chunk in ("b3", "b11"):
        (checkout / ".gpu-bundles" / chunk).rmdir()
    (tmp_path / "record" / "seen").unlink()
    r = _run(checkout, tmp_path, *_args(tmp_path))
    assert r.returncode == 2 and "carry the bundle's last chunk" in r.stderr, r.stderr
    assert not (tmp_path / "record" / "seen").exists()
