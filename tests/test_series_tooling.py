"""Tests of the patch-series scripts on a small synthetic upstream repository.

Every script runs for real (subprocess) against a throwaway git repository that
stands in for vllm/: VLLM_DIR and PATCH_DIR point the scripts at it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
BASE_TAG = "upstream/v0.32.0"
# A fixed identity: the scripts export their own committer, which a caller
# (fastcheck) may leave in the environment.
IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Test Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}
ENV = {**os.environ, **IDENTITY}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    ).stdout


def run(script: str, env: dict, *args: str, ok: bool = True):
    proc = subprocess.run(
        [str(SCRIPTS / script), *args], env=env, capture_output=True, text=True
    )
    if ok and proc.returncode != 0:
        raise AssertionError(f"{script} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def commit(repo: Path, msg: str, files: dict[str, str], signoff: bool = True):
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", *(["-s"] if signoff else []), "-m", msg)


@pytest.fixture
def upstream(tmp_path: Path):
    """A fake vllm/ with the pinned base tag and a two-patch series branch."""
    repo = tmp_path / "vllm"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "dsl")
    git(repo, "config", "user.name", "Test Dev")
    git(repo, "config", "user.email", "dev@example.com")
    lines = "".join(f"line {i}\n" for i in range(1, 21))
    commit(repo, "base", {"a.txt": lines, "b.txt": lines}, signoff=False)
    git(repo, "tag", BASE_TAG)
    commit(
        repo, "[Core] first change", {"a.txt": lines.replace("line 2\n", "LINE 2\n")}
    )
    commit(repo, "[Spec Decode] second change", {"c.txt": "new file\n"})
    env = dict(
        ENV,
        VLLM_DIR=str(repo),
        PATCH_DIR=str(tmp_path / "patches"),
        DSL_OFFLINE_GIT="1",
    )
    return repo, tmp_path / "patches", env


def test_every_script_has_help():
    for script in sorted(SCRIPTS.glob("*.sh")):
        proc = subprocess.run([str(script), "--help"], capture_output=True, text=True)
        assert proc.returncode == 0, script.name
        assert proc.stdout.startswith("Usage: scripts/"), script.name


def test_unknown_argument_is_one_clear_error(upstream):
    _, _, env = upstream
    proc = run("export.sh", env, "--bogus", ok=False)
    assert proc.returncode != 0
    assert "unknown argument '--bogus'" in proc.stderr


def test_export_is_normalized_and_idempotent(upstream):
    repo, patches, env = upstream
    run("export.sh", env)
    series = (patches / "series").read_text().split()
    assert series == [
        "0001-Core-first-change.patch",
        "0002-Spec-Decode-second-change.patch",
    ]
    first = {p.name: p.read_bytes() for p in patches.iterdir()}
    text = first[series[0]].decode()
    assert text.startswith("From 0000000000000000000000000000000000000000 ")
    assert "Signed-off-by: Test Dev" in text
    run("export.sh", env)
    assert {p.name: p.read_bytes() for p in patches.iterdir()} == first
    assert run("export.sh", env, "--check").returncode == 0


def test_export_refuses_unsigned_commit(upstream):
    repo, _, env = upstream
    commit(repo, "no dco", {"d.txt": "x\n"}, signoff=False)
    proc = run("export.sh", env, ok=False)
    assert proc.returncode != 0 and "Signed-off-by" in proc.stderr


def test_export_check_detects_stale_patches(upstream):
    repo, _, env = upstream
    run("export.sh", env)
    commit(repo, "[Core] third", {"e.txt": "x\n"})
    proc = run("export.sh", env, "--check", ok=False)
    assert proc.returncode != 0 and "differs" in proc.stderr


def test_apply_round_trip_reproduces_commits(upstream):
    repo, _, env = upstream
    run("export.sh", env)
    before = git(repo, "rev-parse", "dsl:")  # tree of the branch
    run("apply.sh", env)
    assert git(repo, "rev-parse", "dsl:") == before
    subjects = git(repo, "log", "--format=%s", f"{BASE_TAG}..dsl").splitlines()
    assert subjects == ["[Spec Decode] second change", "[Core] first change"]
    assert run("export.sh", env, "--check").returncode == 0
    # Deterministic: applying twice gives the same commit ids.
    head = git(repo, "rev-parse", "dsl")
    run("apply.sh", env)
    assert git(repo, "rev-parse", "dsl") == head


def test_apply_refuses_to_drop_unexported_commits(upstream):
    repo, _, env = upstream
    run("export.sh", env)
    commit(repo, "[Core] not exported", {"f.txt": "x\n"})
    head = git(repo, "rev-parse", "HEAD")
    proc = run("apply.sh", env, ok=False)
    assert proc.returncode != 0 and "export" in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_apply_failure_names_patch_and_files_and_leaves_tree_clean(upstream):
    repo, patches, env = upstream
    run("export.sh", env)
    # An upstream-only edit on the base, so the first patch no longer applies.
    git(repo, "checkout", "-q", "--detach", BASE_TAG)
    text = (repo / "a.txt").read_text().replace("line 2\n", "upstream 2\n")
    commit(repo, "moved base", {"a.txt": text}, signoff=False)
    git(repo, "tag", "-f", BASE_TAG)
    git(repo, "checkout", "-q", "dsl")
    head = git(repo, "rev-parse", "HEAD")
    proc = run("apply.sh", env, "--force", ok=False)
    assert proc.returncode != 0
    assert "0001-Core-first-change.patch does not apply" in proc.stderr
    assert "a.txt" in proc.stderr
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / ".git" / "rebase-apply").exists()


def test_rebase_reports_clean_merged_and_conflicted(upstream):
    repo, patches, env = upstream
    commit(repo, "[Core] touch b", {"b.txt": (repo / "b.txt").read_text() + "tail\n"})
    run("export.sh", env)
    # The "new release": conflicts with patch 1, shifts the context of patch 3.
    git(repo, "checkout", "-q", "--detach", BASE_TAG)
    a = (repo / "a.txt").read_text().replace("line 2\n", "upstream 2\n")
    b = "header\n" + (repo / "b.txt").read_text()
    commit(repo, "v9.9.9", {"a.txt": a, "b.txt": b}, signoff=False)
    git(repo, "tag", "upstream/v9.9.9")
    git(repo, "checkout", "-q", "dsl")
    report = patches.parent / "report.md"
    proc = run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report), ok=False)
    assert proc.returncode == 3, proc.stderr
    text = report.read_text()
    assert (
        "| `0001-Core-first-change.patch` | **conflicted** (skipped) | `a.txt` |"
        in text
    )
    assert "| `0002-Spec-Decode-second-change.patch` | clean |" in text
    assert "| `0003-Core-touch-b.patch` | clean |" in text
    assert "2 clean, 0 3-way merged, 1 conflicted" in text
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "dsl"
    assert git(repo, "status", "--porcelain") == ""
    # --allow-conflicts turns the exit status into success, report unchanged.
    proc = run(
        "rebase.sh",
        env,
        "--onto",
        "9.9.9",
        "--report",
        str(report),
        "--allow-conflicts",
    )
    assert "1 conflicted" in report.read_text()
