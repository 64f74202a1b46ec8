"""scripts/gpu-host/small-start.sh on CPU: the small pair's chain runs in its
own process session after the command returns, builds the models then the
4-layer self-distilled draft with their settings, keeps the draft's
distill.json, and writes its done marker (0, or the first failing status with
nothing run after it). The build scripts are stand-ins in a scratch checkout
that record their environment; the script under test is the real one."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import time
from pathlib import Path

import pytest
from scratch_checkout import scratch_checkout, start
from waiting import wait_for_text

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "small-start.sh"

STAND_IN = '''
import json, os, sys
from pathlib import Path
name = Path(sys.argv[0]).stem
keys = ("DATA", "NL", "STEPS", "DRAFT_LAYERS", "GPU_HOST_ROOT", "SMALL_TEST_ENV")
record = {k: os.environ.get(k) for k in keys}
if name == "kept_draft":
    record = {"argv": sys.argv[1:]}
Path(os.environ["RECORD"], name + ".json").write_text(json.dumps(record))
if name == "kept_draft" and not os.environ.get("FAIL_KEPT_DRAFT"):
    out = Path(os.environ["GPU_HOST_ROOT"], "models", "smollm2-l4-self")
    out.mkdir(parents=True, exist_ok=True)
    (out / "distill.json").write_text('{"acceptance": 0.32, "kept": true}')
if name == "distill":
    out = Path(os.environ["GPU_HOST_ROOT"], "models", "smollm2-l4-self")
    out.mkdir(parents=True, exist_ok=True)
    (out / "distill.json").write_text('{"acceptance": 0.31}')
sys.exit(int(os.environ.get("FAIL_" + name.upper(), "0")))
'''


@pytest.fixture
def host(tmp_path):
    checkout, root, record = scratch_checkout(
        tmp_path, {"build_models.py": STAND_IN, "distill.py": STAND_IN,
                   "kept_draft.py": STAND_IN},
        "export SMALL_TEST_ENV=sourced\n")
    env = {**os.environ, "GPU_HOST_ROOT": str(root),
           "SMALL_DIR": str(tmp_path / "small"), "RECORD": str(record)}
    return checkout, root, env, tmp_path


def _start(checkout, env, *args):
    return start(SCRIPT, checkout, env, *args)


def test_the_chain_builds_the_models_then_the_draft(host):
    checkout, root, env, tmp = host
    kept = checkout / "benchmarks" / "gpu-rows"
    kept.mkdir(parents=True)
    (kept / "self-rows-abc.pt.xz").write_bytes(lzma.compress(b"rows"))
    (kept / "SHA256SUMS").write_text(hashlib.sha256(b"rows").hexdigest() + "  self-rows-abc.pt\n")
    started = _start(checkout, {**env, "SMALL_STEPS": "12"})
    assert started.returncode == 0, started.stderr
    assert "rows staged: self-rows-abc.pt" in started.stdout and "wait for" in started.stdout
    assert (root / "models" / "self-rows-abc.pt").read_text() == "rows"
    assert wait_for_text(tmp / "small" / "done") == "0"
    models = json.loads((tmp / "record" / "build_models.json").read_text())
    assert models["DRAFT_LAYERS"] == "4" and models["SMALL_TEST_ENV"] == "sourced"
    distill = json.loads((tmp / "record" / "distill.json").read_text())
    assert distill == {"DATA": "self", "NL": "4", "STEPS": "12", "DRAFT_LAYERS": None,
                       "GPU_HOST_ROOT": str(root), "SMALL_TEST_ENV": "sourced"}
    assert json.loads((tmp / "small" / "distill-l4-self.json").read_text()) == {
        "acceptance": 0.31}
    chain = (tmp / "small" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["build_models", "rc=0"], ["distill-l4-self", "rc=0"]]


def test_a_failing_build_stops_the_chain_and_marks_done_with_its_status(host):
    checkout, root, env, tmp = host
    started = _start(checkout, {**env, "FAIL_BUILD_MODELS": "3"})
    assert started.returncode == 0, started.stderr
    assert wait_for_text(tmp / "small" / "done") == "3"
    assert not (tmp / "record" / "distill.json").exists()
    assert not (tmp / "small" / "distill-l4-self.json").exists()
    chain = (tmp / "small" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [["build_models", "rc=3"]]


def test_beside_the_suite_it_waits_for_the_suites_truncation(host):
    """--beside-suite builds nothing: the draft is distilled once the suite's
    build marks the 4-layer truncation built."""
    checkout, root, env, tmp = host
    built = root / "models" / "smollm2-l4"
    built.mkdir(parents=True)
    (built / ".built").write_text("")  # an earlier run's marker: removed
    started = _start(checkout, env, "--beside-suite")
    assert started.returncode == 0, started.stderr
    time.sleep(1.5)
    assert not (tmp / "small" / "done").exists()  # still waiting
    (built / ".built").write_text("")
    assert wait_for_text(tmp / "small" / "done") == "0"
    assert not (tmp / "record" / "build_models.json").exists()
    assert json.loads((tmp / "record" / "distill.json").read_text())["NL"] == "4"
    chain = (tmp / "small" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["wait_for_suite_models", "rc=0"], ["distill-l4-self", "rc=0"]]


def test_beside_the_suite_a_wait_that_runs_out_ends_the_chain(host):
    checkout, root, env, tmp = host
    started = _start(checkout, {**env, "SMALL_WAIT_S": "1"}, "--beside-suite")
    assert started.returncode == 0, started.stderr
    assert wait_for_text(tmp / "small" / "done") == "124"
    assert not (tmp / "record" / "distill.json").exists()


@pytest.mark.parametrize("change, message", [
    ({"SMALL_STEPS": "0"}, "SMALL_STEPS '0' is not a positive whole number"),
    ({"GPU_HOST_ROOT": "/nonexistent"}, "stage the bundle first"),
    ({"SMALL_WAIT_S": "soon"}, "SMALL_WAIT_S 'soon' is not a number of seconds"),
])
def test_bad_settings_are_named_before_anything_runs(host, change, message):
    checkout, root, env, tmp = host
    started = _start(checkout, {**env, **change})
    assert started.returncode != 0
    assert message in started.stderr
    assert not (tmp / "small").exists()


def test_without_prompts_it_says_what_to_carry(host):
    checkout, root, env, tmp = host
    (checkout / ".gpu-bundles" / "prompts").rmdir()
    started = _start(checkout, env)
    assert started.returncode == 1
    assert "carry it" in started.stderr


def test_help_prints_the_header(host):
    checkout, root, env, tmp = host
    shown = _start(checkout, env, "--help")
    assert shown.returncode == 0
    assert "Usage: bash scripts/gpu-host/small-start.sh" in shown.stdout
    assert _start(checkout, env, "--bogus").returncode == 2


def test_a_staged_kept_draft_is_assembled_and_else_distilled(host):
    checkout, root, env, tmp = host
    kept = root / "models" / "kept" / "smollm2-l4-self"
    kept.mkdir(parents=True)
    (kept / "smollm2-l4-self.safetensors").write_bytes(b"weights")
    assert _start(checkout, env).returncode == 0
    assert wait_for_text(tmp / "small" / "done") == "0"
    assert json.loads((tmp / "record" / "kept_draft.json").read_text()) == {
        "argv": ["assemble", "smollm2-l4-self", str(kept)]}
    assert not (tmp / "record" / "distill.json").exists()
    assert json.loads((tmp / "small" / "distill-l4-self.json").read_text())["kept"] is True
    steps = [line.split()[:2] for line in
             (tmp / "small" / "chain.log").read_text().splitlines()]
    assert steps == [["build_models", "rc=0"], ["kept-l4-self", "rc=0"]]

    (tmp / "small" / "done").unlink()
    (tmp / "record" / "kept_draft.json").unlink()
    assert _start(checkout, {**env, "FAIL_KEPT_DRAFT": "1"}).returncode == 0
    assert wait_for_text(tmp / "small" / "done") == "0"
    steps = [line.split()[:2] for line in
             (tmp / "small" / "chain.log").read_text().splitlines()]
    assert steps == [["build_models", "rc=0"], ["kept-l4-self", "rc=1"],
                     ["distill-l4-self", "rc=0"]]
    assert json.loads((tmp / "small" / "distill-l4-self.json").read_text()) == {
        "acceptance": 0.31}
