"""GPU end-to-end tests: skipped without CUDA.

Environment:
  DSL_GPU_MODELS   folder with the HF checkpoints (default /tmp/gpuhost/models):
                   smollm2-135m (target) and the draft named by DSL_GPU_DRAFT
  DSL_GPU_DRAFT    draft checkpoint folder name (default smollm2-l4-kd, built by
                   scripts/gpu-host/distill.py); test_dsl_eagle.py reads smollm2-eagle
                   and smollm2-eagle3 (scripts/gpu-host/build_eagle.py), skips without
  DSL_GPU_PROMPTS  folder with the fixtures' prompt JSONL files (default:
                   .gpu-bundles/prompts, else $DSL_CACHE/fixtures/prompts)
  DSL_GPU_RESULTS  folder for raw JSON results (default build/gpu-results/raw)
  DSL_GPU_REPLAY   folder of a run's raw results (DSL_GPU_RESULTS of that run):
                   the engine-level tests check those results instead of
                   running engines, also without a GPU (e.g. re-checking a
                   committed run's raw files); a missing group fails.
  DSL_GPU_PARALLEL engine groups run at once (default 1). Each group is one
                   subprocess with a fixed 192 MiB KV cache and no memory
                   profiling, so several share one GPU; correctness results do
                   not depend on it (timings do: they are not benchmarks).
  DSL_GPU_WAIT_MODELS  seconds a group waits for its models (default 0: a group
                   whose models are missing does not run; the EAGLE tests
                   skip). When set, the models are being built beside the
                   suite (scripts/gpu-host/suite.sh): a model counts as built
                   once ``<DSL_GPU_MODELS>/<name>/.built`` exists (written
                   after its build script exited 0), and a group starts as
                   soon as all of its models are built.

Without CUDA only the parts that need a GPU skip: tests marked ``cuda`` and
tests that read engine groups (unless DSL_GPU_REPLAY is set). The rest of each
module (constructors, argument plumbing, the torch reference paths, the result
checkers) runs on CPU in scripts/fastcheck.sh, so an API change that breaks a
GPU test fails there too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("engine_worker.py")


REPLAY = os.environ.get("DSL_GPU_REPLAY")
WAIT_MODELS_S = float(os.environ.get("DSL_GPU_WAIT_MODELS", "0") or 0)


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
        if "tests/gpu/" not in str(item.fspath):
            continue
        if "engine_groups" in getattr(item, "fixturenames", ()):
            if not REPLAY:  # else it checks recorded results
                item.add_marker(skip)
        elif item.get_closest_marker("cuda") is not None:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu_groups(*names): engine groups a GPU test reads"
    )
    config.addinivalue_line(
        "markers", "cuda: needs a CUDA GPU (skipped without one; the rest runs on CPU)"
    )


def models_dir() -> str:
    return os.environ.get("DSL_GPU_MODELS", "/tmp/gpuhost/models")


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
    """Runs each named group of cases once (one subprocess) and caches results.

    ``prefetch`` starts the groups the collected tests need, up to
    ``parallel`` at a time; ``run`` waits for (or starts) one group.
    """

    def __init__(self, tmp: Path, parallel: int = 1):
        self.tmp = tmp
        self.pool = ThreadPoolExecutor(max_workers=max(1, parallel))
        self.futures: dict[str, Future] = {}
        self.lock = threading.Lock()
        from gpu_groups import results_dir

        self.results_dir = results_dir()

    def _execute(
        self, group: str, env: dict[str, str], cases: list[dict], prompts: list
    ) -> dict[str, dict] | str:
        if REPLAY:
            replayed = Path(REPLAY) / f"{group}.json"
            if not replayed.exists():
                return f"DSL_GPU_REPLAY: no {replayed}"
            return {r["name"]: r for r in json.loads(replayed.read_text())}
        if WAIT_MODELS_S > 0:
            from gpu_groups import wait_for_models

            missing = wait_for_models(cases, WAIT_MODELS_S)
            if missing:
                return (
                    f"group {group}: models not built after {WAIT_MODELS_S:.0f} s "
                    f"(DSL_GPU_WAIT_MODELS): {', '.join(missing)}"
                )
        cases_file = self.tmp / f"{group}.cases.json"
        self.results_dir.mkdir(parents=True, exist_ok=True)
        out_file = self.results_dir / f"{group}.json"
        out_file.unlink(missing_ok=True)
        cases_file.write_text(
            json.dumps({"models": models_dir(), "prompts": prompts, "cases": cases})
        )
        try:
            proc = subprocess.run(
                [sys.executable, str(WORKER), str(cases_file), str(out_file)],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                timeout=900,
            )
            log = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            log = f"timed out after 900 s\n{e.stdout or ''}{e.stderr or ''}"
        (self.results_dir / f"{group}.log").write_text(log)
        if not out_file.exists():
            return f"group {group} produced no results:\n{log[-3000:]}"
        return {r["name"]: r for r in json.loads(out_file.read_text())}

    def submit(
        self, group: str, env: dict[str, str], cases: list[dict], prompts: list
    ) -> Future:
        with self.lock:
            if group not in self.futures:
                self.futures[group] = self.pool.submit(
                    self._execute, group, env, cases, prompts
                )
            return self.futures[group]

    def run(
        self,
        group: str,
        env: dict[str, str],
        cases: list[dict],
        prompts: list[list[int]],
    ) -> dict[str, dict]:
        result = self.submit(group, env, cases, prompts).result()
        if isinstance(result, str):
            pytest.fail(result)
        return result


NEEDED_GROUPS: list[str] = []


def pytest_collection_finish(session):
    """Remember the engine groups the selected tests use (for prefetch)."""
    from gpu_groups import GROUPS

    for item in session.items:
        names = list(getattr(getattr(item, "callspec", None), "params", {}).values())
        marker = item.get_closest_marker("gpu_groups")
        if marker is not None:
            names += list(marker.args)
        for name in names:
            if isinstance(name, str) and name in GROUPS and name not in NEEDED_GROUPS:
                NEEDED_GROUPS.append(name)


@pytest.fixture(scope="session")
def engine_groups(tmp_path_factory, prompts) -> EngineGroups:
    from gpu_groups import GROUPS

    groups = EngineGroups(
        tmp_path_factory.mktemp("gpu-groups"),
        int(os.environ.get("DSL_GPU_PARALLEL", "1")),
    )
    if _cuda():
        from gpu_groups import missing_models

        for name in NEEDED_GROUPS:
            env, cases = GROUPS[name]
            # Missing models: its tests skip (test_dsl_eagle.py), unless the
            # models are being built beside the suite (the group waits).
            if WAIT_MODELS_S > 0 or not missing_models(cases):
                groups.submit(name, env, cases, prompts)
    return groups


@pytest.fixture(scope="session")
def prompts() -> list[list[int]]:
    if REPLAY:
        return []  # the recorded results need no prompts
    return load_prompts()
