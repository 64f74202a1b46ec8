"""scripts/gpu-host/proxies-start.sh on CPU: the proxy chain runs in its own
process session after the command returns, builds the 16-layer truncation or
(beside the suite) waits for the suite's, runs the distillation then the scaling with their settings, and
writes its done marker (0, or the first failing status with nothing run
after it). The build scripts are stand-ins in a scratch checkout that record
their environment; the script under test is the real one."""

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
SCRIPT = ROOT / "scripts" / "gpu-host" / "proxies-start.sh"

STAND_IN = '''
import json, os, sys
from pathlib import Path
name = Path(sys.argv[0]).stem
keys = ("DATA", "NL", "STEPS", "DRAFT", "PROXY_TEST_ENV")
record = {k: os.environ.get(k) for k in keys}
if name == "kept_draft":
    record = {"argv": sys.argv[1:]}
Path(os.environ["RECORD"], name + ".json").write_text(json.dumps(record))
print(name, "ran")
sys.exit(int(os.environ.get("FAIL_" + name.upper(), "0")))
'''


@pytest.fixture
def host(tmp_path):
    checkout, root, record = scratch_checkout(
        tmp_path, {"distill.py": STAND_IN, "build_scaled.py": STAND_IN,
                   "kept_draft.py": STAND_IN},
        "export PROXY_TEST_ENV=sourced\n")
    (root / "models" / "smollm2-l16").mkdir(parents=True)
    env = {**os.environ, "GPU_HOST_ROOT": str(root),
           "PROXY_DIR": str(tmp_path / "proxies"), "RECORD": str(record)}
    return checkout, root, env, tmp_path


def _start(checkout, env, *args):
    return start(SCRIPT, checkout, env, *args)


def test_beside_the_suite_the_chain_waits_for_the_truncation_then_builds_both(host):
    checkout, root, env, tmp = host
    started = _start(checkout, {**env, "PROXY_STEPS": "12"}, "--beside-suite")
    assert started.returncode == 0, started.stderr
    assert "wait for" in started.stdout
    time.sleep(0.5)
    # The suite has not built the 16-layer truncation yet: nothing ran.
    assert not (tmp / "record" / "distill.json").exists()
    (root / "models" / "smollm2-l16" / ".built").touch()
    assert wait_for_text(tmp / "proxies" / "done") == "0"
    distill = json.loads((tmp / "record" / "distill.json").read_text())
    assert distill == {"DATA": "self", "NL": "16", "STEPS": "12", "DRAFT": None,
                       "PROXY_TEST_ENV": "sourced"}
    scaled = json.loads((tmp / "record" / "build_scaled.json").read_text())
    assert scaled["DRAFT"] == "smollm2-l16-self"
    chain = (tmp / "proxies" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["wait_for_suite_models", "rc=0"], ["distill-l16-self", "rc=0"],
        ["build_scaled", "rc=0"]]
    assert "distill ran" in (tmp / "proxies" / "distill-l16-self.log").read_text()


def test_a_failed_distillation_stops_the_chain_with_its_status(host):
    checkout, root, env, tmp = host
    (root / "models" / "smollm2-l16" / ".built").touch()
    assert _start(checkout, {**env, "FAIL_DISTILL": "3"}).returncode == 0
    assert wait_for_text(tmp / "proxies" / "done") == "3"
    assert not (tmp / "record" / "build_scaled.json").exists()


def test_bad_input_is_one_clear_error(host):
    checkout, root, env, tmp = host
    bad = _start(checkout, {**env, "PROXY_STEPS": "0"})
    assert bad.returncode == 2 and "PROXY_STEPS '0'" in bad.stderr
    bad = _start(checkout, {**env, "PROXY_WAIT_S": "soon"})
    assert bad.returncode == 2 and "PROXY_WAIT_S 'soon'" in bad.stderr
    unstaged = _start(checkout, {**env, "GPU_HOST_ROOT": str(tmp / "no")})
    assert unstaged.returncode == 1 and "stage the bundle first" in unstaged.stderr
    assert _start(checkout, env, "--now").returncode == 2
    assert _start(checkout, env, "--help").returncode == 0


def _keep_rows(checkout: Path, data: bytes, sha: str | None = None) -> str:
    """One kept rows file in the checkout's benchmarks/gpu-rows, as
    keep-rows.sh leaves it (xz, its sha256 in SHA256SUMS); its name."""
    kept = checkout / "benchmarks" / "gpu-rows"
    kept.mkdir(parents=True)
    name = "self-rows-0123456789ab.pt"
    (kept / (name + ".xz")).write_bytes(lzma.compress(data))
    (kept / "SHA256SUMS").write_text(f"{sha or hashlib.sha256(data).hexdigest()}  {name}\n")
    return name


def test_kept_rows_are_unpacked_before_distillation(host):
    checkout, root, env, tmp = host
    name = _keep_rows(checkout, b"rows" * 100)
    (root / "models" / "smollm2-l16" / ".built").touch()
    out = _start(checkout, env)
    assert out.returncode == 0, out.stderr
    assert f"kept distillation rows staged: {name}" in out.stdout
    assert (root / "models" / name).read_bytes() == b"rows" * 100
    assert wait_for_text(tmp / "proxies" / "done") == "0"


def test_kept_rows_that_do_not_match_their_sha_are_not_staged(host):
    checkout, root, env, tmp = host
    name = _keep_rows(checkout, b"rows", sha="0" * 64)
    (root / "models" / "smollm2-l16" / ".built").touch()
    out = _start(checkout, env)
    # The chain goes on (distill.py generates its rows); the file is named.
    assert out.returncode == 0, out.stderr
    assert f"{name}.xz unpacks to sha256" in out.stderr and "restore it from git" in out.stderr
    assert not (root / "models" / name).exists()
    assert wait_for_text(tmp / "proxies" / "done") == "0"


def test_no_kept_rows_stages_nothing(host):
    checkout, root, env, tmp = host
    (root / "models" / "smollm2-l16" / ".built").touch()
    out = _start(checkout, env)
    assert out.returncode == 0, out.stderr
    assert "rows staged" not in out.stdout
    assert not list((root / "models").glob("self-rows-*"))
    assert wait_for_text(tmp / "proxies" / "done") == "0"


def test_foreground_builds_the_truncation_then_the_chain_and_exits_with_it(host):
    checkout, root, env, tmp = host
    (checkout / "scripts" / "gpu-host" / "build_models.py").write_text(STAND_IN)
    (root / "models" / "smollm2-135m").mkdir()  # as the real build_models.py writes
    out = _start(checkout, env, "--foreground")
    assert out.returncode == 0, out.stderr
    # Each step's line as it ends, in order, and the markers the suite would write.
    steps = [line.split()[:2] for line in out.stdout.splitlines() if " rc=" in line]
    assert steps == [["build_models", "rc=0"], ["distill-l16-self", "rc=0"],
                     ["build_scaled", "rc=0"]]
    assert json.loads((tmp / "record" / "build_models.json").read_text())[
        "PROXY_TEST_ENV"] == "sourced"
    assert (root / "models" / "smollm2-l16" / ".built").exists()
    assert (root / "models" / "smollm2-135m" / ".built").exists()
    assert (tmp / "proxies" / "done").read_text().strip() == "0"
    # Built already: the truncation is not rebuilt.
    (tmp / "record" / "build_models.json").unlink()
    assert _start(checkout, env, "--foreground").returncode == 0
    assert not (tmp / "record" / "build_models.json").exists()


def test_beside_the_suite_a_wait_that_runs_out_ends_the_chain_with_124(host):
    checkout, root, env, tmp = host
    out = _start(checkout, {**env, "PROXY_WAIT_S": "1"}, "--beside-suite")
    assert out.returncode == 0, out.stderr
    assert wait_for_text(tmp / "proxies" / "done") == "124"
    chain = (tmp / "proxies" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [["wait_for_suite_models", "rc=124"]]
    assert not list((tmp / "record").glob("*.json"))


def test_by_default_the_chain_builds_the_truncation_itself(host):
    # Session 55: a plan that ran no suite started the chain, which then
    # waited out PROXY_WAIT_S for a truncation nothing was building.
    checkout, root, env, tmp = host
    (checkout / "scripts" / "gpu-host" / "build_models.py").write_text(STAND_IN)
    (root / "models" / "smollm2-135m").mkdir()
    out = _start(checkout, env)
    assert out.returncode == 0, out.stderr
    assert "wait for" in out.stdout
    assert wait_for_text(tmp / "proxies" / "done") == "0"
    chain = (tmp / "proxies" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["build_models", "rc=0"], ["distill-l16-self", "rc=0"], ["build_scaled", "rc=0"]]
    assert json.loads((tmp / "record" / "build_models.json").read_text())[
        "PROXY_TEST_ENV"] == "sourced"
    assert (root / "models" / "smollm2-l16" / ".built").exists()


def test_foreground_exits_with_the_first_failing_status(host):
    checkout, root, env, tmp = host
    (checkout / "scripts" / "gpu-host" / "build_models.py").write_text(STAND_IN)
    out = _start(checkout, {**env, "FAIL_BUILD_MODELS": "4"}, "--foreground")
    assert out.returncode == 4
    assert not (tmp / "record" / "distill.json").exists()
    assert not (root / "models" / "smollm2-l16" / ".built").exists()
    assert (tmp / "proxies" / "done").read_text().strip() == "4"
    (root / "models" / "smollm2-l16" / ".built").touch()
    out = _start(checkout, {**env, "FAIL_BUILD_SCALED": "5"}, "--foreground")
    assert out.returncode == 5 and "build_scaled rc=5" in out.stdout


def _stage_kept_draft(root: Path) -> Path:
    """The kept draft's files where the bundle stages them (pack-offline.sh
    --with-drafts): models/kept/smollm2-l16-self/."""
    kept = root / "models" / "kept" / "smollm2-l16-self"
    kept.mkdir(parents=True)
    (kept / "smollm2-l16-self.safetensors").write_bytes(b"weights")
    (kept / "smollm2-l16-self.meta.tar.gz").write_bytes(b"meta")
    return kept


def test_a_staged_kept_draft_is_assembled_instead_of_distilled(host):
    checkout, root, env, tmp = host
    kept = _stage_kept_draft(root)
    (root / "models" / "smollm2-l16" / ".built").touch()
    assert _start(checkout, env).returncode == 0
    assert wait_for_text(tmp / "proxies" / "done") == "0"
    assert json.loads((tmp / "record" / "kept_draft.json").read_text()) == {
        "argv": ["assemble", "smollm2-l16-self", str(kept)]}
    assert not (tmp / "record" / "distill.json").exists()
    chain = (tmp / "proxies" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["kept-l16-self", "rc=0"], ["build_scaled", "rc=0"]]


def test_a_kept_draft_that_does_not_assemble_is_distilled(host):
    checkout, root, env, tmp = host
    _stage_kept_draft(root)
    (root / "models" / "smollm2-l16" / ".built").touch()
    assert _start(checkout, {**env, "FAIL_KEPT_DRAFT": "1"}).returncode == 0
    assert wait_for_text(tmp / "proxies" / "done") == "0"
    chain = (tmp / "proxies" / "chain.log").read_text().splitlines()
    assert [line.split()[:2] for line in chain] == [
        ["kept-l16-self", "rc=1"], ["distill-l16-self", "rc=0"], ["build_scaled", "rc=0"]]
    assert json.loads((tmp / "record" / "distill.json").read_text())["STEPS"] == "900"
