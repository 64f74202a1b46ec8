"""scripts/gpu-host/slim-tree.sh on CPU: the committed results leave the
working tree (a sparse checkout), so call-size.sh counts fewer bytes for
every device call; named KEEP paths stay; --restore brings every file back;
uncommitted results and a KEEP outside benchmarks/results/ are refused."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def _project(tmp_path: Path) -> Path:
    """A checkout with the scripts, a tracked file outside the results
    (1,000 bytes), two result folders (a run's 40,000-byte file, a plan's
    script) and a result file at the results' top."""
    proj = tmp_path / "proj"
    (proj / "scripts" / "gpu-host").mkdir(parents=True)
    (proj / "scripts" / "lib").mkdir()
    for rel in ("scripts/gpu-host/slim-tree.sh", "scripts/gpu-host/call-size.sh",
                "scripts/lib/common.sh", "scripts/lib/call_size.py"):
        shutil.copy(ROOT / rel, proj / rel)
    (proj / "tracked.bin").write_bytes(b"t" * 1000)
    results = proj / "benchmarks" / "results"
    (results / "run").mkdir(parents=True)
    (results / "run" / "abab.json.gz").write_bytes(b"r" * 40_000)
    (results / "plan").mkdir()
    (results / "plan" / "collect.sh").write_text("echo collect\n")
    (results / "README.md").write_text("results\n")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=proj, check=True, env=_ENV)
    return proj


def _run(proj: Path, script: str, *args: str):
    return subprocess.run(["bash", str(proj / "scripts/gpu-host" / script), *args],
                          cwd=proj, env=_ENV, capture_output=True, text=True)


def _tree_bytes(proj: Path) -> int:
    r = _run(proj, "call-size.sh")
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[0]
    assert line.startswith("tree ")
    return int(line.split(": ")[1].split()[0].replace(",", ""))


def _status(proj: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=proj, check=True,
                          capture_output=True, text=True).stdout


def test_slim_leaves_the_results_out_but_the_kept_plan_and_restore_brings_them_back(
        tmp_path):
    proj = _project(tmp_path)
    results = proj / "benchmarks" / "results"
    before = _tree_bytes(proj)
    r = _run(proj, "slim-tree.sh", "benchmarks/results/plan/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("tree (tracked and untracked-not-ignored files): ")
    assert not (results / "run").exists()
    assert not (results / "README.md").exists()
    assert (results / "plan" / "collect.sh").read_text() == "echo collect\n"
    assert (proj / "tracked.bin").exists()
    assert _status(proj) == ""
    # What no longer travels: the run's file and the README (and the run's folder).
    assert before - _tree_bytes(proj) == 40_000 + len("results\n")
    r = _run(proj, "slim-tree.sh", "--restore")
    assert r.returncode == 0, r.stderr
    assert (results / "run" / "abab.json.gz").read_bytes() == b"r" * 40_000
    assert (results / "README.md").exists()
    assert _tree_bytes(proj) == before
    assert _status(proj) == ""


def test_a_kept_file_stays(tmp_path):
    proj = _project(tmp_path)
    r = _run(proj, "slim-tree.sh", "benchmarks/results/README.md")
    assert r.returncode == 0, r.stderr
    assert (proj / "benchmarks/results/README.md").exists()
    assert not (proj / "benchmarks/results/plan").exists()


@pytest.mark.parametrize("keep, said", [
    ("scripts/lib", "is not under benchmarks/results/"),
    ("benchmarks/results/nowhere", "is not in HEAD's tree"),
    ("--keep", "unknown option '--keep'"),
])
def test_a_bad_keep_is_named_and_nothing_changes(tmp_path, keep, said):
    proj = _project(tmp_path)
    r = _run(proj, "slim-tree.sh", keep)
    assert r.returncode == 1
    assert said in r.stderr and keep.rstrip("/") in r.stderr
    assert (proj / "benchmarks/results/run/abab.json.gz").exists()


def test_uncommitted_results_are_refused_and_kept(tmp_path):
    proj = _project(tmp_path)
    new = proj / "benchmarks/results/new/result.txt"
    new.parent.mkdir()
    new.write_text("not yet committed\n")
    r = _run(proj, "slim-tree.sh")
    assert r.returncode == 1
    assert "uncommitted changes" in r.stderr and "benchmarks/results/new/" in r.stderr
    assert new.read_text() == "not yet committed\n"
    assert (proj / "benchmarks/results/run/abab.json.gz").exists()


def test_help():
    r = subprocess.run(["bash", str(ROOT / "scripts/gpu-host/slim-tree.sh"), "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.startswith("Usage: bash scripts/gpu-host/slim-tree.sh")
