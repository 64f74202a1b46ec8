"""scripts/gpu-host/suite.sh on CPU: the pytest arguments it passes. The real
script runs from a scratch checkout (``scratch_checkout``) against a staged
root whose env.sh puts a stand-in python3 first on PATH: it records a ``-m
pytest`` call's arguments (one a line) and answers the model builds at once;
anything else (the script's own argument split) goes to the real
interpreter."""

from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path

import pytest
from scratch_checkout import scratch_checkout, start

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "suite.sh"

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
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(PYTHON3)
    (bin_ / "python3").chmod(0o755)
    co, root, record = scratch_checkout(tmp_path, {}, f'export PATH="{bin_}:$PATH"\n')
    (co / ".gpu-bundles" / "prompts" / "sharegpt-test.jsonl").write_text("{}\n")
    for model in ("smollm2-135m", "smollm2-l4", "smollm2-eagle", "smollm2-eagle3"):
        (root / "models" / model).mkdir(parents=True)
    return co, root, record


def _suite(host, pytest_args: str | None):
    co, root, record = host
    tmp = record.parent
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "SUITE_DIR": str(tmp / "suite"),
           "OUT": str(out), "SEEN": str(record / "seen")}
    env.pop("PYTEST_ARGS", None)
    if pytest_args is not None:
        env["PYTEST_ARGS"] = pytest_args
    r = start(SCRIPT, co, env)
    seen = record / "seen"
    return r, (seen.read_text().splitlines() if seen.exists() else None)


def test_a_quoted_k_expression_reaches_pytest_whole(host):
    r, seen = _suite(host, "--ignore=tests/gpu/test_dsl_kernels.py -k 'not eagle and not v1'")
    assert r.returncode == 0, r.stderr
    assert seen[-4:] == ["--ignore=tests/gpu/test_dsl_kernels.py", "-k",
                         "not eagle and not v1", "tests/gpu"]
    assert seen[seen.index("-k") - 1].startswith("--ignore=")
    with tarfile.open(host[2].parent / "out" / "gpu-suite.tgz") as t:
        assert "./times.log" in t.getnames()


def test_no_pytest_args_adds_none(host):
    r, seen = _suite(host, None)
    assert r.returncode == 0, r.stderr
    assert seen[-2:][0].startswith("--junitxml=") and seen[-1] == "tests/gpu"


def test_an_unclosed_quote_is_one_clear_error_before_anything_runs(host):
    r, seen = _suite(host, "-k 'not eagle")
    assert r.returncode == 2
    assert "PYTEST_ARGS" in r.stderr and "unclosed quote" in r.stderr
    assert seen is None and not (host[2].parent / "suite").exists()
