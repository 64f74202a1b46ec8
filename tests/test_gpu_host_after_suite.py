"""scripts/gpu-host/after-suite.sh on CPU: the GPU suite's kernel files and the
in-tree CUDA tests, each run by its own pytest with its status written, and
the one list of kernel files that suite.sh's engine groups leave out. The
script under test and pytest are the real ones; the kernel files and in-tree
tests are stand-ins in a scratch checkout (the real ones need a GPU)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "after-suite.sh"


def _checkout(tmp: Path, *, kernels_pass: bool, intree_pass: bool) -> Path:
    """A scratch checkout with the script, its helpers, the four kernel files
    (stand-ins) and an in-tree bundle with one test."""
    co = tmp / "co"
    (co / "scripts" / "gpu-host").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    shutil.copy(SCRIPT, co / "scripts" / "gpu-host")
    ignores = _run(ROOT, "--ignores").stdout.split()
    for flag in ignores:
        f = co / flag.removeprefix("--ignore=")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"def test_k():\n    assert {kernels_pass}\n")
    intree = co / ".gpu-bundles" / "intree" / "tests"
    intree.mkdir(parents=True)
    (intree / "test_loop.py").write_text(f"def test_i():\n    assert {intree_pass}\n")
    return co


def _run(cwd: Path, *args: str | Path):
    return subprocess.run(["bash", str(cwd / "scripts/gpu-host/after-suite.sh"),
                           *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
                               "HOME": str(cwd)})


def test_ignores_name_the_suites_kernel_files_which_exist():
    r = _run(ROOT, "--ignores")
    assert r.returncode == 0, r.stderr
    files = [f.removeprefix("--ignore=") for f in r.stdout.split()]
    assert len(files) == 4 and all(f.startswith("tests/gpu/test_") for f in files)
    assert all((ROOT / f).is_file() for f in files), files


def test_the_beside_scripts_take_their_default_from_the_same_list():
    """beside-proxies.sh and beside-small.sh start the suite through
    common.sh's start_chain_and_suite and start_suite_beside, which asks
    after-suite.sh for the list."""
    lib = (ROOT / "scripts/lib/common.sh").read_text()
    assert 'after-suite.sh" --ignores' in lib and "--ignore=tests/gpu" not in lib
    for name in ("beside-proxies.sh", "beside-small.sh"):
        text = (ROOT / "scripts/gpu-host" / name).read_text()
        assert "start_chain_and_suite" in text and "--ignore=tests/gpu" not in text


@pytest.mark.parametrize("kernels_pass,intree_pass", [
    (True, True), (True, False), (False, True), (False, False)])
def test_each_half_runs_and_tells_its_own_status(tmp_path, kernels_pass, intree_pass):
    """A failing half is told in its own .rc and the exit status, and never
    stops the other half from running."""
    co = _checkout(tmp_path, kernels_pass=kernels_pass, intree_pass=intree_pass)
    r = _run(co, tmp_path / "logs", 60)
    assert r.returncode == (0 if kernels_pass and intree_pass else 1), r.stdout + r.stderr
    logs = tmp_path / "logs"
    assert (logs / "kernels.rc").read_text().strip() == ("0" if kernels_pass else "1")
    assert (logs / "intree.rc").read_text().strip() == ("0" if intree_pass else "1")
    assert ("4 passed" if kernels_pass else "4 failed") in (logs / "kernels.log").read_text()
    assert ("1 passed" if intree_pass else "1 failed") in (logs / "intree.log").read_text()


def test_without_the_intree_bundle_it_says_what_to_carry(tmp_path):
    co = _checkout(tmp_path, kernels_pass=True, intree_pass=True)
    shutil.rmtree(co / ".gpu-bundles")
    r = _run(co, tmp_path / "logs")
    assert r.returncode == 2
    assert "pack-intree.sh" in r.stderr and "carry .gpu-bundles/intree" in r.stderr


def test_a_bad_timeout_is_named(tmp_path):
    co = _checkout(tmp_path, kernels_pass=True, intree_pass=True)
    r = _run(co, tmp_path / "logs", "5m")
    assert r.returncode == 2 and "TIMEOUT_S '5m'" in r.stderr


def test_help_and_usage():
    r = _run(ROOT, "--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: bash scripts/gpu-host/after-suite.sh")
    assert _run(ROOT).returncode == 2
