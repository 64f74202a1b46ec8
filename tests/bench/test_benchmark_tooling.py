"""The benchmark's orchestration, tune/test selection and report, end to end
on CPU with a fake cell driver (``fake_cell.py``) in place of the engine."""

import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
import run  # noqa: E402

DATASETS = ("sharegpt", "humaneval")


def bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    prompts = tmp_path / "prompts"
    if not prompts.exists():
        prompts.mkdir()
        for d in DATASETS:
            for split in ("tune", "test"):
                rows = [{"prompt_token_ids": [i + 1] * (3 + i)} for i in range(4)]
                (prompts / f"{d}-{split}.jsonl").write_text(
                    "".join(json.dumps(r) + "\n" for r in rows))
    return subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--prompts", str(prompts),
         "--out", str(tmp_path / "out"), "--models", str(tmp_path),
         "--target", "t", "--draft", "d", "--max-tokens", "9",
         "--base-requests", "2", "--concurrency", "1,2", "--sd-k", "1-4",
         "--dsl-k", "5,10", "--dsl-tau", "0.4,0.6", "--dsl-lag", "1,3",
         "--parallel", "4", *args],
        env={**os.environ, "DSL_BENCH_CELL": str(Path(__file__).parent / "fake_cell.py")},
        capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def two_gpu_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    res = bench(tmp, "--gpus", "0,1", "--phase", "all")
    assert res.returncode == 0, res.stdout + res.stderr
    return tmp / "out", res


def test_tune_test_selection_and_lanes(two_gpu_run):
    out, _ = two_gpu_run
    sel = json.loads((out / "selection.json").read_text())
    for d in DATASETS:
        for c in (1, 2):
            assert sel[f"{d}-c{c}"]["sd_k"] == 3
            assert sel[f"{d}-c{c}"]["dsl"] == [10, 0.6, 1]
    # One file per cell, the per-GPU parts merged; each dataset on its GPU.
    names = {p.stem for p in out.glob("*.json")} - {"config", "selection"}
    assert {"tune-target", "tune-sd-k4", "tune-dsl-k10", "tune-dsl-k10-lag3",
            "tune-dsl-k4-t0.0", "tune-dsl-k4-t0.0-lag3",
            "test-dsl-k10-t0.6"} <= names
    assert not [n for n in names if "@gpu" in n]
    home = {"sharegpt": "0", "humaneval": "1"}
    intervals: dict[str, list] = {"0": [], "1": []}
    for name in names:
        cell = json.loads((out / f"{name}.json").read_text())
        for r in cell["results"]:
            assert r["gpu"] == home[r["prompts"].rsplit("-", 1)[0]], name
            intervals[r["gpu"]].append(r["measured"])
    # On each GPU, measurements never overlap (one engine at a time).
    for runs in intervals.values():
        for (a0, a1), (b0, b1) in combinations(sorted(runs), 2):
            assert a1 <= b0 or b1 <= a0


def test_sd_and_target_cells_run_the_tune_split_once(two_gpu_run):
    out, _ = two_gpu_run
    cell = json.loads((out / "tune-sd-k2.json").read_text())
    reps = {(r["prompts"], r["concurrency"]): 0 for r in cell["results"]}
    for r in cell["results"]:
        reps[(r["prompts"], r["concurrency"])] += 1
    assert {v for k, v in reps.items() if k[0].endswith("-tune")} == {1}
    assert {v for k, v in reps.items() if k[0].endswith("-test")} == {2}


def test_report_names_lags_and_goals(two_gpu_run):
    out, _ = two_gpu_run
    res = subprocess.run([sys.executable, str(BENCH / "report.py"), str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    report = (out / "report.md").read_text()
    assert "| sharegpt | 1 | 2.010 | 3 |" in report
    assert "(10, 0.6)" in report
    assert "exit lag 1" in report and "exit lag 3" in report
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["goals"]["tau0_overhead"]) == {"1", "3"}


def test_unknown_arm_is_one_clear_error(tmp_path):
    res = bench(tmp_path, "--arms", "sd,eagle", "--phase", "tune")
    assert res.returncode == 2
    assert "--arms: unknown ['eagle']" in res.stderr
    assert not list((tmp_path / "out").glob("tune-*.json"))


def test_dsl_names_keep_lag_one_unsuffixed():
    assert run.dsl_name("tune", 5) == "tune-dsl-k5"
    assert run.dsl_name("test", 10, 0.6) == "test-dsl-k10-t0.6"
    assert run.dsl_name("tune", 4, 0.0, 3) == "tune-dsl-k4-t0.0-lag3"


def test_lanes_split_workloads_by_dataset():
    cell = {"name": "c", "workloads": [{"prompts": "sharegpt-test"},
                                       {"prompts": "humaneval-tune"}]}
    lanes = run.lane_cells([cell], ["0", "1"], list(DATASETS))
    assert [w["prompts"] for w in lanes["0"][0]["workloads"]] == ["sharegpt-test"]
    assert lanes["1"][0]["name"] == "c@gpu1"
    assert run.lane_cells([cell], [], list(DATASETS)) == {"": [cell]}
