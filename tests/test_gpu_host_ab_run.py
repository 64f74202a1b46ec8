"""scripts/gpu-host/ab-run.sh on CPU: an A/B run in the foreground until a
deadline, its result, log, summary and samplers packed into one tarball in
$OUT, also when the deadline cuts it. The A/B is a stand-in
``benchmarks/abab.py`` in a scratch checkout that writes a result after its
first point and then either ends or waits past the deadline; the script under
test is the real one."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu-host" / "ab-run.sh"

STAND_IN = '''
import json, os, sys, time
from pathlib import Path
args = sys.argv[1:]
out = Path(args[args.index("--out") + 1])
out.write_text(json.dumps({"args": args, "init_s": 12.0, "failed": {},
                           "summary": ["c=64: sd3 median 5.800 ms", "  target 0.99"]}))
print("point 1 done", os.environ.get("AB_TEST_ENV_SOURCED"), flush=True)
if "--hang" in args:
    time.sleep(600)
sys.exit(int(os.environ.get("STAND_IN_RC", "0")))
'''


def _host(tmp_path: Path):
    checkout = tmp_path / "checkout"
    (checkout / "benchmarks").mkdir(parents=True)
    (checkout / "benchmarks" / "abab.py").write_text(STAND_IN)
    root = tmp_path / "gpuhost"
    root.mkdir()
    (root / "env.sh").write_text("export AB_TEST_ENV_SOURCED=yes\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "OUT": str(out),
           "TMPDIR": str(tmp_path)}
    return checkout, env, out


def _run(checkout, env, *args):
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)


def _members(tgz: Path) -> dict[str, bytes]:
    with tarfile.open(tgz) as tar:
        return {m.name.removeprefix("./"): tar.extractfile(m).read()
                for m in tar.getmembers() if m.isfile()}


def test_one_tarball_with_the_result_log_summary_and_samplers(tmp_path):
    checkout, env, out = _host(tmp_path)
    r = _run(checkout, env, "pair", "--", "--arms", "sd3,target")
    assert r.returncode == 0, r.stderr
    assert "c=64: sd3 median 5.800 ms" in r.stdout
    assert [p.name for p in out.iterdir()] == ["pair.tgz"]
    files = _members(out / "pair.tgz")
    assert {"abab.json", "abab.log", "summary.txt", "top.log", "gpu.csv"} <= set(files)
    args = json.loads(files["abab.json"])["args"]
    assert args[:2] == ["--arms", "sd3,target"] and args[2] == "--out"
    assert b"point 1 done yes" in files["abab.log"]  # env.sh was sourced
    assert files["summary.txt"].startswith(b"abab.py exit 0 after ")
    # Nothing is left behind on the host.
    assert not list(tmp_path.glob("ab-run-pair.*"))


def test_the_deadline_cuts_the_run_and_keeps_what_it_wrote(tmp_path):
    checkout, env, out = _host(tmp_path)
    t0 = time.time()
    r = _run(checkout, {**env, "AB_END": str(int(t0) + 4), "AB_MIN_S": "2"}, "cut",
             "--hang")
    assert r.returncode == 124
    assert time.time() - t0 < 30
    files = _members(out / "cut.tgz")
    assert json.loads(files["abab.json"])["summary"][0].startswith("c=64")
    assert files["summary.txt"].startswith(b"abab.py exit 124 after ")


def test_a_failed_run_keeps_its_status_and_a_run_past_the_deadline_is_skipped(tmp_path):
    checkout, env, out = _host(tmp_path)
    r = _run(checkout, {**env, "STAND_IN_RC": "3"}, "bad")
    assert r.returncode == 3
    assert _members(out / "bad.tgz")["summary.txt"].startswith(b"abab.py exit 3")
    r = _run(checkout, {**env, "AB_END": str(int(time.time()) + 10)}, "late")
    assert r.returncode == 0 and "not started" in r.stdout
    assert set(_members(out / "late.tgz")) == {"summary.txt"}


def test_bad_input_is_one_clear_error(tmp_path):
    checkout, env, out = _host(tmp_path)
    assert _run(checkout, env).returncode == 2
    assert _run(checkout, env, "--help").returncode == 0
    bad = _run(checkout, env, "x", "--out", "a.json")
    assert bad.returncode == 2 and "do not pass --out" in bad.stderr
    bad = _run(checkout, env, "a/b")
    assert bad.returncode == 2 and "NAME 'a/b'" in bad.stderr
    bad = _run(checkout, {**env, "AB_MIN_S": "-1"}, "x")
    assert bad.returncode == 2 and "AB_MIN_S '-1'" in bad.stderr
    bad = _run(checkout, {**env, "AB_BUDGET_S": "soon"}, "x")
    assert bad.returncode == 2 and "AB_BUDGET_S 'soon'" in bad.stderr
    bad = _run(checkout, {**env, "GPU_HOST_ROOT": str(tmp_path / "none")}, "x")
    assert bad.returncode == 1 and "stage the bundle first" in bad.stderr
    no_out = {k: v for k, v in env.items() if k != "OUT"}
    bad = _run(checkout, no_out, "x")
    assert bad.returncode != 0 and "OUT is not set" in bad.stderr
    assert not list(out.iterdir())
