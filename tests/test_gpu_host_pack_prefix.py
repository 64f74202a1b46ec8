"""scripts/gpu-host/pack-prefix.sh on CPU, with wip-root.sh after it: the
tarball turns a staged package (the series branch) into the tree of a prefix of
a series, files the prefix lacks included. A throwaway git repository stands in
for vllm/ (VLLM_DIR), a scratch staged root for the GPU host's; git, tar and
both scripts are real."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / "scripts" / "gpu-host" / "pack-prefix.sh"
WIP_ROOT = ROOT / "scripts" / "gpu-host" / "wip-root.sh"
BASE_TAG = "upstream/v0.32.0"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "Test Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
       "GIT_COMMITTER_NAME": "Test Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True,
                          capture_output=True, text=True, env=ENV).stdout


def commit(repo: Path, msg: str, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-s", "-m", msg)


@pytest.fixture
def series(tmp_path: Path):
    """vllm/ with the base tag and a three-patch branch 'dsl', and the series."""
    repo = tmp_path / "vllm"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "dsl")
    commit(repo, "base", {"vllm/__init__.py": "", "vllm/rule.py": "WIDTH = 'base'\n",
                          "vllm/old.py": "OLD = 1\n", "README": "x\n"})
    git(repo, "tag", BASE_TAG)
    commit(repo, "[Core] one", {"vllm/graphs.py": "GRAPHS = True\n"})
    commit(repo, "[Spec Decode] two", {"vllm/rule.py": "WIDTH = 'dsl'\n",
                                       "vllm/dsl.py": "DSL = True\n", "README": "y\n"})
    commit(repo, "[Spec Decode] three", {"vllm/old.py": None})
    patches = tmp_path / "patches"
    git(repo, "format-patch", "-q", "-o", str(patches), f"{BASE_TAG}..dsl")
    (patches / "series").write_text(
        "".join(f"{p.name}\n" for p in sorted(patches.glob("*.patch"))))
    env = dict(ENV, VLLM_DIR=str(repo), WIP_DIR=str(tmp_path / "wip"))
    return repo, patches, env


def pack(env: dict, *args: str):
    return subprocess.run(["bash", str(PACK), *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_prefix_laid_over_the_staged_series_is_that_prefix(series, tmp_path):
    repo, patches, env = series
    r = pack(env, str(patches), "1", "pr1")
    assert r.returncode == 0, r.stderr
    tgz = tmp_path / "wip" / "pr1.tgz"
    assert r.stdout.splitlines()[0] == str(tgz)
    assert "2 file(s) added or changed, 1 removed" in r.stdout
    with tarfile.open(tgz) as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile())
        removed = tar.extractfile("REMOVED").read().decode().split()
    # rule.py as before patch two, old.py which patch three deletes; README is
    # outside vllm/: not part of the package, not in the tarball.
    assert names == ["REMOVED", "vllm/old.py", "vllm/rule.py"]
    assert removed == ["vllm/dsl.py"]
    # On the host: the staged package is the series branch's vllm/.
    staged = tmp_path / "gpuhost"
    (staged / "vsrc").mkdir(parents=True)
    git(repo, "archive", "--format=tar", "-o", str(tmp_path / "s.tar"), "dsl", "vllm")
    subprocess.run(["tar", "xf", str(tmp_path / "s.tar"), "-C", str(staged / "vsrc")],
                   check=True)
    (staged / "env.sh").write_text(f"export PYTHONPATH={staged}/vsrc\n")
    w = subprocess.run(["bash", str(WIP_ROOT), "--root", str(tmp_path / "w"), str(tgz)],
                       env={**{k: v for k, v in ENV.items() if k != "PYTHONPATH"},
                            "GPU_HOST_ROOT": str(staged)},
                       capture_output=True, text=True, timeout=60)
    assert w.returncode == 0, w.stderr
    got = {str(p.relative_to(tmp_path / "w" / "vsrc")): p.read_text()
           for p in (tmp_path / "w" / "vsrc").rglob("*.py")}
    git(repo, "checkout", "-q", "--detach", "dsl~2")
    want = {str(p.relative_to(repo)): p.read_text() for p in (repo / "vllm").rglob("*.py")}
    assert got == want
    # 'all' is every patch: the staged tree itself, so nothing to lay over it.
    r = pack(env, str(patches), "all", "same")
    assert r.returncode == 1 and "nothing to lay over it" in r.stderr


def test_bad_input_is_one_clear_error(series, tmp_path):
    _, patches, env = series
    for n in ("0", "4", "two"):
        r = pack(env, str(patches), n, "x")
        assert r.returncode == 2 and "N must be 1..3" in r.stderr, (n, r.stderr)
    r = pack(env, str(tmp_path), "1", "x")
    assert r.returncode == 2 and "no " in r.stderr and "series" in r.stderr
    r = pack(env, str(patches), "1", "bad name")
    assert r.returncode == 2 and "NAME 'bad name'" in r.stderr
    r = pack(env, str(patches), "1")
    assert r.returncode == 2 and "SERIES_DIR, N and NAME are needed" in r.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "0001-x.patch").write_text("not a patch\n")
    (broken / "series").write_text("0001-x.patch\n")
    r = pack(env, str(broken), "1", "x")
    assert r.returncode == 1 and "0001-x.patch does not apply" in r.stderr
    assert not (tmp_path / "wip" / "x.tgz").exists()
