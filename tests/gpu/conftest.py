"""GPU end-to-end tests: skipped without CUDA.

Environment:
  DSL_GPU_MODELS   folder with the HF checkpoints (default /tmp/gpuhost/models):
                   smollm2-135m (target) and the draft named by DSL_GPU_DRAFT
  DSL_GPU_DRAFT    draft checkpoint folder name (default smollm2-l10)
  DSL_GPU_PROMPTS  folder with the fixtures' prompt JSONL files (default:
                   .gpu-bundles/prompts, else $DSL_CACHE/fixtures/prompts)
  DSL_GPU_RESULTS  folder for raw JSON results (default tests/gpu/results/raw)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("engine_worker.py")


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the GPU host)")
    for item in items:
        if "tests/gpu/" in str(item.fspath):
            item.add_marker(skip)


def models_dir() -> str:
    return os.environ.get("DSL_GPU_MODELS", "/tmp/gpuhost/models")


def draft_name() -> str:
    return os.environ.get("DSL_GPU_DRAFT", "smollm2-l10")


def load_prompts(n: int = 16) -> list[list[int]]:
    """n prompts (token ids): half ShareGPT, half HumanEval, from the test splits."""
    candidates = [
        os.environ.get("DSL_GPU_PROMPTS"),
        ROOT / ".gpu-bundles" / "prompts",
        Path(os.environ.get("DSL_CACHE", Path.home() / ".cache" / "vllm-dsl"))
        / "fixtures"
        / "prompts",
    ]
    for c in candidates:
        if c and (Path(c) / "sharegpt-test.jsonl").exists():
            folder = Path(c)
            break
    else:
        pytest.fail(
            "no prompt files: set DSL_GPU_PROMPTS (scripts/fixtures.sh builds them)"
        )
    out = []
    for name in ("sharegpt-test.jsonl", "humaneval-test.jsonl"):
        rows = [json.loads(line) for line in (folder / name).read_text().splitlines()]
        out += [r["prompt_token_ids"] for r in rows[: n // 2]]
    return out


class EngineGroups:
    """Runs each named group of cases once (one subprocess) and caches results."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.cache: dict[str, dict[str, dict]] = {}
        self.results_dir = Path(
            os.environ.get(
                "DSL_GPU_RESULTS", ROOT / "tests" / "gpu" / "results" / "raw"
            )
        )
        self.results_dir.mkdir(parents=True, exist_ok=True)

    def run(
        self,
        group: str,
        env: dict[str, str],
        cases: list[dict],
        prompts: list[list[int]],
    ) -> dict[str, dict]:
        if group in self.cache:
            return self.cache[group]
        cases_file = self.tmp / f"{group}.cases.json"
        out_file = self.results_dir / f"{group}.json"
        cases_file.write_text(
            json.dumps({"models": models_dir(), "prompts": prompts, "cases": cases})
        )
        proc = subprocess.run(
            [sys.executable, str(WORKER), str(cases_file), str(out_file)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=900,
        )
        (self.results_dir / f"{group}.log").write_text(proc.stdout + proc.stderr)
        if not out_file.exists():
            pytest.fail(f"group {group} produced no results:\n{proc.stderr[-3000:]}")
        results = {r["name"]: r for r in json.loads(out_file.read_text())}
        self.cache[group] = results
        return results


@pytest.fixture(scope="session")
def engine_groups(tmp_path_factory) -> EngineGroups:
    return EngineGroups(tmp_path_factory.mktemp("gpu-groups"))


@pytest.fixture(scope="session")
def prompts() -> list[list[int]]:
    return load_prompts()
