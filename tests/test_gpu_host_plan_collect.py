"""scripts/gpu-host/plan-collect.sh on CPU: the calls after proxies-ab.sh.
Until the chain's part has ended it returns PLAN_DIR (with the chain's logs)
as a.tgz; then each call returns the first A/B not yet returned in full,
through ab-collect.sh, passing over one this host never started; an A/B
returned once it had ended is not returned again."""

import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "plan-collect.sh"


def _host(tmp_path: Path) -> dict:
    """A host where proxies-ab.sh ran: PLAN_DIR with its plan, the chain's
    log, A/B s1 ended (rc 0) and s2 still running."""
    plan, proxies, ab = tmp_path / "s70", tmp_path / "proxies", tmp_path / "ab"
    plan.mkdir()
    (plan / "ab-plan.txt").write_text("GPU memory 81559 MiB: s1\n")
    proxies.mkdir()
    (proxies / "chain.log").write_text("build_models rc=0 40s\nscale rc=0 60s\n")
    (proxies / "proxies-start.log").write_text("chain output\n")
    for name, rc in (("s1", "0\n"), ("s2", None)):
        (ab / name).mkdir(parents=True)
        (ab / name / f"{name}.log").write_text(f"c=1 {name} 1.05\n")
        if rc is not None:
            (ab / name / "rc").write_text(rc)
    out = tmp_path / "out"
    out.mkdir()
    return {"plan": plan, "env": {**os.environ, "PROXY_DIR": str(proxies),
                                  "AB_DIR": str(ab), "OUT": str(out)}, "out": out}


def _run(host: dict, *args: str, wait: str = "6", plan: str | None = None):
    argv = ["bash", str(SCRIPT), plan or str(host["plan"]), *args]
    if wait:
        argv += ["--wait", wait]
    return subprocess.run(argv, env=host["env"], capture_output=True, text=True,
                          timeout=60)


def _names(tgz: Path) -> set[str]:
    with tarfile.open(tgz) as t:
        return set(t.getnames())


def test_the_plan_until_the_chain_has_ended_then_each_ab_once(tmp_path):
    host = _host(tmp_path)
    plan, out = host["plan"], host["out"]
    # The chain's part is still on: PLAN_DIR as it is, and again next call.
    r = _run(host, "s0", "s1", "s2")
    assert r.returncode == 0, r.stderr
    assert "suite rc: running" in r.stdout and "go: no" in r.stdout
    assert "proxies: build_models rc=0 40s scale rc=0 60s" in r.stdout
    assert {"s70/ab-plan.txt", "s70/proxies-start.log"} <= _names(out / "a.tgz")
    assert not (plan / ".suite-sent").exists()
    # Ended, no suite beside: PLAN_DIR once more, and it is marked sent.
    (plan / "after.skipped").write_text("no GPU suite beside the chain\n")
    (plan / "after.done").touch()
    (plan / "go").touch()
    (out / "a.tgz").unlink()
    r = _run(host, "s0", "s1", "s2")
    assert r.returncode == 0, r.stderr
    assert "suite rc: none run" in r.stdout and "go: yes" in r.stdout
    assert "s70/after.done" in _names(out / "a.tgz")
    assert (plan / ".suite-sent").exists()
    # Then s1 (s0 never started here is passed over), ended: once; PLAN_DIR
    # is not returned again.
    (out / "a.tgz").unlink()
    r = _run(host, "s0", "s1", "s2")
    assert r.returncode == 0, r.stderr
    assert "c=1 s1 1.05" in r.stdout
    assert "./s1.log" in _names(out / "s1.tgz")
    assert not (out / "a.tgz").exists()
    assert (plan / ".s1-sent").exists()
    # s2 is still running: returned as far as it got, not marked.
    r = _run(host, "s0", "s1", "s2", wait="7")
    assert r.returncode == 0, r.stderr
    assert "./s2.log" in _names(out / "s2.tgz")
    assert not (plan / ".s2-sent").exists()
    # Once it has ended: returned once more, then nothing is left.
    (tmp_path / "ab" / "s2" / "rc").write_text("0\n")
    r = _run(host, "s0", "s1", "s2")
    assert (plan / ".s2-sent").exists()
    r = _run(host, "s0", "s1", "s2")
    assert r.returncode == 0
    assert "nothing left to return: s0 s1 s2" in r.stdout


def test_a_suite_beside_reports_its_status(tmp_path):
    host = _host(tmp_path)
    plan = host["plan"]
    for name, rc in (("suite", "0"), ("kernels", "0"), ("intree", "1")):
        (plan / f"{name}.rc").write_text(rc + "\n")
    (plan / "suite.out").write_text("55 passed\n")
    (plan / "after.done").touch()
    r = _run(host, "s1")
    assert r.returncode == 0, r.stderr
    assert "suite rc: 0; kernels: 0; intree: 1; go: no" in r.stdout
    assert "55 passed" in r.stdout


def test_bad_arguments_are_named(tmp_path):
    host = _host(tmp_path)
    r = _run(host, wait="6")
    assert r.returncode == 1 and "no RUN named" in r.stderr
    r = _run(host, "s1", wait="soon")
    assert r.returncode == 1 and "--wait 'soon' is not a number of seconds" in r.stderr
    r = _run(host, "s1", plan=str(tmp_path / "gone"))
    assert r.returncode == 1 and "gone: proxies-ab.sh did not run on this host" in r.stderr
    r = _run(host, "s1", plan="--wait")
    assert r.returncode == 1 and "PLAN_DIR comes first" in r.stderr
    r = _run(host, "bad/name")
    assert r.returncode == 2 and "NAME 'bad/name'" in r.stderr
    env = dict(host["env"])
    del env["OUT"]
    r = subprocess.run(["bash", str(SCRIPT), str(host["plan"]), "s1"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "$OUT is not set" in r.stderr
    assert not any(host["out"].iterdir())


def test_help():
    r = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.startswith("Usage: bash scripts/gpu-host/plan-collect.sh PLAN_DIR RUN...")
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 2


def test_no_chain_log_yet_is_quiet(tmp_path):
    host = _host(tmp_path)
    (tmp_path / "proxies" / "chain.log").unlink()
    (host["plan"] / "after.done").touch()
    r = _run(host, "s1")
    assert r.returncode == 0
    assert r.stdout.startswith("proxies: ; suite rc: running;")
    assert r.stderr == ""
