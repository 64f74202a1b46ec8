"""scripts/gpu-host/suite.sh on CPU: the pytest arguments it passes. The real
script runs in a scratch checkout against a staged root whose env.sh puts a
stand-in python3 first on PATH: it records a ``-m pytest`` call's arguments
(one a line) and answers the model builds at once; anything else (the
script's own argument split) goes to the real interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PYTHON3 = f"""#!/usr/bin/env bash
if [[ "${{1:-}}" == "-m" && "${{2:-}}" == "pytest" ]]; then
  shift 2
  printf '%s\\n' "$@" > "$SEEN"
  exit 0
fi
case "${{1:-}}" in *build_models.py|*build_eagle.py) exit 0;; esac
exec {sys.executable} "$@"
"""


@pytest.fixture
def host(tmp_path):
    co = tmp_path / "checkout"
    (co / "scripts" / "gpu-host").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", co / "scripts" / "lib")
    shutil.copy(ROOT / "scripts" / "gpu-host" / "suite.sh", co / "scripts" / "gpu-host")
    (co / ".gpu-bundles" / "prompts").mkdir(parents=True)
    (co / ".gpu-bundles" / "prompts" / "sharegpt-test.jsonl").write_text("{}\n")
    root = tmp_path / "gpuhost"
    for model in ("smollm2-135m", "smollm2-l4", "smollm2-eagle", "smollm2-eagle3"):
        (root / "models" / model).mkdir(parents=True)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(PYTHON3)
    (bin_ / "python3").chmod(0o755)
    (root / "env.sh").write_text(f'export PATH="{bin_}:$PATH"\n')
    return co, root, tmp_path


def _suite(host, pytest_args: str | None):
    co, root, tmp = host
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "SUITE_DIR": str(tmp / "suite"),
           "OUT": str(out), "SEEN": str(tmp / "seen")}
    env.pop("PYTEST_ARGS", None)
    if pytest_args is not None:
        env["PYTEST_ARGS"] = pytest_args
    r = subprocess.run(["bash", "scripts/gpu-host/suite.sh"], cwd=co, env=env,
                       capture_output=True, text=True, timeout=60)
    seen = (tmp / "seen").read_text().splitlines() if (tmp / "seen").exists() else None
    return r, seen


def test_a_quoted_k_expression_reaches_pytest_whole(host):
    r, seen = _suite(host, "--ignore=tests/gpu/test_dsl_kernels.py -k 'not eagle and not v1'")
    assert r.returncode == 0, r.stderr
    assert seen[-4:] == ["--ignore=tests/gpu/test_dsl_kernels.py", "-k",
                         "not eagle and not v1", "tests/gpu"]
    assert seen[seen.index("-k") - 1].startswith("--ignore=")
    with tarfile.open(host[2] / "out" / "gpu-suite.tgz") as t:
        assert "./times.log" in t.getnames()


def test_no_pytest_args_adds_none(host):
    r, seen = _suite(host, None)
    assert r.returncode == 0, r.stderr
    assert seen[-2:][0].startswith("--junitxml=") and seen[-1] == "tests/gpu"


def test_an_unclosed_quote_is_one_clear_error_before_anything_runs(host):
    r, seen = _suite(host, "-k 'not eagle")
    assert r.returncode == 2
    assert "PYTEST_ARGS" in r.stderr and "unclosed quote" in r.stderr
    assert seen is None and not (host[2] / "suite").exists()
