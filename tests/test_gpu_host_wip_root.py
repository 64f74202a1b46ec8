"""scripts/gpu-host/wip-root.sh on CPU: a wip's files laid over a copy of a
staged vllm package, with an env.sh that imports the copy, the staged package
left as it was. The staged root is a scratch one (an env.sh and a two-file
``vllm`` package); the script under test, ``tar`` and ``python3`` are real."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu-host" / "wip-root.sh"


def _staged(tmp_path: Path) -> Path:
    root = tmp_path / "gpuhost"
    pkg = root / "vsrc" / "vllm"
    pkg.mkdir(parents=True)
    (root / "site").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rule.py").write_text("WIDTH = 'series'\n")
    (root / "env.sh").write_text(
        f"export PYTHONPATH={root}/vsrc:{root}/site\nexport STAGED_ENV=yes\n")
    return root


def _tgz(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _run(tmp_path: Path, root: Path, *args: str):
    env = {**os.environ, "GPU_HOST_ROOT": str(root)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def _in_env(env_sh: Path, code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(["bash", "-c", f". {env_sh} && cd / && python3 -c \"{code}\""],
                          env=env, capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


def test_the_wip_is_laid_over_a_copy_and_its_env_imports_it(tmp_path):
    root = _staged(tmp_path)
    tgz = _tgz(tmp_path / "wip.tgz", {"vllm/rule.py": "WIDTH = 'wip'\n",
                                      "vllm/planner.py": "PLAN = 1\n"})
    wip = tmp_path / "wip-root"
    r = _run(tmp_path, root, "--root", str(wip), str(tgz))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(wip)
    env_sh = wip / "env.sh"
    assert _in_env(env_sh, "import vllm.rule as r, vllm.planner as p; "
                           "print(r.WIDTH, p.PLAN, r.__file__)") == (
        f"wip 1 {wip}/vsrc/vllm/rule.py")
    # The staged env's other settings and paths stay; its package does not.
    assert _in_env(env_sh, "import os; print(os.environ['STAGED_ENV'], "
                           "os.environ['PYTHONPATH'])") == f"yes {wip}/vsrc:{root}/site"
    assert (root / "vsrc" / "vllm" / "rule.py").read_text() == "WIDTH = 'series'\n"
    assert not (root / "vsrc" / "vllm" / "planner.py").exists()
    # Again: the old copy is replaced, not merged into.
    _tgz(tgz, {"vllm/rule.py": "WIDTH = 'wip2'\n"})
    assert _run(tmp_path, root, "--root", str(wip), str(tgz)).returncode == 0
    assert not (wip / "vsrc" / "vllm" / "planner.py").exists()
    assert _in_env(env_sh, "import vllm.rule as r; print(r.WIDTH)") == "wip2"


def test_two_wips_on_different_files_are_laid_together(tmp_path):
    root = _staged(tmp_path)
    width = _tgz(tmp_path / "width.tgz", {"vllm/rule.py": "WIDTH = 'wip'\n"})
    once = _tgz(tmp_path / "once.tgz", {"vllm/kernels.py": "ONCE = True\n"})
    r = _run(tmp_path, root, "--root", str(tmp_path / "w"), str(width), str(once))
    assert r.returncode == 0, r.stderr
    assert _in_env(tmp_path / "w" / "env.sh", "import vllm.rule as r, vllm.kernels as k; "
                   "print(r.WIDTH, k.ONCE)") == "wip True"
    # Both changing one file: which wins would depend on the order; refused.
    clash = _tgz(tmp_path / "clash.tgz", {"vllm/rule.py": "WIDTH = 'other'\n"})
    r = _run(tmp_path, root, "--root", str(tmp_path / "w2"), str(width), str(clash))
    assert r.returncode == 2 and "both change vllm/rule.py" in r.stderr
    assert not (tmp_path / "w2").exists()


def test_bad_input_is_one_clear_error(tmp_path):
    root = _staged(tmp_path)
    w = str(tmp_path / "w")
    r = _run(tmp_path, root, "--root", w, str(tmp_path / "none.tgz"))
    assert r.returncode == 2 and "carry the wip's tarball" in r.stderr
    stray = _tgz(tmp_path / "stray.tgz", {"vllm/rule.py": "", "tests/x.py": ""})
    r = _run(tmp_path, root, "--root", w, str(stray))
    assert r.returncode == 2 and "tests/x.py" in r.stderr and not (tmp_path / "w").exists()
    good = _tgz(tmp_path / "good.tgz", {"vllm/rule.py": ""})
    r = _run(tmp_path, tmp_path / "unstaged", "--root", w, str(good))
    assert r.returncode == 1 and "stage the bundle first" in r.stderr
    r = _run(tmp_path, root, "--root", w)
    assert r.returncode == 2 and "at least one TGZ" in r.stderr
    r = _run(tmp_path, root)
    assert r.returncode == 2 and r.stdout.startswith("Usage: bash scripts/gpu-host/wip-root.sh")


def test_a_wip_removes_the_files_its_tree_lacks_from_the_copy_only(tmp_path):
    """An earlier prefix of the series lacks the later patches' new modules:
    its tarball lists them in REMOVED, and the copy loses them."""
    root = _staged(tmp_path)
    (root / "vsrc" / "vllm" / "later.py").write_text("LATER = True\n")
    tgz = _tgz(tmp_path / "prefix.tgz", {"vllm/rule.py": "WIDTH = 'prefix'\n",
                                         "REMOVED": "vllm/later.py\n\n"})
    wip = tmp_path / "w"
    r = _run(tmp_path, root, "--root", str(wip), str(tgz))
    assert r.returncode == 0, r.stderr
    assert not (wip / "vsrc" / "vllm" / "later.py").exists()
    assert not (wip / "vsrc" / "REMOVED").exists()
    assert (root / "vsrc" / "vllm" / "later.py").exists()
    assert _in_env(wip / "env.sh", "import importlib.util as u, vllm.rule as r; "
                   "print(r.WIDTH, u.find_spec('vllm.later'))") == "prefix None"
    # A second wip that changes a file the first removes: refused, as for two
    # wips changing one file.
    other = _tgz(tmp_path / "other.tgz", {"vllm/later.py": "LATER = 2\n"})
    r = _run(tmp_path, root, "--root", str(tmp_path / "w2"), str(tgz), str(other))
    assert r.returncode == 2 and "both change vllm/later.py" in r.stderr


def test_removed_paths_outside_the_package_are_refused(tmp_path):
    root = _staged(tmp_path)
    for bad in ("tests/x.py", "vllm/../env.sh"):
        tgz = _tgz(tmp_path / "bad.tgz", {"vllm/rule.py": "", "REMOVED": f"{bad}\n"})
        r = _run(tmp_path, root, "--root", str(tmp_path / "w"), str(tgz))
        assert r.returncode == 2, r.stderr
        assert f"REMOVED lists {bad}" in r.stderr
        assert not (tmp_path / "w").exists()
    assert (root / "env.sh").exists()
