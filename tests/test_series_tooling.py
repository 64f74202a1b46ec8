"""Tests of the patch-series scripts on a small synthetic upstream repository.

Every script runs for real (subprocess) against a throwaway git repository that
stands in for vllm/: VLLM_DIR and PATCH_DIR point the scripts at it.
"""

from __future__ import annotations

import os
import subprocess
import re
import sys
import time
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
    assert proc.returncode != 0 and "Run scripts/export.sh" in proc.stderr
    assert "[Core] not exported" in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def edit_patch_file(patches: Path) -> Path:
    """Hand-edit the second patch of the series (its one added line)."""
    p = patches / "0002-Spec-Decode-second-change.patch"
    p.write_text(p.read_text().replace("+new file\n", "+edited file\n"))
    return p


def test_apply_takes_an_edited_patch_file_and_never_suggests_export(upstream):
    """Issue #20: an edited patch file is not "un-exported commits": apply.sh applies
    it (the branch holds nothing that would be lost)."""
    repo, patches, env = upstream
    run("export.sh", env)
    edit_patch_file(patches)
    proc = run("apply.sh", env)
    assert "0002-Spec-Decode-second-change.patch" in proc.stderr
    assert "export.sh" not in proc.stderr
    assert (repo / "c.txt").read_text() == "edited file\n"
    # Applied once, the branch is in step with the edited patches/ again.
    run("apply.sh", env)
    assert (repo / "c.txt").read_text() == "edited file\n"


def test_apply_with_an_edited_patch_and_unexported_commits_names_both(upstream):
    repo, patches, env = upstream
    run("export.sh", env)
    edited = edit_patch_file(patches).read_text()
    commit(repo, "[Core] not exported", {"f.txt": "x\n"})
    head = git(repo, "rev-parse", "HEAD")
    proc = run("apply.sh", env, ok=False)
    assert proc.returncode == 1
    assert "0002-Spec-Decode-second-change.patch" in proc.stderr
    assert "[Core] not exported" in proc.stderr
    # export.sh would overwrite the edit: never suggested as the way out.
    assert "Do not run scripts/export.sh" in proc.stderr
    assert "Run scripts/export.sh" not in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert edited == (patches / "0002-Spec-Decode-second-change.patch").read_text()


def test_apply_after_a_pull_without_a_record_applies_the_new_series(upstream):
    """vllm/ applied by an older apply.sh (no record), then a pull adds a patch:
    the branch's commits are all in the project's git history, so nothing is
    un-exported and the new series is applied."""
    repo, patches, env = upstream
    project = patches.parent
    run("export.sh", env)
    for cmd in (["init", "-q"], ["add", "patches"], ["commit", "-q", "-m", "series"]):
        git(project, *cmd)
    (repo / ".git" / "dsl-series-synced").unlink()
    # "The pull": a third patch, exported elsewhere and committed.
    commit(repo, "[Core] from upstream", {"g.txt": "g\n"})
    run("export.sh", env)
    git(project, "add", "patches")
    git(project, "commit", "-q", "-m", "pull")
    git(repo, "reset", "-q", "--hard", "HEAD^")
    (repo / ".git" / "dsl-series-synced").unlink()
    proc = run("apply.sh", env)
    assert "holds nothing un-exported" in proc.stderr
    assert (repo / "g.txt").read_text() == "g\n"
    # A commit of the branch that was never exported is still refused.
    commit(repo, "[Core] mine", {"h.txt": "h\n"})
    (repo / ".git" / "dsl-series-synced").unlink()
    proc = run("apply.sh", env, ok=False)
    assert proc.returncode == 1 and "[Core] mine" in proc.stderr
    assert "[Core] first change" not in proc.stderr


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
    # Issue #20: the failing hunk is shown, and none of git's hints to continue,
    # skip or abort an am that apply.sh already aborted.
    assert "the hunk that does not apply (a.txt, line" in proc.stderr
    assert "    -line 2\n    +LINE 2\n" in proc.stderr
    for stale in ("am --continue", "--skip", "am --abort", "hint:"):
        assert stale not in proc.stderr, proc.stderr
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / ".git" / "rebase-apply").exists()


def test_rebase_refuses_an_unpinned_release_before_downloading(upstream, tmp_path):
    """Issue #20: a release the lock does not pin is not downloaded unverified."""
    _, _, env = upstream
    cache = tmp_path / "cache"
    env = dict(env, DSL_CACHE=str(cache), PIP_NO_INDEX="1")
    proc = run("rebase.sh", env, "--onto", "9.9.8", "--report", str(tmp_path / "r.md"),
               ok=False)
    assert proc.returncode == 1
    assert "vllm 9.9.8 sdist is not pinned in vllm.lock.toml" in proc.stderr
    assert "--allow-unpinned" in proc.stderr
    assert not (cache / "dl").exists(), "nothing may be downloaded"


def test_rebase_verifies_the_pinned_sdist_of_a_release(upstream, tmp_path):
    """0.33.0 is pinned in the lock ([releases]): a cached sdist that does not match
    its sha256 is refused, not imported."""
    _, _, env = upstream
    cache = tmp_path / "cache"
    (cache / "dl").mkdir(parents=True)
    (cache / "dl" / "vllm-0.33.0.tar.gz").write_bytes(b"not the release")
    env = dict(env, DSL_CACHE=str(cache), PIP_NO_INDEX="1")
    proc = run("rebase.sh", env, "--onto", "0.33.0", "--report", str(tmp_path / "r.md"),
               ok=False)
    assert proc.returncode == 1
    assert "sha256 mismatch" in proc.stderr and "vllm-0.33.0.tar.gz" in proc.stderr


def make_release(repo: Path, version: str = "9.9.9") -> None:
    """Tag a "new release" on top of the base: it conflicts with patch 1 (a.txt
    line 2) and shifts the context of b.txt."""
    git(repo, "checkout", "-q", "--detach", BASE_TAG)
    a = (repo / "a.txt").read_text().replace("line 2\n", "upstream 2\n")
    b = "header\n" + (repo / "b.txt").read_text()
    commit(repo, f"v{version}", {"a.txt": a, "b.txt": b}, signoff=False)
    git(repo, "tag", f"upstream/v{version}")
    git(repo, "checkout", "-q", "dsl")


def rebase_env(env: dict, tmp: Path) -> dict:
    return dict(
        env,
        RESOLUTIONS_ROOT=str(tmp / "resolutions"),
        VARIANTS_ROOT=str(tmp / "variants"),
    )


def resolve_by_hand(repo: Path, patches: Path) -> str:
    """The developer's resolved series on the new release, as a branch: patch 1's
    conflict resolved, plus a semantic fix to b.txt (which merges cleanly) in
    patch 2. Returns the branch name."""
    git(repo, "checkout", "-q", "-b", "resolved", "upstream/v9.9.9")
    for p in (patches / "series").read_text().split():
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "am",
                "-q",
                "--3way",
                "--keep-non-patch",
                str(patches / p),
            ],
            capture_output=True,
            text=True,
            env=ENV,
        )
        if proc.returncode != 0:
            a = (repo / "a.txt").read_text()
            start, end = a.index("<<<<<<<"), a.index(">>>>>>>")
            end = a.index("\n", end) + 1
            (repo / "a.txt").write_text(a[:start] + "LINE 2 (upstream 2)\n" + a[end:])
            git(repo, "add", "a.txt")
            git(repo, "am", "--continue")
        if p.startswith("0002-"):
            b = (repo / "b.txt").read_text().replace("line 5\n", "line five\n")
            (repo / "b.txt").write_text(b)
            git(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    git(repo, "checkout", "-q", "dsl")
    return "resolved"


def variant_check(env: dict, variant: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "bash",
            "-c",
            f'source "{SCRIPTS}/lib/common.sh"; variant_check "$1"',
            "_",
            str(variant),
        ],
        env=env,
        capture_output=True,
        text=True,
    )


def prepare_release(upstream) -> tuple[Path, Path, dict, Path, str]:
    """Export the series, cut release 9.9.9 (patch 1 conflicts with it) and
    resolve it by hand. Returns (repo, patches, env, report, resolved)."""
    repo, patches, env = upstream
    env = rebase_env(env, patches.parent)
    report = patches.parent / "report.md"
    run("export.sh", env)
    make_release(repo)
    resolved = resolve_by_hand(repo, patches)
    return repo, patches, env, report, resolved


def record(env: dict, resolved: str, report: Path, ok: bool = True):
    """``rebase.sh --onto 9.9.9 --record <resolved>``."""
    return run(
        "rebase.sh",
        env,
        "--onto",
        "9.9.9",
        "--record",
        resolved,
        "--report",
        str(report),
        ok=ok,
    )


def record_release(upstream) -> tuple[Path, Path, dict, Path, str]:
    """``prepare_release`` and record the resolution with ``rebase.sh
    --record``. Returns (repo, patches, env, report, resolved)."""
    repo, patches, env, report, resolved = prepare_release(upstream)
    record(env, resolved, report)
    return repo, patches, env, report, resolved


def test_rebase_reports_clean_merged_and_conflicted(upstream):
    repo, patches, env = upstream
    env = rebase_env(env, patches.parent)
    report = patches.parent / "report.md"
    commit(repo, "[Core] touch b", {"b.txt": (repo / "b.txt").read_text() + "tail\n"})
    run("export.sh", env)
    make_release(repo)
    head = git(repo, "rev-parse", "HEAD")
    proc = run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report), ok=False)
    assert proc.returncode == 3, proc.stderr
    text = report.read_text()
    assert (
        "| `0001-Core-first-change.patch` | **NEW CONFLICT** (skipped) | `a.txt` |"
        in text
    )
    assert "| `0002-Spec-Decode-second-change.patch` | clean |" in text
    assert "| `0003-Core-touch-b.patch` | clean |" in text
    assert "2 clean, 0 3-way merged, 0 resolved from record, 1 NEW CONFLICT" in text
    # No record for 9.9.9: no variant is written.
    assert not (patches.parent / "variants").exists()
    # vllm/ itself is untouched (the rebase runs in a scratch clone); the result
    # branch is fetched into it.
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "dsl"
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s", "upstream/v9.9.9..dsl-on-9.9.9").split("\n")[
        :2
    ] == ["[Core] touch b", "[Spec Decode] second change"]
    # --allow-conflicts turns the exit status into success, report unchanged.
    run(
        "rebase.sh",
        env,
        "--onto",
        "9.9.9",
        "--report",
        str(report),
        "--allow-conflicts",
    )
    assert "1 NEW CONFLICT" in report.read_text()


def test_rebase_replays_recorded_resolutions_and_writes_the_variant(upstream):
    repo, patches, env, report, resolved = record_release(upstream)
    record = patches.parent / "resolutions" / "9.9.9"
    assert list((record / "rr-cache").glob("*/postimage"))
    assert (record / "fixups" / "0002-Spec-Decode-second-change.patch").is_file()
    # A plain run (what the nightly does) reproduces the resolved series exactly.
    run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report))
    text = report.read_text()
    assert "| `0001-Core-first-change.patch` | resolved from record | `a.txt` |" in text
    assert "fixup: `b.txt`" in text
    assert "1 resolved from record, 0 NEW CONFLICT; 1 with a recorded fixup" in text
    assert git(repo, "rev-parse", "dsl-on-9.9.9^{tree}") == git(
        repo, "rev-parse", f"{resolved}^{{tree}}"
    )
    variant = patches.parent / "variants" / "9.9.9"
    assert (variant / "series").read_text().split() == (
        patches / "series"
    ).read_text().split()
    assert (
        "LINE 2 (upstream 2)" in (variant / "0001-Core-first-change.patch").read_text()
    )
    assert variant_check(env, variant).returncode == 0


def test_variant_check_fails_until_regenerated_after_the_series_grows(upstream):
    repo, patches, env, report, resolved = record_release(upstream)
    variant = patches.parent / "variants" / "9.9.9"
    # Another developer appends a patch and exports.
    commit(repo, "[Spec Decode] third change", {"d.txt": "x\n"})
    run("export.sh", env)
    proc = variant_check(env, variant)
    assert proc.returncode == 1
    assert "it has 2 patches, patches/series has 3" in proc.stdout
    assert "scripts/rebase.sh --onto 9.9.9" in proc.stdout
    # The record still resolves patch 1: regenerating needs no new resolution.
    report = patches.parent / "report.md"
    run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report))
    assert "| `0003-Spec-Decode-third-change.patch` | clean |" in report.read_text()
    assert "| `0001-Core-first-change.patch` | resolved from record |" in (
        report.read_text()
    )
    assert variant_check(env, variant).returncode == 0
    # A changed patch (same subjects, same count) makes the variant stale too.
    (patches / "0003-Spec-Decode-third-change.patch").write_text(
        (patches / "0003-Spec-Decode-third-change.patch").read_text() + "\n"
    )
    proc = variant_check(env, variant)
    assert proc.returncode == 1 and "0003-Spec-Decode-third-change.patch" in proc.stdout


def test_rebase_new_conflict_in_an_appended_patch_fails_and_keeps_the_variant(upstream):
    repo, patches, env, report, resolved = record_release(upstream)
    variant = patches.parent / "variants" / "9.9.9"
    before = {p.name: p.read_bytes() for p in variant.iterdir()}
    # An appended patch that conflicts with the release's b.txt header.
    b = (repo / "b.txt").read_text().replace("line 1\n", "first line\n")
    commit(repo, "[Core] rename line 1", {"b.txt": b})
    run("export.sh", env)
    report = patches.parent / "report.md"
    proc = run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report), ok=False)
    assert proc.returncode == 3
    assert "NEW CONFLICT" in proc.stderr
    text = report.read_text()
    assert "| `0001-Core-first-change.patch` | resolved from record |" in text
    assert (
        "| `0003-Core-rename-line-1.patch` | **NEW CONFLICT** (skipped) | `b.txt` |"
        in text
    )
    assert "variant: not written: new conflicts" in text
    assert {p.name: p.read_bytes() for p in variant.iterdir()} == before
    assert variant_check(env, variant).returncode == 1
    # --stop leaves the scratch clone at that conflict for resolving.
    keep = patches.parent / "resolve"
    proc = run(
        "rebase.sh",
        env,
        "--onto",
        "9.9.9",
        "--keep",
        str(keep),
        "--stop",
        "--report",
        str(report),
        ok=False,
    )
    assert proc.returncode == 3
    assert (keep / ".git" / "rebase-apply").is_dir()
    b = (keep / "b.txt").read_text()
    assert "<<<<<<<" in b
    # Resolve there, record from it (the earlier patches keep their record), and
    # the variant is regenerated.
    start, end = b.index("<<<<<<<"), b.index("\n", b.index(">>>>>>>")) + 1
    (keep / "b.txt").write_text(b[:start] + "header\nfirst line\n" + b[end:])
    git(keep, "add", "b.txt")
    git(keep, "am", "--continue")
    run(
        "rebase.sh",
        env,
        "--onto",
        "9.9.9",
        "--record",
        str(keep),
        "--report",
        str(report),
    )
    text = report.read_text()
    assert (
        "| `0003-Core-rename-line-1.patch` | resolved from record | `b.txt` |" in text
    )
    assert "| `0001-Core-first-change.patch` | resolved from record |" in text
    assert "fixup: `b.txt`" in text  # patch 2's fixup was kept
    assert variant_check(env, variant).returncode == 0


def test_rebase_changed_conflict_hunk_is_a_new_conflict(upstream):
    repo, patches, env, report, resolved = record_release(upstream)
    # Patch 1 is reworded where it conflicts: the recorded resolution no longer fits.
    git(repo, "checkout", "-q", "dsl~1")
    text = (repo / "a.txt").read_text().replace("LINE 2\n", "Line two\n")
    (repo / "a.txt").write_text(text)
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    git(repo, "cherry-pick", "dsl")
    git(repo, "branch", "-f", "dsl", "HEAD")
    git(repo, "checkout", "-q", "dsl")
    run("export.sh", env)
    report = patches.parent / "report.md"
    proc = run("rebase.sh", env, "--onto", "9.9.9", "--report", str(report), ok=False)
    assert proc.returncode == 3
    assert (
        "| `0001-Core-first-change.patch` | **NEW CONFLICT** (skipped) | `a.txt` |"
        in (report.read_text())
    )


def test_rebase_record_refuses_a_mismatched_series(upstream):
    repo, _, env, report, resolved = prepare_release(upstream)
    git(repo, "checkout", "-q", resolved)
    git(repo, "commit", "-q", "--amend", "-m", "[Spec Decode] renamed")
    git(repo, "checkout", "-q", "dsl")
    proc = record(env, resolved, report, ok=False)
    assert proc.returncode == 1
    assert "'[Spec Decode] renamed'" in proc.stderr


@pytest.mark.parametrize(
    "variant",
    sorted(p for p in (ROOT / "patches-variants").glob("*") if p.is_dir()),
    ids=lambda p: p.name,
)
def test_committed_variant_is_current(variant: Path):
    """Fails when patches/ changed (a patch appended, renamed or edited) and the
    variant was not regenerated with scripts/rebase.sh --onto <version>."""
    env = {k: v for k, v in ENV.items() if k != "PATCH_DIR"}
    proc = variant_check(env, variant)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_recorded_fixups_name_patches_of_the_series():
    series = set((ROOT / "patches" / "series").read_text().split())
    for fixup in (ROOT / "rebase-resolutions").glob("*/fixups/*"):
        assert fixup.name in series, f"{fixup} names no patch of patches/series"
    for entry in (ROOT / "rebase-resolutions").glob("*/rr-cache/*"):
        assert (entry / "preimage").is_file() and (entry / "postimage").is_file(), entry


def _tiny_vllm_repo(tmp_path: Path) -> Path:
    """A git repo with a tiny stand-in for vLLM's tree at BASE_TAG: what
    check-series imports and tests."""
    repo = tmp_path / "vllm"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "dsl")
    git(repo, "config", "user.name", "Test Dev")
    git(repo, "config", "user.email", "dev@example.com")
    commit(repo, "base", {
        "vllm/__init__.py": "",
        "vllm/platforms/__init__.py":
            "class _P:\n    def is_cpu(self):\n        return False\n\n\ncurrent_platform = _P()\n",
    }, signoff=False)
    git(repo, "tag", BASE_TAG)
    return repo


def _tiny_series_env(tmp_path: Path, repo: Path) -> dict:
    """The scripts' environment for the series of ``repo``, with every cache and
    output under ``tmp_path`` and this interpreter's venv."""
    return dict(ENV, VLLM_DIR=str(repo), PATCH_DIR=str(tmp_path / "patches"),
                VARIANTS_ROOT=str(tmp_path / "variants"), DSL_OFFLINE_GIT="1",
                DSL_CACHE=str(tmp_path / "cache"),
                VENV_DIR=str(Path(sys.executable).parent.parent))


def test_check_series_catches_a_prefix_that_breaks_its_own_tests_in_lanes(tmp_path):
    """Issue #20: the per-prefix stage runs its prefixes side by side (--jobs) and
    still fails the one prefix whose own tests fail (fixed by a later patch, so only
    the per-prefix run can see it); results come in series order."""
    repo = _tiny_vllm_repo(tmp_path)
    test_x = "from vllm.x import f\n\n\ndef test_f():\n    assert f() == 1\n"
    commit(repo, "[Core] add x", {"vllm/x.py": "def f():\n    return 1\n",
                                  "tests/test_x.py": test_x})
    commit(repo, "[Core] break x", {"vllm/x.py": "def f():\n    return 2\n",
                                    "tests/test_x.py": test_x + "\n\ndef test_g():\n    pass\n"})
    commit(repo, "[Core] fix x", {"vllm/x.py": "def f():\n    return 1\n",
                                  "tests/test_y.py": "def test_y():\n    pass\n"})
    commit(repo, "[Doc] x", {"docs/x.md": "x\n"})
    env = _tiny_series_env(tmp_path, repo)
    run("export.sh", env)
    proc = run("check-series.sh", env, "--jobs", "2", ok=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if " prefix " in ln]
    assert [ln.split(" prefix ")[1].split("/")[0] for ln in lines] == sorted(
        (ln.split(" prefix ")[1].split("/")[0] for ln in lines), key=int)
    assert "PASS  prefix 1/4 tests: 1 passed, 0 failed" in proc.stdout
    assert "FAIL  prefix 2/4: its tests fail (0002-Core-break-x.patch)" in proc.stdout
    assert "PASS  prefix 3/4 tests: 1 passed, 0 failed" in proc.stdout
    assert "PASS  prefix 4/4 changes documentation only" in proc.stdout
    assert "series check: " in proc.stdout and ", 1 failed" in proc.stdout


def test_check_series_reuses_a_prefix_result_only_for_the_same_tree(tmp_path):
    """A prefix that passed with the same tree, venv and harness is not run again;
    changing a patch re-runs that prefix and every later one; --no-cache re-runs
    all. A failing prefix is never stored."""
    repo = _tiny_vllm_repo(tmp_path)
    commit(repo, "[Core] add x", {"vllm/x.py": "def f():\n    return 1\n",
                                  "tests/test_x.py": "from vllm.x import f\n\n\ndef test_f():\n"
                                                     "    assert f() == 1\n"})
    commit(repo, "[Core] add y", {"vllm/y.py": "Y = 1\n",
                                  "tests/test_y.py": "def test_y():\n    pass\n"})
    env = _tiny_series_env(tmp_path, repo)
    run("export.sh", env)

    def cached(proc):
        return [ln.split(" prefix ")[1].split("/")[0] for ln in proc.stdout.splitlines()
                if "tests:" in ln and "[cached" in ln]

    first = run("check-series.sh", env, "--jobs", "1")
    assert cached(first) == []
    second = run("check-series.sh", env, "--jobs", "1")
    assert cached(second) == ["1", "2"], second.stdout
    assert "PASS  prefix 2/2 tests: 1 passed, 0 failed" in second.stdout
    # Change the second patch so that its own test fails: only prefix 2 re-runs,
    # and its failure is not stored.
    git(repo, "checkout", "-q", "HEAD~1")
    commit(repo, "[Core] add y", {"vllm/y.py": "Y = 1\n",
                                  "tests/test_y.py": "def test_y():\n    assert False\n"})
    git(repo, "branch", "-f", "dsl", "HEAD")
    git(repo, "checkout", "-q", "dsl")
    run("export.sh", env)
    third = run("check-series.sh", env, "--jobs", "1", ok=False)
    assert third.returncode == 1
    assert cached(third) == ["1"], third.stdout
    assert "FAIL  prefix 2/2: its tests fail" in third.stdout
    fourth = run("check-series.sh", env, "--jobs", "1", "--no-cache", ok=False)
    assert cached(fourth) == [] and "FAIL  prefix 2/2: its tests fail" in fourth.stdout


def test_tree_python_writes_bytecode_whatever_the_environment_says(tmp_path):
    """The processes that import a vLLM tree (prefix checks, upstream tests) keep
    their bytecode caches: otherwise each compiles vLLM's sources again."""
    (tmp_path / "mod.py").write_text("X = 1\n")
    env = dict(ENV, PYTHONDONTWRITEBYTECODE="1", VENV_DIR=str(Path(sys.executable).parent.parent))
    subprocess.run(["bash", "-c", f'source "{SCRIPTS}/lib/common.sh" && cd "{tmp_path}" '
                    '&& tree_python -c "import mod"'], env=env, check=True)
    assert list((tmp_path / "__pycache__").glob("mod.*.pyc"))


def test_kill_tree_ends_a_background_subshell_and_what_it_started(tmp_path):
    """fastcheck's e2e tests run in a background subshell: stopping fastcheck must
    stop the pytest (and server) below it, not only the subshell."""
    script = (f'source "{SCRIPTS}/lib/common.sh"\n'
              '( bash -c "sleep 300 & echo \\$! >' + str(tmp_path / "pid") + '; wait" ) &\n'
              'sub=$!\n'
              f'while [[ ! -s "{tmp_path / "pid"}" ]]; do sleep 0.1; done\n'
              'kill_tree "$sub"\n'
              'wait "$sub" || true\n')
    subprocess.run(["bash", "-c", script], env=ENV, check=True, timeout=60)
    pid = int((tmp_path / "pid").read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError("the grandchild (sleep) is still running")


def _stack_module():
    sys.path.insert(0, str(SCRIPTS / "lib"))
    import stack

    return stack


def test_committed_pr_stack_groups_the_series():
    """Issue #19: patches/stack.toml groups patches/series into the PRs a
    maintainer merges in order; it must name every patch once, in order.
    Issue #32: the review's seven PRs, of which the first three (the fixes,
    the draft model's CUDA graphs, the device-side WHILE loop) carry no DSL
    code, so each can be merged without the DSL PRs. Measured changes on top
    of them are follow-up PRs, after all seven."""
    stack = _stack_module()
    patches = ROOT / "patches"
    prs = stack.load(patches)
    assert stack.validate(stack.series(patches), prs) == []
    reviewed = [pr for pr in prs if not pr.get("follow_up")]
    assert len(reviewed) == 7, "issue #32 asks for the review's seven PRs"
    assert prs[:7] == reviewed
    for pr in prs[:3]:
        for name in pr["patches"]:
            touched = re.findall(r"^diff --git a/(\S+)", (patches / name).read_text(), re.M)
            dsl = [f for f in touched if "spec_decode/dynamic/" in f or "confidence" in f]
            assert dsl == [], f"{name} ({pr['title']}) touches DSL files: {dsl}"
    table = stack.table(prs)
    assert table.count("\n") == len(prs) + 1


@pytest.mark.parametrize(
    ("prs", "error"),
    [
        ([], "no [[pr]] entries"),
        ([{"title": "a", "patches": ["p1", "p2"]}, {"title": "b", "patches": ["p3"]}],
         "p4 (series) is in no PR"),
        ([{"title": "a", "patches": ["p1", "p3"]}, {"title": "b", "patches": ["p2", "p4"]}],
         "position 2 is p3 in stack.toml, p2 in series"),
        ([{"title": "a", "patches": ["p1", "p2"]}, {"title": "b", "patches": ["p2", "p3", "p4"]}],
         "p2 is listed more than once"),
        ([{"title": "a", "patches": ["p1", "p2", "p3", "p4", "p5"]}], "p5 is not in series"),
        ([{"title": "", "patches": ["p1", "p2", "p3", "p4"]}], "PR 1 has no title"),
        ([{"title": "a", "patches": []}, {"title": "b", "patches": ["p1", "p2", "p3", "p4"]}],
         "PR 1 (a) lists no patches"),
        ([{"title": "a", "patches": ["p1", "p2"], "backports": {"p3": "0.33.0"}},
          {"title": "b", "patches": ["p3", "p4"]}],
         "PR 1 marks p3 as a backport but does not list it"),
        ([{"title": "a", "patches": ["p1", "p2"], "follow_up": True},
          {"title": "b", "patches": ["p3", "p4"]}],
         "PR 2 (b) comes after follow-up PR 1: follow-ups come last"),
        ([{"title": "a", "patches": ["p1", "p2"]},
          {"title": "b", "patches": ["p3", "p4"], "follow_up": "yes"}],
         "PR 2 (b): follow_up must be true or false"),
    ],
)
def test_pr_stack_validation_names_what_is_wrong(prs, error):
    stack = _stack_module()
    names = ["p1", "p2", "p3", "p4"]
    good = [{"title": "a", "patches": ["p1", "p2"], "backports": {"p1": "0.33.0"}},
            {"title": "b", "patches": ["p3", "p4"]}]
    assert stack.validate(names, good) == []
    follow = [good[0], dict(good[1], follow_up=True)]
    assert stack.validate(names, follow) == []
    assert "| PR 2 | b (follow-up) |" in stack.table(follow)
    errors = stack.validate(names, prs)
    assert any(error in e for e in errors), errors


def test_check_series_fails_on_a_stale_pr_stack(tmp_path):
    """A patch appended without adding it to patches/stack.toml fails check-series;
    comments in series are skipped as by the shell tooling."""
    repo = _tiny_vllm_repo(tmp_path)
    commit(repo, "[Doc] x", {"docs/x.md": "x\n"})
    env = _tiny_series_env(tmp_path, repo)
    run("export.sh", env)
    patches = tmp_path / "patches"
    (patches / "stack.toml").write_text(
        '[[pr]]\ntitle = "docs"\npatches = ["0001-Doc-x.patch"]\n'
    )
    ok = run("check-series.sh", env, "--jobs", "1")
    assert "PASS  PR stack (patches/stack.toml) groups the series in order" in ok.stdout
    commit(repo, "[Doc] y", {"docs/y.md": "y\n"})
    run("export.sh", env)
    assert (patches / "stack.toml").is_file(), "export.sh must keep stack.toml"
    proc = run("check-series.sh", env, "--jobs", "1", ok=False)
    assert proc.returncode == 1
    assert "stack.toml: 0002-Doc-y.patch (series) is in no PR" in proc.stdout
    assert "FAIL  PR stack (patches/stack.toml) does not match patches/series" in proc.stdout
