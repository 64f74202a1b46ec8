"""scripts/gpu-host/call-size.sh on CPU: the bytes a device call would send
(the checkout's tracked files that exist and its untracked-not-ignored files,
plus each carried path) against the 64 MiB limit, counted as a tar archive
counts them (a 512-byte header per file and folder, contents padded to 512);
and scripts/lib/call_size.py fit-cap, the chunk that fits beside the tree
(scripts/pack-offline.sh --cap fit)."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path: Path) -> Path:
    """A checkout with the script: a tracked file (1,000 bytes), a tracked
    file deleted from the working tree, an untracked file (300), an ignored
    bundle folder (5,000 in two files) and an ignored nested repository."""
    proj = tmp_path / "proj"
    (proj / "scripts" / "gpu-host").mkdir(parents=True)
    (proj / "scripts" / "lib").mkdir()
    shutil.copy(ROOT / "scripts/gpu-host/call-size.sh", proj / "scripts/gpu-host/")
    shutil.copy(ROOT / "scripts/lib/common.sh", proj / "scripts/lib/")
    shutil.copy(ROOT / "scripts/lib/call_size.py", proj / "scripts/lib/")
    (proj / ".gitignore").write_text(".gpu-bundles/\nnested/\n")
    (proj / "tracked.bin").write_bytes(b"t" * 1000)
    (proj / "gone.bin").write_bytes(b"g" * 700)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=proj, check=True, env=env)
    (proj / "gone.bin").unlink()
    (proj / "untracked.txt").write_bytes(b"u" * 300)
    chunk = proj / ".gpu-bundles" / "b1"
    (chunk / "parts").mkdir(parents=True)
    (chunk / "MANIFEST.json").write_bytes(b"m" * 1000)
    (chunk / "parts" / "p0").write_bytes(b"p" * 4000)
    (proj / "nested").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=proj / "nested", check=True)
    (proj / "nested" / "big.bin").write_bytes(b"n" * 9000)
    return proj


def _run(proj: Path, *args: str, limit: int | None = None):
    env = dict(os.environ)
    if limit is not None:
        env["CALL_LIMIT_BYTES"] = str(limit)
    return subprocess.run(["bash", str(proj / "scripts/gpu-host/call-size.sh"), *args],
                          cwd=proj, env=env, capture_output=True, text=True)


def _sent(size: int) -> int:
    return 512 + -(-size // 512) * 512


def _tree_bytes(proj: Path) -> tuple[int, int]:
    """The tree's file bytes, and as sent: its five files, and three folders
    (scripts, scripts/gpu-host, scripts/lib)."""
    files = [f.stat().st_size for f in (proj / "scripts").rglob("*") if f.is_file()]
    files += [1000, 300, (proj / ".gitignore").stat().st_size]
    return sum(files), sum(map(_sent, files)) + 3 * 512


# .gpu-bundles/b1 as sent: 1,000 and 4,000 bytes padded to 1,024 and 4,096, two
# file headers and three folders (.gpu-bundles, b1, b1/parts).
B1_SENT = 1024 + 4096 + 2 * 512 + 3 * 512


def test_counts_what_travels_and_each_carry(tmp_path):
    proj = _project(tmp_path)
    tree, tree_sent = _tree_bytes(proj)
    r = _run(proj, ".gpu-bundles/b1")
    assert r.returncode == 0, r.stderr
    assert (f"tree (tracked and untracked-not-ignored files): {tree:,} bytes "
            f"({tree_sent:,} as sent)") in r.stdout
    assert f"carry .gpu-bundles/b1: 5,000 bytes ({B1_SENT:,} as sent)" in r.stdout
    total = tree_sent + B1_SENT
    assert (f"total {total:,} of 67,108,864 bytes as sent "
            f"({67108864 - total:,} left)") in r.stdout


def test_a_call_over_the_limit_fails_and_says_what_to_do(tmp_path):
    proj = _project(tmp_path)
    _, tree_sent = _tree_bytes(proj)
    assert _run(proj, ".gpu-bundles/b1", limit=tree_sent + B1_SENT).returncode == 0
    r = _run(proj, ".gpu-bundles/b1", limit=tree_sent + B1_SENT - 1)
    assert r.returncode == 1
    assert "1 bytes over the limit" in r.stderr
    assert "--cap" in r.stderr


def test_a_limit_that_is_no_number_is_named(tmp_path):
    proj = _project(tmp_path)
    env = {**os.environ, "CALL_LIMIT_BYTES": "64MiB"}
    r = subprocess.run(["bash", str(proj / "scripts/gpu-host/call-size.sh")],
                       cwd=proj, env=env, capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert "CALL_LIMIT_BYTES '64MiB' is not a number of bytes" in r.stderr


def test_a_missing_carry_path_is_named(tmp_path):
    proj = _project(tmp_path)
    r = _run(proj, ".gpu-bundles/b9")
    assert r.returncode == 1
    assert "carry path '.gpu-bundles/b9' does not exist" in r.stderr


def _fit_cap(proj: Path, *args: str):
    return subprocess.run(["python3", str(proj / "scripts/lib/call_size.py"),
                           "fit-cap", *args],
                          cwd=proj, capture_output=True, text=True)


def test_fit_cap_is_the_limit_less_the_tree_and_the_margin(tmp_path):
    proj = _project(tmp_path)
    _, tree_sent = _tree_bytes(proj)
    r = _fit_cap(proj, str(tree_sent + 5000 + 1234), "1234")
    assert r.returncode == 0, r.stderr
    # 5000 exactly: the hand count leaves out the ignored bundle (5,000 bytes),
    # the nested repository's files (9,000) and the deleted tracked file
    assert r.stdout == "5000\n"


def test_fit_cap_with_no_room_fails_and_says_why(tmp_path):
    proj = _project(tmp_path)
    _, tree_sent = _tree_bytes(proj)
    r = _fit_cap(proj, str(tree_sent + 100), "100")
    assert r.returncode == 1 and r.stdout == ""
    assert f"the tree alone is {tree_sent:,} bytes as sent" in r.stderr
    assert "leaves no room for a chunk" in r.stderr
    r = _fit_cap(proj, "64MiB", "0")
    assert r.returncode == 2 and "LIMIT '64MiB' is not a number of bytes" in r.stderr


def test_help():
    r = subprocess.run(["bash", str(ROOT / "scripts/gpu-host/call-size.sh"), "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "Usage: bash scripts/gpu-host/call-size.sh" in r.stdout
