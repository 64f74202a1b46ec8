"""The benchmark's orchestration, tune/test selection and report, end to end
on CPU with a fake cell driver (``fake_cell.py``) in place of the engine."""

import gc
import json
import os
import statistics
import subprocess
import sys
import time
import types
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
         "--dsl-k", "5,10", "--dsl-tau", "0.4,0.6",
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
            assert sel[f"{d}-c{c}"]["dsl"] == [10, 0.6]
            assert set(sel[f"{d}-c{c}"]["tune_tpot_dsl"]) == {
                "k5-t0.4", "k5-t0.6", "k10-t0.4", "k10-t0.6"}
    # One file per cell, the per-GPU parts merged; each dataset on its GPU.
    names = {p.stem for p in out.glob("*.json")} - {"config", "selection"}
    assert names == {"tune-target", "tune-sd-k1", "tune-sd-k2", "tune-sd-k3",
                     "tune-sd-k4", "tune-dsl-k5", "tune-dsl-k10",
                     "tune-dsl-k4-t0.0", "test-dsl-k10-t0.6"}
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


def test_no_cell_sets_an_exit_lag(two_gpu_run):
    """The engine no longer accepts draft_confidence_exit_lag: no cell may
    carry a lag (the fake cell fails on one, as the engine would)."""
    out, res = two_gpu_run
    cells = [json.loads(p.read_text()) for p in (out / "work").glob("*.cell.json")]
    assert cells and not [c["name"] for c in cells if "lag" in c]
    assert "failed at start-up" not in res.stdout
    assert "dsl_lag" not in json.loads((out / "config.json").read_text())


def test_dsl_lag_option_is_gone(tmp_path):
    res = bench(tmp_path, "--dsl-lag", "1,3", "--phase", "tune")
    assert res.returncode == 2
    assert "unrecognized arguments: --dsl-lag" in res.stderr


def report(out: Path) -> tuple[str, dict]:
    res = subprocess.run([sys.executable, str(BENCH / "report.py"), str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return ((out / "report.md").read_text(),
            json.loads((out / "summary.json").read_text()))


def test_report_names_selection_and_goals(two_gpu_run):
    out, _ = two_gpu_run
    text, summary = report(out)
    assert "| sharegpt | 1 | 2.010 | 3 |" in text
    # DSL's TPOT on the test split comes from the selected test cell.
    assert "| (10, 0.6) | 1.608 |" in text
    assert "lag" not in text
    assert "- τ=0 bookkeeping overhead ≤ 1% (DSL τ=0 vs SD, K=4): mean" in text
    # Four test-split points (two datasets x two concurrencies).
    assert len(summary["goals"]["tau0_overhead"]) == 4


def test_report_reads_a_folder_tuned_with_an_exit_lag(two_gpu_run, tmp_path):
    """Committed results from before the lag's removal select (K, tau, lag),
    and a lag other than 1 named the test cell ``-lag<L>``."""
    out, _ = two_gpu_run
    old = tmp_path / "old"
    old.mkdir()
    for p in out.glob("*.json"):
        (old / p.name).write_bytes(p.read_bytes())
    # ShareGPT selected lag 3 (a test cell twice as slow), HumanEval lag 1.
    lag3 = json.loads((old / "test-dsl-k10-t0.6.json").read_text())
    for r in lag3["results"]:
        for q in r["requests"]:
            q["tpot"] *= 2
    (old / "test-dsl-k10-t0.6-lag3.json").write_text(json.dumps(lag3))
    cfg = json.loads((old / "config.json").read_text())
    (old / "config.json").write_text(json.dumps({**cfg, "dsl_lag": "1,3"}))
    sel = json.loads((old / "selection.json").read_text())
    for key, v in sel.items():
        v["dsl"] = [10, 0.6, 3 if key.startswith("sharegpt") else 1]
    (old / "selection.json").write_text(json.dumps(sel))
    text, summary = report(old)
    assert "| sharegpt | 1 | 2.010 | 3 | 1.708 | (10, 0.6, lag 3) | 3.216 |" in text
    assert "| humaneval | 1 | 2.010 | 3 | 1.708 | (10, 0.6) | 1.608 |" in text
    assert len(summary["goals"]["tau0_overhead"]) == 4


def test_unknown_arm_is_one_clear_error(tmp_path):
    res = bench(tmp_path, "--arms", "sd,eagle", "--phase", "tune")
    assert res.returncode == 2
    assert "--arms: unknown ['eagle']" in res.stderr
    assert not list((tmp_path / "out").glob("tune-*.json"))


def test_dsl_names():
    assert run.dsl_name("tune", 5) == "tune-dsl-k5"
    assert run.dsl_name("test", 10, 0.6) == "test-dsl-k10-t0.6"
    assert run.dsl_name("tune", 4, 0.0) == "tune-dsl-k4-t0.0"


def test_lanes_split_workloads_by_dataset():
    cell = {"name": "c", "workloads": [{"prompts": "sharegpt-test"},
                                       {"prompts": "humaneval-tune"}]}
    lanes = run.lane_cells([cell], ["0", "1"], list(DATASETS))
    assert [w["prompts"] for w in lanes["0"][0]["workloads"]] == ["sharegpt-test"]
    assert lanes["1"][0]["name"] == "c@gpu1"
    assert run.lane_cells([cell], [], list(DATASETS)) == {"": [cell]}


def test_select_phase_writes_the_choice_and_runs_no_test_cell(two_gpu_run, tmp_path):
    out, _ = two_gpu_run
    tune = tmp_path / "out"
    tune.mkdir()
    for p in out.glob("tune-*.json"):
        (tune / p.name).write_bytes(p.read_bytes())
    res = bench(tmp_path, "--phase", "select")
    assert res.returncode == 0, res.stderr
    sel = json.loads((tune / "selection.json").read_text())
    assert sel["sharegpt-c1"]["sd_k"] == 3 and sel["sharegpt-c1"]["dsl"] == [10, 0.6]
    assert not list(tune.glob("test-*.json")) and "[bench]" not in res.stdout


def test_abab_arms_from_a_selection():
    import abab

    sel = {"sd_k": 3, "dsl": [10, 0.6]}
    assert abab.resolve_arms(["sd*", "target", "dsl*", "dsl*t0"], sel) == [
        "sd3", "target", "dsl10t0.6", "dsl3t0"]
    # An arm named twice (explicitly and by the choice) gets one engine.
    assert abab.resolve_arms(["sd3", "sd*"], sel) == ["sd3"]
    with pytest.raises(SystemExit, match="needs --selection"):
        abab.resolve_arms(["sd*"], None)
    with pytest.raises(SystemExit, match="no SD or DSL choice"):
        abab.resolve_arms(["dsl*"], {"sd_k": 3, "dsl": None})
    with pytest.raises(SystemExit, match="unknown arm 'eagle\\*'"):
        abab.resolve_arms(["eagle*"], sel)


def test_abab_tokens_per_step_counts_steps_that_gave_tokens():
    import abab

    reqs = [{"deltas": [1, 3, 2]}, {"deltas": [4]}]
    assert abab.tokens_per_step(reqs) == pytest.approx(10 / 4)


def test_report_recommends_a_config_per_concurrency_band(two_gpu_run):
    out, _ = two_gpu_run
    text, summary = report(out)
    rec = json.loads((out / "recommend.json").read_text())
    assert rec == summary["recommend"]
    bands = rec["sharegpt"]
    assert [b["concurrency"] for b in bands] == [[1, 1], [2, None]]
    best = bands[0]
    # The fake cells make DSL (10, 0.6) the fastest on the tune split.
    assert best["arm"] == "DSL (10, 0.6)"
    assert best["speculative_config"] == {
        "method": "draft_model", "model": str(out.parent / "d"),
        "num_speculative_tokens": 10, "draft_confidence_threshold": 0.6}
    assert best["margin"] > 0 and best["runner_up"]
    assert "## Recommended `--speculative-config` (tune split)" in text
    assert '| sharegpt | 1 | DSL (10, 0.6) |' in text
    assert '| sharegpt | ≥ 2 | DSL (10, 0.6) |' in text


def test_report_recommends_no_speculation_where_target_only_wins():
    import report as rep

    cell = {"results": [{"prompts": "sharegpt-tune", "concurrency": 8, "rep": 0,
                         "requests": [{"tpot": 0.004}]}]}
    sel = {"sharegpt-c8": {"tune_tpot_sd": {"3": 0.005},
                           "tune_tpot_dsl": {"k5-t0.7": 0.0046}}}
    rec = rep.recommend({"tune-target": cell}, {"draft": "/m/d"}, sel, ["sharegpt"], [8])
    (band,) = rec["sharegpt"]
    assert band["arm"] == "target-only" and band["speculative_config"] is None
    assert band["runner_up"] == "DSL (5, 0.7)"
    assert band["margin"] == pytest.approx(0.15)
    assert "| sharegpt | ≥ 8 | target-only | 4.000 | 15.0% (DSL (5, 0.7)) | none |" in (
        "\n".join(rep.recommend_lines(rec)))


def test_report_writes_the_bands_as_one_config_with_a_batch_size_schedule():
    import report as rep
    from profile_step import parse_arm

    def band(lo, hi, arm, spec):
        return {"concurrency": [lo, hi], "arm": arm, "tune_tpot_ms": 4.0,
                "speculative_config": spec, "runner_up": None, "margin": None}

    dsl = {"method": "draft_model", "model": "/m/d", "num_speculative_tokens": 8,
           "draft_confidence_threshold": 0.5}
    sd3 = {"method": "draft_model", "model": "/m/d", "num_speculative_tokens": 3}
    bands = [band(1, 7, "DSL (8, 0.5)", dsl), band(8, 31, "SD K=3", sd3),
             band(32, None, "target-only", None)]
    one = rep.one_config(bands)
    assert one["speculative_config"] == {
        **dsl, "num_speculative_tokens_per_batch_size": [[1, 7, 8], [8, 31, 3], [32, 32, 0]]}
    # The arm abab.py measures it with is the same config.
    arm = parse_arm(one["abab_arm"])
    assert (arm["k"], arm["tau"]) == (8, 0.5)
    assert arm["schedule"] == one["speculative_config"]["num_speculative_tokens_per_batch_size"]
    # One band, or the same K everywhere: no schedule. Nothing speculates: no config.
    assert rep.one_config(bands[:1]) == {"speculative_config": dsl, "abab_arm": "dsl8t0.5"}
    assert rep.one_config([band(1, None, "target-only", None)]) is None
    text = "\n".join(rep.recommend_lines({"sharegpt": bands}))
    assert "dsl8t0.5@1-7:8/8-31:3/32-32:0" in text


def test_report_writes_recommend_one_json(two_gpu_run):
    out, _ = two_gpu_run
    report(out)
    ones = json.loads((out / "recommend-one.json").read_text())
    rec = json.loads((out / "recommend.json").read_text())
    import report as rep
    assert ones == {d: rep.one_config(b) for d, b in rec.items()}


class _FakeEngines:
    """Engines for ``abab.main``: ``start_fails`` names arms whose engine does
    not start; ``run_fails`` maps an arm to the (concurrency, round) whose
    workload raises. TPOT per arm is fixed, so the ratios are known."""

    TPOT = {"sd4": 4.0, "sd3": 3.0, "dsl8t0.5": 2.0, "dsl6": 2.5, "sd5": 5.0}
    # Per engine step of an arm's workload: (drafts, drafted, accepted, draft
    # forwards, early exits); each workload runs STEPS steps, plus one record
    # without spec-decode stats (a prefill step).
    SPEC = {"sd4": (2, 8, 4, 0, 0), "sd3": (2, 6, 3, 0, 0),
            "dsl8t0.5": (2, 10, 6, 5, 1), "dsl6": (2, 7, 5, 4, 2)}
    STEPS = 3

    def __init__(self, start_fails=(), run_fails=None):
        self.start_fails = set(start_fails)
        self.run_fails = run_fails or {}
        self.loggers: dict[str, object] = {}
        # ("start", arm) and ("run", arm, tag), in the order they happened.
        self.events: list[tuple] = []
        # (arm, tag, requests, output lengths) of every workload run.
        self.lengths: list[tuple] = []
        # (arm, tag, drain_every) of every workload run.
        self.drains: list[tuple] = []
        # (arm, tag, first prompt) of every workload run.
        self.first_prompts: list[tuple] = []

    def install(self, monkeypatch, abab):
        import vllm.v1.engine.llm_engine as llm_engine

        # abab.main prepends benchmarks/ to PYTHONPATH (for the spawned engine
        # cores): undone after the test.
        monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        from vllm.v1.metrics.stats import SchedulerStats
        from vllm.v1.spec_decode.metrics import SpecDecodingStats

        monkeypatch.setattr(abab, "engine_args", lambda cell: cell)
        monkeypatch.setattr(abab, "load_prompts", lambda *a: [[1, 2, 3]])

        def from_engine_args(cell, stat_loggers=None):
            if not cell["k"]:
                name = "target"
            elif not cell["dynamic"]:
                name = "sd%d" % cell["k"]
            elif cell["tau"] is None:
                name = "dsl%d" % cell["k"]
            else:
                name = "dsl%dt%s" % (cell["k"], cell["tau"])
            self.events.append(("start", name))
            if name in self.start_fails:
                raise RuntimeError(f"{name} out of memory")
            (factory,) = stat_loggers
            self.loggers[name] = factory(None, 0)
            return name

        monkeypatch.setattr(llm_engine.LLMEngine, "from_engine_args",
                            staticmethod(from_engine_args))

        def run_workload(engine, prompts, c, n, max_tokens, extra, tag,
                         output_lengths=None, drain_every=None):
            self.events.append(("run", engine, tag))
            self.lengths.append((engine, tag, n, output_lengths))
            self.drains.append((engine, tag, drain_every))
            self.first_prompts.append((engine, tag, prompts[0]))
            if tag.startswith("r") and self.run_fails.get(engine) == tag:
                raise RuntimeError(f"{engine} died")
            logger = self.loggers[engine]
            logger.record(SchedulerStats(), None)
            for _ in range(self.STEPS):
                drafts, drafted, accepted, forwards, exits = self.SPEC.get(
                    engine, (0, 0, 0, 0, 0))
                spec = SpecDecodingStats.new(8)
                spec.num_drafts, spec.num_draft_tokens = drafts, drafted
                spec.num_accepted_tokens, spec.num_draft_forwards = accepted, forwards
                spec.num_early_exits = exits
                logger.record(SchedulerStats(spec_decoding_stats=spec), None)
            # Records that carry no scheduler stats are not engine steps.
            logger.record(None, None)
            t = self.TPOT[engine] / 1e3
            return {"requests": [{"tpot": t, "deltas": [1, 2]}] * n, "counters": {},
                    "step_ms": {"n": 3, "p50": self.TPOT[engine]}}

        monkeypatch.setattr(abab, "run_workload", run_workload)


def _abab(tmp_path, arms, conc="1,8"):
    import abab

    out = tmp_path / "abab.json"
    args = ["--models", str(tmp_path), "--prompts", str(tmp_path), "--out", str(out),
            "--arms", arms, "--concurrency", conc, "--rounds", "2",
            "--base-requests", "2"]
    return abab, out, args


def test_abab_drops_an_arm_whose_engine_fails_and_keeps_the_others(
        tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3,dsl8t0.5")
    # dsl fails at start-up; sd3 dies in round 1 at c=8.
    _FakeEngines({"dsl8t0.5"}, {"sd3": "r1c8"}).install(monkeypatch, abab)
    assert abab.main(args) == 0
    data = json.loads(out.read_text())
    assert data["arms"] == ["sd4", "sd3"]
    assert data["failed"]["dsl8t0.5"] == "start-up: RuntimeError: dsl8t0.5 out of memory"
    assert data["failed"]["sd3"] == "c=8 round 1: RuntimeError: sd3 died"
    c1, c8 = data["points"]
    assert c1["ratios"]["sd3"]["per_round"] == pytest.approx([0.75, 0.75])
    # From its failure on, the arm is reported as dropped, with no ratio.
    assert "sd3" not in c8["ratios"]
    assert any("sd3" in line and "dropped" in line for line in data["summary"])


def test_abab_measures_every_point_again_after_each_group_of_bystanders(
        tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    assert abab.main(args + ["--bystanders", "sd5/dsl6,dsl8t0.5"]) == 0
    data = json.loads(out.read_text())
    assert data["arms"] == ["sd4", "sd3"]
    assert data["bystanders"] == [[], ["sd5"], ["sd5", "dsl6", "dsl8t0.5"]]
    assert [(p["concurrency"], p["bystanders"]) for p in data["points"]] == [
        (1, []), (8, []), (1, ["sd5"]), (8, ["sd5"]),
        (1, ["sd5", "dsl6", "dsl8t0.5"]), (8, ["sd5", "dsl6", "dsl8t0.5"])]
    # Each group starts once the points before it were measured, and
    # bystanders only warm up: no round ever runs on them.
    starts = [i for i, e in enumerate(fake.events) if e[0] == "start"]
    rounds = [i for i, e in enumerate(fake.events) if e[0] == "run" and e[2][0] == "r"]
    start_of = {fake.events[i][1]: i for i in starts}
    assert sum(start_of["sd5"] > i for i in rounds) == 2 * 2 * 2  # 2 c x 2 rounds x 2 arms
    assert sum(start_of["dsl6"] > i for i in rounds) == 2 * (2 * 2 * 2)
    assert {fake.events[i][1] for i in rounds} == {"sd4", "sd3"}
    assert all(p["ratios"]["sd3"]["median"] == pytest.approx(0.75) for p in data["points"])
    assert any("[bystanders alive: sd5, dsl6, dsl8t0.5]" in line for line in data["summary"])
    assert "spec" in data["points"][-1] and set(data["points"][-1]["spec"]) == {"sd4", "sd3"}


def test_abab_warm_rounds_run_the_points_workload_before_its_measured_rounds(
        tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    assert abab.main(args + ["--warm-rounds", "2", "--output-lengths", "4-9"]) == 0
    data = json.loads(out.read_text())
    runs = [(e[1], e[2]) for e in fake.events if e[0] == "run"
            and not e[2].startswith("warm")]
    # Per point: both warm rounds on every arm, then the measured ABBA rounds.
    assert runs == [("sd4", "w0c1"), ("sd3", "w0c1"), ("sd4", "w1c1"), ("sd3", "w1c1"),
                    ("sd4", "r0c1"), ("sd3", "r0c1"), ("sd3", "r1c1"), ("sd4", "r1c1"),
                    ("sd4", "w0c8"), ("sd3", "w0c8"), ("sd4", "w1c8"), ("sd3", "w1c8"),
                    ("sd4", "r0c8"), ("sd3", "r0c8"), ("sd3", "r1c8"), ("sd4", "r1c8")]
    # The same requests and lengths as the measured rounds of the point.
    by_tag = {(arm, tag): (n, lengths) for arm, tag, n, lengths in fake.lengths}
    assert by_tag[("sd3", "w1c8")] == by_tag[("sd3", "r0c8")]
    # Nothing of a warm round is counted: two measured rounds per point.
    assert data["warm_rounds"] == 2
    for point in data["points"]:
        assert len(point["tpot_ms"]["sd4"]) == 2
        assert len(point["spec_rounds"]["sd4"]) == 2
        steps = _FakeEngines.STEPS
        assert point["spec"]["sd4"]["steps"] == 2 * (steps + 1)


def test_abab_marks_each_arms_turn_in_its_output(tmp_path, monkeypatch, capsys):
    """One "[abab] turn ARM TAG" line before each warm and measured round of
    an arm, in the order they ran (served_widths.py --arm reads them)."""
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    assert abab.main(args + ["--warm-rounds", "1"]) == 0
    turns = [tuple(line.split()[2:]) for line in capsys.readouterr().out.splitlines()
             if line.startswith("[abab] turn ")]
    runs = [(e[1], e[2]) for e in fake.events if e[0] == "run"
            and not e[2].startswith("warm")]
    assert turns == runs and len(runs) == 2 * 2 * 3


def test_abab_refuses_negative_warm_rounds(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    with pytest.raises(SystemExit):
        abab.main(args + ["--warm-rounds", "-1"])


def test_abab_a_bystander_that_fails_to_start_is_left_out(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines({"dsl6"}).install(monkeypatch, abab)
    assert abab.main(args + ["--bystanders", "sd5/dsl6/dsl8t0.5"]) == 0
    data = json.loads(out.read_text())
    # dsl6's phase adds nothing new, so it is not measured; dsl8t0.5's is.
    assert data["bystanders"] == [[], ["sd5"], ["sd5", "dsl8t0.5"]]
    assert [p["bystanders"] for p in data["points"]] == [
        [], [], ["sd5"], ["sd5"], ["sd5", "dsl8t0.5"], ["sd5", "dsl8t0.5"]]
    assert data["failed"] == {"dsl6": "start-up: RuntimeError: dsl6 out of memory"}
    assert any(line == "bystanders dsl6 did not start: nothing new to measure beside"
               for line in data["summary"])


def test_abab_runs_every_arm_and_round_of_a_point_with_the_same_output_lengths(
        tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    assert abab.main(args + ["--output-lengths", "3-9", "--waves", "3"]) == 0
    data = json.loads(out.read_text())
    assert data["output_lengths"] == [3, 9] and data["waves"] == 3
    rounds = [x for x in fake.lengths if x[1].startswith("r")]
    assert len(rounds) == 2 * 2 * 2  # 2 c x 2 rounds x 2 arms
    for c, n in ((1, 3), (8, 24)):
        runs = [x for x in rounds if x[1].endswith(f"c{c}")]
        assert {x[2] for x in runs} == {n}
        lengths = runs[0][3]
        assert len(lengths) == n and all(3 <= m <= 9 for m in lengths)
        assert all(x[3] == lengths for x in runs)
    # Different lengths, or the requests would still finish in waves.
    assert len(set(rounds[-1][3])) > 1
    # Warm-up: two waves of short requests of different lengths per point.
    warm = [x for x in fake.lengths if x[1].startswith("warm")]
    assert {(x[1], x[2]) for x in warm} == {("warm1", 2), ("warm8", 16)}
    assert all(len(x[3]) == x[2] and all(4 <= m <= 32 for m in x[3]) for x in warm)


def test_abab_repeats_at_runs_a_points_requests_again_after_each_drains(
        tmp_path, monkeypatch):
    """``--repeats-at 8:3``: every round at 8 runs three groups of 16
    requests, each drained before the next (the same load, longer), with the
    same output lengths in each group; the other point is untouched."""
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    assert abab.main(args + ["--repeats-at", "8:3", "--output-lengths", "3-9"]) == 0
    data = json.loads(out.read_text())
    assert data["repeats_at"] == {"8": 3}
    assert [p["requests"] for p in data["points"]] == [2, 48]
    runs = {(x[0], x[1]): x for x in fake.lengths}
    for engine, tag, drain in fake.drains:
        if tag.startswith("warm"):
            continue
        if tag.endswith("c8"):
            assert drain == 16
            lengths = runs[(engine, tag)][3]
            assert len(lengths) == 48 and lengths[:16] == lengths[16:32] == lengths[32:]
        else:
            assert drain is None


@pytest.mark.parametrize("rotate", [False, True])
def test_abab_rotate_prompts_gives_each_round_the_next_requests(
        tmp_path, monkeypatch, rotate):
    """``--rotate-prompts``: measured round r of a point with n requests
    starts at request r * n (wrapping around the prompt set), warm rounds
    after the measured ones, every arm of a round on the same prompts;
    without it every round starts at the first prompt."""
    abab, out, args = _abab(tmp_path, "sd4,sd3", conc="1")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    monkeypatch.setattr(abab, "load_prompts", lambda *a: [[i] for i in range(5)])
    extra = ["--warm-rounds", "1"] + (["--rotate-prompts"] if rotate else [])
    assert abab.main(args + extra) == 0
    first = {(arm, tag): p[0] for arm, tag, p in fake.first_prompts
             if not tag.startswith("warm")}
    # Two requests a point at c = 1 (--base-requests 2), two measured rounds.
    want = {"r0c1": 0, "r1c1": 2, "w0c1": 4} if rotate else dict.fromkeys(
        ("r0c1", "r1c1", "w0c1"), 0)
    for tag, start in want.items():
        assert first[("sd4", tag)] == first[("sd3", tag)] == start, tag
    assert json.loads(out.read_text())["rotate_prompts"] is rotate
    assert abab.round_prompts([[0], [1], [2]], 2, 2) == [[1], [2], [0]]


def test_abab_reports_tokens_a_step_by_tenth_of_a_requests_life(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines().install(monkeypatch, abab)
    assert abab.main(args) == 0
    # The stand-in's requests got 1 token, then 2 (deltas [1, 2]): the first
    # half of their lives got 1 a step, the second 2; the steps fall in
    # tenths 0 and 5, the others have none.
    life = json.loads(out.read_text())["points"][0]["tokens_by_life"]
    assert life["sd4"] == [1.0, None, None, None, None, 2.0, None, None, None, None]


def test_tokens_by_life_sums_each_tenth_of_each_requests_steps():
    import abab

    sums, counts = abab.tokens_by_life(
        [{"deltas": [1] * 10}, {"deltas": [1, 1, 1, 1, 1, 3, 3, 3, 3, 3]},
         {"deltas": [2, 4]}], bins=10)
    assert counts == [3, 2, 2, 2, 2, 3, 2, 2, 2, 2]
    assert sums == [4.0, 2.0, 2.0, 2.0, 2.0, 8.0, 4.0, 4.0, 4.0, 4.0]


@pytest.mark.parametrize("bad", ["9-3", "0-4", "64", "a-b", "-5"])
def test_abab_output_lengths_bad_input(tmp_path, monkeypatch, capsys, bad):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines().install(monkeypatch, abab)
    with pytest.raises(SystemExit):
        abab.main(args + ["--output-lengths", bad])
    assert "--output-lengths" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        abab.main(args + ["--waves", "0"])
    assert "--waves" in capsys.readouterr().err


def test_abab_bystanders_bad_input(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines().install(monkeypatch, abab)
    for value, message in (("sd3", "'sd3' is already an arm"),
                           ("sd5/sd5", "'sd5' is already an arm or a bystander"),
                           ("sd5//dsl6", "empty group"),
                           ("sd*", "name the arm")):
        with pytest.raises(SystemExit, match=message):
            abab.main(args + ["--bystanders", value])
    assert not out.exists()


def test_abab_refuses_to_run_without_its_base_arm(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines({"sd4"}).install(monkeypatch, abab)
    with pytest.raises(SystemExit, match="base arm sd4 did not start"):
        abab.main(args)
    assert not out.exists()


def test_abab_keeps_finished_points_when_a_later_one_fails(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    # The base arm dying ends the run, but c=1 was already written.
    _FakeEngines(run_fails={"sd4": "r0c8"}).install(monkeypatch, abab)
    with pytest.raises(RuntimeError, match="sd4 died"):
        abab.main(args)
    data = json.loads(out.read_text())
    assert [p["concurrency"] for p in data["points"]] == [1]
    assert data["points"][0]["ratios"]["sd3"]["median"] == pytest.approx(0.75)


def test_abab_spec_counters_are_per_arm(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,dsl6,dsl8t0.5")
    _FakeEngines().install(monkeypatch, abab)
    assert abab.main(args) == 0
    data = json.loads(out.read_text())
    for point in data["points"]:
        spec = point["spec"]
        # 2 rounds, each 3 steps with spec stats + 1 without.
        steps = 2 * (_FakeEngines.STEPS + 1)
        assert {a: spec[a]["steps"] for a in spec} == dict.fromkeys(
            ("sd4", "dsl6", "dsl8t0.5"), steps)
        assert spec["dsl6"]["draft_forwards_per_step"] == pytest.approx(2 * 3 * 4 / steps)
        assert spec["dsl6"]["accepted_per_step"] == pytest.approx(2 * 3 * 5 / steps)
        assert spec["dsl6"]["drafted_per_draft"] == pytest.approx(7 / 2)
        assert spec["dsl6"]["early_exits_per_draft"] == pytest.approx(1.0)
        assert spec["dsl8t0.5"]["draft_forwards_per_step"] == pytest.approx(2 * 3 * 5 / steps)
        assert spec["dsl8t0.5"]["drafted_per_draft"] == pytest.approx(5.0)
        # SD's worker does not count draft forwards: K for each step that
        # verified drafts (3 of the 4 a round), said to be so.
        assert spec["sd4"]["draft_forwards_per_step"] == pytest.approx(4 * 2 * 3 / steps)
        assert spec["sd4"]["draft_forwards_source"] == "K a step that verified drafts"
        assert spec["dsl6"]["draft_forwards_source"] == "counted"
        assert spec["sd4"]["drafted_per_draft"] == pytest.approx(4.0)
        assert spec["sd4"]["acceptance_rate"] == pytest.approx(0.5)
        assert [r["num_accepted_tokens"] for r in point["spec_rounds"]["dsl6"]] == [15, 15]
        # The step durations of every round, per arm.
        assert [r["p50"] for r in point["step_ms"]["sd4"]] == [
            _FakeEngines.TPOT["sd4"]] * 2
    line = next(x for x in data["summary"] if x.strip().startswith("dsl6") and "fwd" in x)
    assert "draft fwd/step 3.00" in line and "drafted/draft 3.50" in line
    assert any("sd4" in x and "draft fwd/step 3.00 (K a drafting step)" in x
               for x in data["summary"])


def test_dsl_arm_without_a_threshold_turns_dynamic_lookahead_on():
    from cell import speculative_config
    from profile_step import arm_cell, parse_arm

    arm = parse_arm("dsl6")
    assert (arm["k"], arm["tau"], arm["dynamic"]) == (6, None, True)
    cell = arm_cell(arm, "/m", "t", "/m/d", {})
    assert speculative_config(cell["draft"], cell["k"], cell["tau"], cell["schedule"],
                              cell["dynamic"]) == {
        "method": "draft_model", "model": "/m/d", "num_speculative_tokens": 6,
        "dynamic_lookahead": True}
    # The threshold form and SD are as before (old result files' arms).
    assert parse_arm("dsl8t0.5")["tau"] == 0.5 and parse_arm("dsl8t0.5")["dynamic"]
    assert not parse_arm("sd3")["dynamic"]
    assert speculative_config("/m/d", 8, 0.5) == {
        "method": "draft_model", "model": "/m/d", "num_speculative_tokens": 8,
        "draft_confidence_threshold": 0.5}
    assert parse_arm("dsl4@1-7:4/8-64:0")["schedule"] == [[1, 7, 4], [8, 64, 0]]
    # The same config reaches vllm serve (bench_serve.py).
    import bench_serve
    cmd = bench_serve.serve_cmd("/m/t", "/m/d", arm, 8000, {})
    assert json.loads(cmd[cmd.index("--speculative-config") + 1])["dynamic_lookahead"] is True


def test_sd_arm_with_adaptive_verification():
    """``sd<K>av``/``dsl<K>av``: upstream's adaptive verification on an SD or
    DSL arm, in both harnesses."""
    from cell import speculative_config
    from profile_step import arm_cell, parse_arm

    arm = parse_arm("sd4av")
    assert (arm["k"], arm["av"], arm["dynamic"]) == (4, True, False)
    cell = arm_cell(arm, "/m", "t", "/m/d", {})
    assert speculative_config(cell["draft"], cell["k"], cell["tau"], cell["schedule"],
                              cell["dynamic"], cell["av"]) == {
        "method": "draft_model", "model": "/m/d", "num_speculative_tokens": 4,
        "enable_adaptive_verification": True}
    assert not parse_arm("sd4")["av"] and not parse_arm("dsl4")["av"]
    dsl = parse_arm("dsl4av")
    assert (dsl["k"], dsl["tau"], dsl["dynamic"], dsl["av"]) == (4, None, True, True)
    assert speculative_config("/m/d", 4, None, None, True, True) == {
        "method": "draft_model", "model": "/m/d", "num_speculative_tokens": 4,
        "dynamic_lookahead": True, "enable_adaptive_verification": True}
    assert parse_arm("dsl4t0.5av@1-8:4")["schedule"] == [[1, 8, 4]]
    import bench_serve
    cmd = bench_serve.serve_cmd("/m/t", "/m/d", arm, 8000, {})
    spec = json.loads(cmd[cmd.index("--speculative-config") + 1])
    assert spec["enable_adaptive_verification"] is True
    for bad in ("targetav", "sdav", "sd4avav", "dsl4avt0.5"):
        with pytest.raises(SystemExit, match="unknown arm"):
            parse_arm(bad)


def _record_starts(monkeypatch, abab):
    """After ``_FakeEngines.install``: every engine's cell and every worker
    call, in order."""
    import vllm.v1.engine.llm_engine as llm_engine

    fake_start = llm_engine.LLMEngine.from_engine_args
    cells, calls = [], []

    def from_engine_args(cell, stat_loggers=None):
        cells.append(cell)
        return fake_start(cell, stat_loggers)

    monkeypatch.setattr(llm_engine.LLMEngine, "from_engine_args",
                        staticmethod(from_engine_args))
    monkeypatch.setattr(abab, "call_rpc", lambda engine, m: calls.append((engine, m)))
    return cells, calls


def test_labelled_arms_get_their_engine_options_and_worker_call(tmp_path, monkeypatch):
    """``<arm>+<label>``: the same arm twice in one run, each label with its
    engine overrides and worker call (the MRV2 sync hand-off A/B)."""
    abab, out, args = _abab(tmp_path, "sd4,dsl6+handoff,dsl6+nohandoff")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    cells, calls = _record_starts(monkeypatch, abab)
    options = {"handoff": {"engine": {"async_scheduling": False}},
               "nohandoff": {"engine": {"async_scheduling": False,
                                        "worker_extension_cls": "ab_hooks.SyncHandOffToggle"},
                             "rpc": "dsl_disable_sync_hand_off"}}
    assert abab.main(args + ["--engine", '{"seed": 3}',
                             "--arm-options", json.dumps(options)]) == 0
    engines = sorted((c["k"], json.dumps(c["engine"], sort_keys=True)) for c in cells)
    assert engines == sorted([
        (4, '{"seed": 3}'),
        (6, '{"async_scheduling": false, "seed": 3}'),
        (6, '{"async_scheduling": false, "seed": 3, '
            '"worker_extension_cls": "ab_hooks.SyncHandOffToggle"}')])
    assert calls == [("dsl6", "dsl_disable_sync_hand_off")]
    data = json.loads(out.read_text())
    assert data["arms"] == ["sd4", "dsl6+handoff", "dsl6+nohandoff"]
    # ab_hooks is importable by the spawned engine cores.
    assert str(BENCH) in os.environ["PYTHONPATH"].split(os.pathsep)


def test_a_labelled_bystander_gets_its_options_and_worker_call(tmp_path, monkeypatch):
    """``--bystanders dsl6+hostloop``: a bystander's label takes its engine
    overrides and worker call from ``--arm-options`` as an arm's does."""
    abab, out, args = _abab(tmp_path, "sd4,sd3", conc="1")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    cells, calls = _record_starts(monkeypatch, abab)
    options = {"hostloop": {"engine": {"worker_extension_cls": "ab_hooks.DeviceLoopOff"},
                            "rpc": "dsl_close_device_loops"}}
    assert abab.main(args + ["--bystanders", "dsl6+hostloop/dsl6",
                             "--arm-options", json.dumps(options)]) == 0
    assert calls == [("dsl6", "dsl_close_device_loops")]
    assert [c["engine"] for c in cells[2:]] == [
        {"worker_extension_cls": "ab_hooks.DeviceLoopOff"}, {}]
    data = json.loads(out.read_text())
    assert data["bystanders"] == [[], ["dsl6+hostloop"], ["dsl6+hostloop", "dsl6"]]


def test_an_arms_rpc_list_is_called_in_order(tmp_path, monkeypatch):
    """``"rpc": [m1, m2]``: each worker call in turn, once the engine is up."""
    abab, out, args = _abab(tmp_path, "sd4,dsl6+two", conc="1")
    _FakeEngines().install(monkeypatch, abab)
    cells, calls = _record_starts(monkeypatch, abab)
    options = {"two": {"rpc": ["dsl_served_keeps_width", "host_timer_on"]}}
    assert abab.main(args + ["--arm-options", json.dumps(options)]) == 0
    assert calls == [("dsl6", "dsl_served_keeps_width"), ("dsl6", "host_timer_on")]


@pytest.mark.parametrize("options,match", [
    ("{}", "no entry for label 'x'"),
    ('{"x": {}, "y": {}}', "label 'y' is not used"),
    ('{"x": {"rpcs": "m"}}', "takes only 'engine'"),
    ('{"x": {"probe": 3}}', "x'.probe must be a method name"),
    ('{"x": {"rpc": 3}}', "x'.rpc must be a method name or a list"),
    ('{"x": {"rpc": []}}', "x'.rpc must be a method name or a list"),
    ('{"x": {"rpc": ["a", 1]}}', "x'.rpc must be a method name or a list"),
    ('{"x": {"engine": []}}', "x'.engine must be an object"),
    ('{"x": {"env": {"VLLM_USE_V2_MODEL_RUNNER": 0}}}', "x'.env must be an object of strings"),
    ('{"x": {"env": ["A=1"]}}', "x'.env must be an object of strings"),
    ("[", "not JSON"),
])
def test_arm_options_errors_name_the_field(options, match):
    import abab
    from profile_step import parse_arm

    with pytest.raises(SystemExit, match=match):
        abab.parse_arm_options(options, [parse_arm("sd4"), parse_arm("dsl6+x")])


def test_an_arm_label_keeps_the_arm_and_must_be_a_word():
    from profile_step import parse_arm

    arm = parse_arm("dsl4t0.5@1-8:4+nohandoff")
    assert (arm["name"], arm["k"], arm["tau"], arm["label"]) == (
        "dsl4t0.5@1-8:4+nohandoff", 4, 0.5, "nohandoff")
    assert arm["schedule"] == [[1, 8, 4]] and parse_arm("sd3")["label"] is None
    for bad in ("dsl4+", "dsl4+a-b", "dsl4+a+b"):
        with pytest.raises(SystemExit, match="label"):
            parse_arm(bad)


def test_sync_hand_off_toggle():
    import ab_hooks

    class Worker(ab_hooks.SyncHandOffToggle):
        def __init__(self, hand_off):
            self.model_runner = types.SimpleNamespace(
                hand_off_num_drafted=hand_off, sync_drafted_counts=object())

    on = Worker(True)
    assert on.dsl_disable_sync_hand_off() is True
    assert on.model_runner.hand_off_num_drafted is False
    assert on.model_runner.sync_drafted_counts is None
    # Nothing to turn off (async scheduling): False, so abab drops the arm.
    assert Worker(False).dsl_disable_sync_hand_off() is False


def test_first_pass_eager_toggle():
    import ab_hooks

    mode = lambda name: types.SimpleNamespace(name=name)  # noqa: E731

    class Speculator:
        def __init__(self, mixed):
            self.prefill_cudagraph_manager = types.SimpleNamespace(
                cudagraph_mode=types.SimpleNamespace(mixed_mode=lambda: mode(mixed)))
            self.calls = []

        def _dispatch_prefill(self, batch, num_reqs, eager, k):
            self.calls.append(eager)
            name = "NONE" if eager else ("FULL" if batch == "uniform" else "PIECEWISE")
            return types.SimpleNamespace(cg_mode=mode(name))

    class Worker(ab_hooks.FirstPassEagerToggle):
        def __init__(self, speculator):
            self.model_runner = types.SimpleNamespace(speculator=speculator)

    spec = Speculator("PIECEWISE")
    assert Worker(spec).draft_first_pass_eager_on_mixed_batches() is True
    # A mixed batch is dispatched again as a profile run would be: eager.
    assert spec._dispatch_prefill("mixed", 2, False, 4).cg_mode.name == "NONE"
    assert spec.calls == [False, True]
    # A uniform batch keeps its FULL graph.
    assert spec._dispatch_prefill("uniform", 2, False, 4).cg_mode.name == "FULL"
    # Nothing to turn off: no PIECEWISE first pass, or no draft model.
    assert Worker(Speculator("NONE")).draft_first_pass_eager_on_mixed_batches() is False
    assert Worker(None).draft_first_pass_eager_on_mixed_batches() is False


def test_device_loop_off():
    """The hook frees the speculator's loops through the speculator's own
    ``_close_decode_loops``, after which ``propose`` finds no loop for any
    batch size and the host drives the steps."""
    import ab_hooks

    from vllm.v1.worker.gpu.spec_decode.standalone_ar.speculator import (
        StandaloneARSpeculator,
    )

    class Loop:
        closed = 0

        def close(self):
            Loop.closed += 1

    class Worker(ab_hooks.DeviceLoopOff):
        def __init__(self, loops):
            speculator = types.SimpleNamespace(decode_loops=loops)
            speculator._close_decode_loops = types.MethodType(
                StandaloneARSpeculator._close_decode_loops, speculator)
            self.model_runner = types.SimpleNamespace(speculator=speculator)

    worker = Worker({"b8": Loop(), "b16": Loop()})
    assert worker.dsl_close_device_loops() is True
    assert Loop.closed == 2 and worker.model_runner.speculator.decode_loops == {}
    # Nothing to free: no loops (again), or no speculator at all.
    assert worker.dsl_close_device_loops() is False
    assert Worker({}).dsl_close_device_loops() is False
    bare = ab_hooks.DeviceLoopOff()
    bare.model_runner = types.SimpleNamespace(speculator=None)
    assert bare.dsl_close_device_loops() is False


def test_graph_launches_off_frees_the_graphs_dsl_would_replay():
    """On the series' real exit state and counts (no graphs) the hook says
    so; where the wip left graphs, it frees them so both launch again."""
    import ab_hooks
    import torch
    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit
    from vllm.v1.worker.gpu.spec_decode.drafted_token_counts import (
        DraftedTokenCounts,
    )

    class Worker(ab_hooks.GraphLaunchesOff):
        def __init__(self, exit_state, counts):
            self.model_runner = types.SimpleNamespace(
                speculator=types.SimpleNamespace(confidence_exit=exit_state),
                drafted_token_counts=counts)

    cpu = torch.device("cpu")
    series = Worker(DraftConfidenceExit(0.3, 4, cpu), DraftedTokenCounts(4, cpu))
    assert series.dsl_launch_every_step() is False
    assert Worker(None, None).dsl_launch_every_step() is False
    # The wip's LaunchGraphs: truthy while it holds graphs, emptied by clear().
    exit_state, counts = DraftConfidenceExit(0.3, 4, cpu), DraftedTokenCounts(4, cpu)
    exit_state._begin_graphs = {0: "graph K=0", 4: "graph K=4"}
    counts._record_graphs = {(4, 1234): "graph K=4 with forwards"}
    worker = Worker(exit_state, counts)
    assert worker.dsl_launch_every_step() is True
    assert exit_state._begin_graphs == {} and counts._record_graphs == {}
    assert worker.dsl_launch_every_step() is False
    # Only the record's graphs (a speculator whose begin has none).
    counts._record_graphs = {(1, 0): "graph K=1"}
    assert worker.dsl_launch_every_step() is True
    assert counts._record_graphs == {}
    assert issubclass(ab_hooks.GraphLaunchesOffTimer, ab_hooks.HostTimer)


def test_dsl_arms_can_start_alone_after_the_others():
    """--dsl-starts-alone: the non-DSL engines start side by side, then each
    DSL engine alone, so its start-up step timing has the GPU to itself."""
    import threading

    import abab
    from profile_step import parse_arm

    arms = [parse_arm(a) for a in ("sd3", "dsl4", "target", "dsl8", "sd4")]
    running: set[str] = set()
    seen: dict[str, set[str]] = {}
    lock = threading.Lock()
    gate = threading.Barrier(3, timeout=10)

    def start(arm):
        with lock:
            running.add(arm["name"])
        if not arm["dynamic"]:
            gate.wait()  # the three non-DSL engines are up at the same time
        with lock:
            seen[arm["name"]] = set(running)
            running.discard(arm["name"])
        return arm["name"]

    assert abab.start_engines(arms, start, True) == ["sd3", "dsl4", "target", "dsl8", "sd4"]
    # The barrier let the three non-DSL engines through together; each DSL
    # engine then ran with nothing else starting.
    assert seen["dsl4"] == {"dsl4"} and seen["dsl8"] == {"dsl8"}
    # Without the flag every engine starts at once (the DSL ones join the gate).
    gate = threading.Barrier(5, timeout=10)

    def start_all(arm):
        gate.wait()
        return arm["name"]

    assert abab.start_engines(arms, start_all, False) == [a["name"] for a in arms]


def test_an_arm_with_an_environment_starts_alone_in_it(monkeypatch):
    """--arm-options' env (e.g. the V1 runner): the engine's config and its
    spawned engine core read the process environment, so that arm starts
    after the others, alone, with its variables set, and they are restored
    for the next."""
    import abab
    from profile_step import parse_arm

    monkeypatch.setenv("VLLM_USE_V2_MODEL_RUNNER", "1")
    monkeypatch.delenv("DSL_AB_ONLY_V1", raising=False)
    arms = [parse_arm(a) for a in ("sd3+v1", "sd3", "target")]
    arms[0]["env"] = {"VLLM_USE_V2_MODEL_RUNNER": "0", "DSL_AB_ONLY_V1": "1"}
    seen = {}

    def start(arm):
        seen[arm["name"]] = (os.environ.get("VLLM_USE_V2_MODEL_RUNNER"),
                             os.environ.get("DSL_AB_ONLY_V1"), len(seen))
        return arm["name"]

    assert abab.start_engines(arms, start, False) == ["sd3+v1", "sd3", "target"]
    assert seen["sd3+v1"] == ("0", "1", 2)  # last, alone, in its environment
    assert {seen["sd3"][:2], seen["target"][:2]} == {("1", None)}
    assert os.environ["VLLM_USE_V2_MODEL_RUNNER"] == "1"
    assert "DSL_AB_ONLY_V1" not in os.environ


def test_the_step_line_sets_the_median_step_beside_the_mean_period():
    """What a start-up table prices (the median engine step) beside what a
    token sees (TPOT x tokens per step, prefill-carrying steps included);
    nothing without step records."""
    import abab

    rounds = [{"n": 100, "p50": 10.0}, {"n": 90, "p50": 10.4}, {"n": 80, "p50": 9.8}]
    text = abab.step_line(rounds, [6.0, 6.2, 5.8], [2.0, 2.2, 2.1])
    assert text == ("engine step median 10.00 ms (4.76 ms a token), "
                    "TPOT x tokens/step 12.60 ms")
    assert abab.step_line([None, None], [6.0, 6.0], [2.0, 2.0]) is None
    assert abab.step_line([{"n": 0}], [6.0], [2.0]) is None
    split = [{**r, "decode": {"n": 90, "p50": r["p50"] - 1, "p90": 11.0},
              "prefill": {"n": 10, "p50": 30.0, "time_share": share}}
             for r, share in zip(rounds, (0.2, 0.3, 0.25))]
    assert abab.step_line(split, [6.0, 6.2, 5.8], [2.0, 2.2, 2.1]) == (
        text + "; decode-only steps median 9.00 ms (p90 11.00), steps giving a "
        "first token 25% of the time")
    timed = [{**r, "long_share": 0.4, "core": {"n": 90, "p50": 9.5, "long_share": share},
              "gc": {"ms": ms, "max_ms": ms / 2, "collections": [5, 1, 0]}}
             for r, share, ms in zip(split, (0.1, 0.2, 0.3), (10.0, 20.0, 60.0))]
    assert abab.step_line(timed, [6.0, 6.2, 5.8], [2.0, 2.2, 2.1]).endswith(
        "; core output period median 9.50 ms, long share 20% (client 40%); "
        "client GC 30 ms a round (longest 30)")


def test_step_quantiles_tell_a_stall_from_a_slow_round():
    from cell import step_quantiles

    assert step_quantiles([]) == {"n": 0}
    even = step_quantiles([10.0] * 100)
    assert even["p50"] == even["p99"] == even["max"] == 10.0
    assert even["long_share"] == 0.0
    # One stall of 500 ms among 99 steps of 10 ms: the median does not move,
    # the longest step and the share of time in long steps do.
    stall = step_quantiles([10.0] * 99 + [500.0])
    assert stall["p50"] == 10.0 and stall["max"] == 500.0
    assert stall["long_share"] == pytest.approx(500 / 1490)
    slow = step_quantiles([13.0] * 100)
    assert slow["p50"] == 13.0 and slow["long_share"] == 0.0
    assert "decode" not in slow and "prefill" not in slow


def test_step_quantiles_split_prefill_steps_from_decode_steps():
    from cell import step_quantiles

    # 90 decode steps of 10 ms (one stalled at 40), 10 steps of 30 ms that
    # gave requests their first tokens.
    times = [10.0] * 89 + [40.0] + [30.0] * 10
    firsts = [0] * 90 + [2] * 10
    q = step_quantiles(times, firsts)
    assert q["n"] == 100 and q["long_share"] == pytest.approx(340 / 1230)
    assert q["prefill"] == {"n": 10, "p50": 30.0,
                            "time_share": pytest.approx(300 / 1230)}
    assert q["decode"] == {"n": 90, "p50": 10.0, "p90": 10.0,
                           "long_share": pytest.approx(40 / 930)}
    assert step_quantiles([10.0], [0])["prefill"] == {
        "n": 0, "p50": None, "time_share": 0.0}
    assert step_quantiles([10.0], [1])["decode"] == {"n": 0}
    with pytest.raises(ValueError, match="2 first-token counts for 1 steps"):
        step_quantiles([10.0], [0, 1])


def test_step_quantiles_put_the_clients_collections_in_the_long_steps():
    from cell import LONGEST_STEPS, step_quantiles

    # 20 steps of 10 ms; the one at 50 ms held a 35 ms collection, the one
    # at 30 ms none; a 1 ms collection in an ordinary step.
    times = [10.0] * 20
    times[5], times[12] = 50.0, 30.0
    gc_ms = [0.0] * 20
    gc_ms[5], gc_ms[3] = 35.0, 1.0
    at = [10.0 * i for i in range(20)]
    q = step_quantiles(times, [0] * 20, gc_ms, at)
    assert q["gc_ms"] == 36.0 and q["gc_ms_in_long"] == 35.0
    assert q["longest"] == [[50.0, 50.0, 0, 35.0], [120.0, 30.0, 0, 0.0]]
    # Only the longest few, in time order.
    many = step_quantiles([10.0] * 40 + [30.0 + i for i in range(30)], None,
                          [0.0] * 70, [float(i) for i in range(70)])
    assert [s[0] for s in many["longest"]] == [float(i) for i in
                                               range(70 - LONGEST_STEPS, 70)]
    assert many["longest"][0][2] is None
    assert "longest" not in step_quantiles(times, None, gc_ms)
    with pytest.raises(ValueError, match="19 collection times for 20 steps"):
        step_quantiles(times, None, gc_ms[:19])


def test_gc_clock_times_this_processs_collections():
    import gc

    from cell import GcClock

    with GcClock() as clock:
        gc.collect()
        gc.collect(0)
    seen = list(clock.collections)
    assert seen[0] >= 1 and seen[2] >= 1 and clock.ms > 0
    assert clock.max_ms <= clock.ms
    n = len(gc.callbacks)
    gc.collect()
    assert clock.collections == seen and len(gc.callbacks) == n
    assert set(clock.summary()) == {"ms", "max_ms", "collections"}


def test_spec_counters_keep_the_engine_cores_output_period():
    from types import SimpleNamespace

    import abab

    counters = abab.SpecCounters()
    # A step with two decode requests 12 and 14 ms since their last outputs,
    # a step that only gave first tokens (no inter-token latencies), and a
    # record without iteration stats.
    counters.record(SimpleNamespace(spec_decoding_stats=None),
                    SimpleNamespace(inter_token_latencies_iter=[0.012, 0.014]))
    counters.record(SimpleNamespace(spec_decoding_stats=None),
                    SimpleNamespace(inter_token_latencies_iter=[]))
    counters.record(SimpleNamespace(spec_decoding_stats=None))
    assert counters.core_period_ms == [pytest.approx(13.0)]
    assert counters.totals["steps"] == 3
    rec = abab.with_core_periods({"n": 2, "p50": 10.0, "long_share": 0.5},
                                 [10.0, 10.0, 40.0], {"ms": 3.0, "max_ms": 2.0,
                                                      "collections": [3, 0, 0]})
    assert rec["core"]["p50"] == 10.0
    assert rec["core"]["long_share"] == pytest.approx(40 / 60)
    assert rec["gc"]["ms"] == 3.0
    assert rec["core_ms"] == [10.0, 10.0, 40.0]
    assert abab.with_core_periods(None, [10.0], None) is None
    assert "core" not in abab.with_core_periods({"n": 0}, [], None)


def test_spec_rates_price_a_fixed_k_arms_forwards_and_say_so():
    import abab

    t = dict.fromkeys(("steps", "steps_with_drafts") + abab.SPEC_FIELDS, 0)
    t.update(steps=10, steps_with_drafts=8, num_draft_forwards=13)
    assert abab.spec_rates(t, False, 3)["draft_forwards_per_step"] == pytest.approx(2.4)
    assert abab.spec_rates(t, True, 4)["draft_forwards_per_step"] == pytest.approx(1.3)
    assert abab.spec_rates(t, True, 4)["draft_forwards_source"] == "counted"
    target = abab.spec_rates(t, False, 0)
    assert (target["draft_forwards_per_step"], target["draft_forwards_source"]) == (
        0.0, "no drafter")
    # Totals from before steps_with_drafts: not known, not guessed.
    old = {k: v for k, v in t.items() if k != "steps_with_drafts"}
    assert abab.spec_rates(old, False, 3)["draft_forwards_per_step"] is None
    assert abab.spec_rates(t, False, None)["draft_forwards_per_step"] is None


def test_spec_counters_record_each_engine_steps_batch_graph_and_drafts():
    """Per engine step: the requests running, the target's CUDA graph mode
    and padding (when the engine reports them), drafted tokens and draft
    forwards; sliced per round as columns."""
    from types import SimpleNamespace

    import abab

    counters = abab.SpecCounters()
    graph = SimpleNamespace(num_unpadded_tokens=21, num_padded_tokens=24,
                            num_paddings=3, runtime_mode="FULL")
    spec = SimpleNamespace(num_draft_tokens=14, num_draft_forwards=2,
                           **{f: 0 for f in abab.SPEC_FIELDS if f not in (
                               "num_draft_tokens", "num_draft_forwards")})
    counters.record(SimpleNamespace(num_running_reqs=8, spec_decoding_stats=None,
                                    cudagraph_stats=None))
    start = len(counters.engine_steps)
    counters.record(SimpleNamespace(num_running_reqs=7, spec_decoding_stats=spec,
                                    cudagraph_stats=graph))
    counters.record(None)  # not an engine step
    counters.record(SimpleNamespace(num_running_reqs=6, spec_decoding_stats=None,
                                    cudagraph_stats=None))
    assert counters.engine_steps_since(start) == {
        "running": [7, 6], "graph_mode": ["FULL", None], "padded_tokens": [24, None],
        "drafted": [14, None], "draft_forwards": [2, None]}
    assert counters.totals["steps"] == 3 and counters.totals["num_draft_tokens"] == 14
    assert counters.totals["steps_with_drafts"] == 1
    rec = abab.with_core_periods({"n": 1}, [], None, None,
                                 counters.engine_steps_since(start))
    assert rec["engine_steps"]["running"] == [7, 6]


class _ThreeTokenEngine:
    """A stand-in engine for ``cell.run_workload``: each step gives every
    running request one token, and a request finishes with its third. It
    keeps how many requests were in flight when each was added."""

    def __init__(self):
        self.running: dict[str, int] = {}
        self.at_add: list[int] = []

    def add_request(self, rid, prompt, params):
        self.at_add.append(len(self.running))
        self.running[rid] = 0

    def step(self):
        from types import SimpleNamespace

        outs = []
        for rid in list(self.running):
            self.running[rid] += 1
            n = self.running[rid]
            outs.append(SimpleNamespace(
                request_id=rid, finished=n == 3,
                outputs=[SimpleNamespace(token_ids=list(range(n)))]))
            if n == 3:
                del self.running[rid]
        return outs

    def get_metrics(self):
        return []


def test_run_workload_counts_the_steps_that_give_a_first_token():
    """A stand-in engine: each step gives every running request one token;
    a request added before a step gets its first token from that step."""

    from cell import run_workload

    res = run_workload(_ThreeTokenEngine(), [[1, 2]], 2, 4, 3, None, "t")
    # Requests 0-1 start at step 1, 2-3 at step 4 (after 0-1 finish at 3).
    q = res["step_ms"]
    assert q["n"] == 6 and q["prefill"]["n"] == 2 and q["decode"]["n"] == 4
    assert len(res["requests"]) == 4
    assert q["gc_ms"] >= 0 and set(res["gc"]) == {"ms", "max_ms", "collections"}
    # This host's counters over the round (HostClock, tested on its own; a
    # round this short may see no tick of /proc/stat).
    assert set(res["host"]) <= {"busy", "iowait", "steal", "cpu_wait_ms",
                                "throttled_ms", "throttled"}


def test_run_workload_gives_each_request_its_output_length():
    """A stand-in engine that finishes a request at its own ``max_tokens``:
    with ``output_lengths`` request i runs to ``lengths[i % len]`` tokens;
    without, every request runs to ``max_tokens``."""
    from types import SimpleNamespace

    from cell import run_workload

    class Engine:
        def __init__(self):
            self.running: dict[str, list[int]] = {}

        def add_request(self, rid, prompt, params):
            self.running[rid] = [0, params.max_tokens]

        def step(self):
            outs = []
            for rid, rec in list(self.running.items()):
                rec[0] += 1
                outs.append(SimpleNamespace(
                    request_id=rid, finished=rec[0] == rec[1],
                    outputs=[SimpleNamespace(token_ids=list(range(rec[0])))]))
                if rec[0] == rec[1]:
                    del self.running[rid]
            return outs

        def get_metrics(self):
            return []

    res = run_workload(Engine(), [[1, 2]], 2, 5, 4, None, "t", output_lengths=[2, 7, 3])
    assert sorted(r["num_tokens"] for r in res["requests"]) == sorted([2, 7, 3, 2, 7])
    # Requests 0 and 1 start together; 0 finishes after 2 steps and request 2
    # takes its place while 1 still runs: the first tokens no longer come in waves.
    assert res["step_ms"]["prefill"]["n"] == 4
    # Each step's record says how many requests were added just before it.
    # (r0: steps 1-2, r1: 1-7, r2: 3-5, r3: 6-7, r4: 8-14.)
    assert res["step_ms"]["trace"]["added"] == [2, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]
    assert res["step_ms"]["trace"]["firsts"] == res["step_ms"]["trace"]["added"]
    # ... and how many prompt tokens those requests brought (2 each here).
    assert res["step_ms"]["trace"]["added_tokens"] == [
        2 * a for a in res["step_ms"]["trace"]["added"]]
    # ... how many were in flight when it began and how many finished in it.
    assert res["step_ms"]["trace"]["inflight"] == [2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    assert res["step_ms"]["trace"]["finished"] == [0, 1, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1]
    assert len(res["step_ms"]["trace"]["ms"]) == res["step_ms"]["n"] == 14
    res = run_workload(Engine(), [[1, 2]], 2, 4, 4, None, "t")
    assert [r["num_tokens"] for r in res["requests"]] == [4, 4, 4, 4]
    assert res["step_ms"]["prefill"]["n"] == 2


def test_run_workload_drains_each_group_before_the_next():
    """``drain_every``: with 3 in flight allowed, 4 requests in groups of 2
    run as two waves of 2; without it the third starts at once."""

    from cell import run_workload

    engine = _ThreeTokenEngine()
    res = run_workload(engine, [[1, 2]], 3, 4, 3, None, "t", drain_every=2)
    assert engine.at_add == [0, 1, 0, 1]
    assert res["step_ms"]["trace"]["added"] == [2, 0, 0, 2, 0, 0]
    assert len(res["requests"]) == 4
    engine = _ThreeTokenEngine()
    run_workload(engine, [[1, 2]], 3, 4, 3, None, "t")
    assert engine.at_add == [0, 1, 2, 0]


def test_after_arrival_counts_the_long_steps_that_follow_an_arrival():
    from cell import ARRIVAL_WINDOW, step_quantiles

    assert ARRIVAL_WINDOW == 3
    # Median 10 ms: steps 2 (30 ms, two steps after an arrival) and 6 (25 ms,
    # four after the last arrival) are long; steps 0-2 follow an arrival.
    got = step_quantiles([10, 10, 30, 10, 10, 10, 25, 10],
                         added=[1, 0, 0, 0, 0, 0, 0, 0])["after_arrival"]
    assert got == {"long": 2, "long_ms": 55, "long_near_arrival": 1,
                   "long_ms_near_arrival": 30, "steps_near_arrival": 3}
    # An arrival before step 4 as well brings step 6 into its window.
    got = step_quantiles([10, 10, 30, 10, 10, 10, 25, 10],
                         added=[1, 0, 0, 0, 1, 0, 0, 0])["after_arrival"]
    assert got["long_near_arrival"] == 2 and got["steps_near_arrival"] == 6
    with pytest.raises(ValueError, match="2 arrival counts for 3 steps"):
        step_quantiles([1, 2, 3], added=[0, 0])


def test_step_line_reports_the_long_steps_near_an_arrival():
    import abab

    rounds = [{"n": 8, "p50": 10.0,
               "after_arrival": {"long": 2, "long_ms": 55.0, "long_near_arrival": 1,
                                 "long_ms_near_arrival": 30.0,
                                 "steps_near_arrival": 3}},
              {"n": 8, "p50": 10.0,
               "after_arrival": {"long": 2, "long_ms": 45.0, "long_near_arrival": 2,
                                 "long_ms_near_arrival": 45.0,
                                 "steps_near_arrival": 5}}]
    text = abab.step_line(rounds, [5.0, 5.0], [2.0, 2.0])
    assert ("long steps within 3 of an arrival 3 of 4 (75% of their time; "
            "such steps 50% of all)") in text


def test_run_workload_puts_a_collection_in_the_step_that_ran_it():
    """A stand-in engine whose fourth step collects (as a client's collector
    would, inside ``engine.step()``) and sleeps: that step is the long one,
    and the collection is counted in it."""
    import gc
    import time
    from types import SimpleNamespace

    from cell import run_workload

    class Engine:
        def __init__(self):
            self.running: dict[str, int] = {}
            self.steps = 0

        def add_request(self, rid, prompt, params):
            self.running[rid] = 0

        def step(self):
            self.steps += 1
            if self.steps == 4:
                gc.collect()
                time.sleep(0.3)
            else:
                time.sleep(0.002)
            outs = []
            for rid in list(self.running):
                self.running[rid] += 1
                n = self.running[rid]
                outs.append(SimpleNamespace(
                    request_id=rid, finished=n == 6,
                    outputs=[SimpleNamespace(token_ids=list(range(n)))]))
                if n == 6:
                    del self.running[rid]
            return outs

        def get_metrics(self):
            return []

    t_before = time.monotonic()
    res = run_workload(Engine(), [[1, 2]], 1, 1, 6, None, "t")
    t_after = time.monotonic()
    q = res["step_ms"]
    # The steps' origin is on the clock gc_trace's per-process traces read.
    assert t_before <= q["start_monotonic_s"] <= t_after - res["wall_s"]
    assert q["n"] == 6 and res["gc"]["collections"][2] >= 1
    # On a loaded machine other steps may also run past twice the median;
    # the collecting step is the longest one and holds the collection.
    start, ms, firsts, gc_in = max(q["longest"], key=lambda s: s[3])
    assert ms >= 300 and gc_in > 0 and firsts == 0 and start > 0
    assert ms == max(s[1] for s in q["longest"])
    assert q["gc_ms_in_long"] >= gc_in


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_host_clock_reads_the_kernels_counters(tmp_path):
    """CPU time by kind from /proc/stat, the PSI CPU wait and the cgroup's
    throttling, as deltas over the round; shares of all CPU time."""
    from cell import HostClock

    stat = tmp_path / "stat"
    psi = tmp_path / "psi"
    cg = tmp_path / "cpu.stat"
    clock = HostClock(str(stat), str(psi), str(cg))
    # user nice system idle iowait irq softirq steal guest guest_nice
    _write(stat, "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    _write(psi, "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=500\n")
    _write(cg, "usage_usec 10\nnr_periods 5\nnr_throttled 2\nthrottled_usec 3000\n")
    with clock:
        _write(stat, "cpu  160 0 70 1000 30 0 0 140 0 0\n")
        _write(psi, "some avg10=1.00 avg60=0.00 avg300=0.00 total=26000\n")
        _write(cg, "usage_usec 90\nnr_periods 9\nnr_throttled 5\nthrottled_usec 18000\n")
    s = clock.summary()
    # Deltas: user 60, system 20, idle 200, iowait 20, steal 100: total 400.
    assert s["busy"] == pytest.approx(180 / 400)
    assert s["iowait"] == pytest.approx(20 / 400)
    assert s["steal"] == pytest.approx(100 / 400)
    assert s["cpu_wait_ms"] == pytest.approx(25.0)
    assert s["throttled_ms"] == pytest.approx(15.0) and s["throttled"] == 3


def test_host_clock_leaves_out_what_the_host_does_not_expose(tmp_path):
    from cell import HostClock

    stat = tmp_path / "stat"
    _write(stat, "cpu  1 0 1 10 0 0 0 0\n")
    clock = HostClock(str(stat), str(tmp_path / "none"), str(tmp_path / "none2"))
    with clock:
        _write(stat, "cpu  3 0 1 12 0 0 0 0\n")
    assert set(clock.summary()) == {"busy", "iowait", "steal"}
    assert clock.summary()["busy"] == pytest.approx(0.5)
    with HostClock(*(str(tmp_path / n) for n in ("a", "b", "c"))) as nothing:
        pass
    assert nothing.summary() == {}


def test_abab_reports_the_rounds_host_counters():
    import abab

    rec = abab.with_core_periods({"n": 1}, [], None, {"busy": 0.5, "steal": 0.1})
    assert rec["host"] == {"busy": 0.5, "steal": 0.1}
    assert "host" not in abab.with_core_periods({"n": 1}, [], None, {})
    text = abab.host_text([{"busy": 0.5, "steal": 0.01, "cpu_wait_ms": 10.0},
                           {"busy": 0.7, "steal": 0.03, "cpu_wait_ms": 250.0},
                           None])
    assert text == ("; host a round: CPU busy 60.0% (max 70.0), steal 2.0% (max 3.0), "
                    "CPU wait 130.0 ms (max 250.0)")
    assert abab.host_text([None, {}]) == ""


def test_step_costs_off():
    """The hook zeroes the real exit state's step costs, after which a row the
    priced rule stops (one draft step too dear for its confidence) goes on to
    its cap; without a priced rule it reports it did nothing."""
    import ab_hooks
    import torch

    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    def exit_state():
        state = DraftConfidenceExit(0.0, 2, torch.device("cpu"))
        # One row: a draft step costs as much as the rest of the step.
        state.set_step_costs([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
        return state

    def drafts(state):
        state.begin(1, 4, num_rows=2)
        tokens = torch.tensor([7, 0])
        confidence = torch.tensor([0.3, 0.0])
        for step in range(4):
            state.update_capturable(tokens, confidence, torch.tensor(step))
        return int(state.num_drafted[0])

    class Worker(ab_hooks.StepCostsOff):
        def __init__(self, state):
            self.model_runner = types.SimpleNamespace(
                speculator=types.SimpleNamespace(confidence_exit=state))

    priced = exit_state()
    assert drafts(priced) == 1  # 0.3 * 0.3 / 1.3 < 1 / 2
    worker = Worker(exit_state())
    assert worker.dsl_unprice_draft_steps() is True
    assert float(worker.model_runner.speculator.confidence_exit.step_costs.abs().sum()) == 0
    assert drafts(worker.model_runner.speculator.confidence_exit) == 4
    # Nothing priced any more, or no DSL at all.
    assert worker.dsl_unprice_draft_steps() is False
    assert Worker(None).dsl_unprice_draft_steps() is False


def test_the_v_arm_closes_the_loops_and_unprices_the_stop():
    """proxies-ab.sh's +v arm calls, in order, ``dsl_close_device_loops`` and
    ``dsl_unprice_draft_steps`` on one worker of ``LoopOffUnpricedTimer``:
    both take effect there (the speculator's own loop close, the real exit
    state's costs zeroed), as each does alone."""
    import ab_hooks
    import torch

    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit
    from vllm.v1.worker.gpu.spec_decode.standalone_ar.speculator import (
        StandaloneARSpeculator,
    )

    closed = []

    class Loop:
        def close(self):
            closed.append(self)

    state = DraftConfidenceExit(0.0, 2, torch.device("cpu"))
    state.set_step_costs([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    speculator = types.SimpleNamespace(decode_loops={"b8": Loop()}, confidence_exit=state)
    speculator._close_decode_loops = types.MethodType(
        StandaloneARSpeculator._close_decode_loops, speculator)
    worker = ab_hooks.LoopOffUnpricedTimer.__new__(ab_hooks.LoopOffUnpricedTimer)
    worker.model_runner = types.SimpleNamespace(speculator=speculator)
    assert [getattr(worker, m)() for m in ("dsl_close_device_loops",
                                          "dsl_unprice_draft_steps")] == [True, True]
    assert len(closed) == 1 and speculator.decode_loops == {}
    assert float(state.step_costs.abs().sum()) == 0
    assert callable(worker.host_timer_on) and callable(worker.host_timer_read)


def test_host_clock_off():
    """The hook stops the runner's host clock and clears the real exit
    state's host time, after which a row the host-paced rule lets draft to
    its cap stops where the GPU-priced rule does."""
    import ab_hooks
    import torch

    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    state = DraftConfidenceExit(0.0, 1, torch.device("cpu"))
    state.set_step_costs([1.0, 1.0], [1.0, 1.0])
    state.set_host_step_ms(100.0)

    def drafts():
        state.begin(1, 4)
        for step in range(4):
            state.update_capturable(torch.tensor([7]), torch.tensor([0.9]),
                                    torch.tensor(step))
        return int(state.num_drafted[0])

    speculator = types.SimpleNamespace(confidence_exit=state,
                                       set_host_step_ms=state.set_host_step_ms)

    class Worker(ab_hooks.HostClockOff):
        def __init__(self, clock):
            self.model_runner = types.SimpleNamespace(
                host_step_clock=clock, speculator=speculator)

    assert drafts() == 4
    worker = Worker(object())
    assert worker.dsl_price_gpu_time_only() is True
    assert worker.model_runner.host_step_clock is None
    assert drafts() == 1
    # Nothing to stop any more, or never a clock (sync scheduling, no DSL).
    assert worker.dsl_price_gpu_time_only() is False


def test_an_arms_probe_is_read_after_each_measured_round(tmp_path, monkeypatch):
    """``probe``: a worker method called after every measured round, its
    answers kept per point, round and worker, and shown in the summary; also
    after each warm round, its answer dropped, so that a probe answering
    since its last read gives the first measured round alone."""
    abab, out, args = _abab(tmp_path, "sd4,dsl6+clock")
    fake = _FakeEngines()
    fake.install(monkeypatch, abab)
    asked = []

    def probe(engine, method):
        # Each read comes after that arm's round has run.
        asked.append((engine, method, fake.events[-1]))
        return [1.25 * len(asked)]

    monkeypatch.setattr(abab, "probe", probe)
    options = {"clock": {"probe": "dsl_host_step_ms"}}
    assert abab.main(args + ["--warm-rounds", "1",
                             "--arm-options", json.dumps(options)]) == 0
    assert [a[2] for a in asked] == [("run", "dsl6", f"{r}c{c}")
                                     for c in (1, 8) for r in ("w0", "r0", "r1")]
    assert {a[:2] for a in asked} == {("dsl6", "dsl_host_step_ms")}
    data = json.loads(out.read_text())
    assert [p["probes"] for p in data["points"]] == [
        {"dsl6+clock": [[2.5], [3.75]]}, {"dsl6+clock": [[6.25], [7.5]]}]
    assert "dsl6+clock probe per round: 2.500 3.750" in "\n".join(data["summary"])


def test_host_step_probe_reads_the_rules_host_time_and_changes_nothing():
    import ab_hooks
    import torch

    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit

    state = DraftConfidenceExit(0.0, 1, torch.device("cpu"))
    state.set_step_costs([1.0, 1.0], [1.0, 1.0])

    class Worker(ab_hooks.HostStepProbe):
        def __init__(self, speculator):
            self.model_runner = types.SimpleNamespace(speculator=speculator)

    worker = Worker(types.SimpleNamespace(confidence_exit=state))
    assert worker.dsl_host_step_ms() == 0.0
    state.set_host_step_ms(3.5)
    assert worker.dsl_host_step_ms() == 3.5
    assert float(state.host_ms[0]) == 3.5
    # No DSL exit state (SD, target-only): nothing to read.
    assert Worker(types.SimpleNamespace(confidence_exit=None)).dsl_host_step_ms() is None
    assert Worker(None).dsl_host_step_ms() is None
    assert issubclass(ab_hooks.HostClockOff, ab_hooks.HostStepProbe)


def _busy(ms: float) -> None:
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass


class _TimedRunner:
    """A runner's step (``execute_model`` computing 3 ms, ``sample_tokens``
    sleeping 2 ms around the drafter's and the drafted counts' calls) over
    vLLM's real ``DraftedTokenCounts`` and ``HostStepClock``."""

    def __init__(self, dsl: bool):
        from vllm.v1.worker.gpu.spec_decode.drafted_token_counts import (
            DraftedTokenCounts)
        from vllm.v1.worker.gpu.spec_decode.host_step_clock import HostStepClock

        self.speculator = types.SimpleNamespace(
            propose=lambda: "drafts", _begin_confidence_exit=lambda: None)
        self.drafted_token_counts = DraftedTokenCounts(4, "cpu") if dsl else None
        self.host_step_clock = HostStepClock(window=2, every=1) if dsl else None
        self.gathered = []

    def execute_model(self, fail: bool = False):
        if self.host_step_clock is not None:
            self.host_step_clock.step_started()
        _busy(3.0)
        if fail:
            raise RuntimeError("step failed")
        return "output"

    def sample_tokens(self):
        import torch

        time.sleep(0.002)
        idx = torch.tensor([2, 0])
        if self.drafted_token_counts is not None:
            counts = self.drafted_token_counts
            self.gathered.append(counts.read(counts.snapshot().numpy(), idx.numpy()))
            self.drafted_token_counts.record(
                idx, torch.tensor([3, 1], dtype=torch.int32), 4)
        return self.speculator.propose()


class _SleepingOutput:
    """Stands in for the MRV2 runner's AsyncOutput: its wait sleeps 1 ms."""

    def get_output(self):
        time.sleep(0.001)
        return "copied"


class _Scheduler:
    """Stands in for vLLM's Scheduler: a step's two calls, the second handing
    the served width what it drafted."""

    def schedule(self):
        _busy(0.5)
        return "scheduled"

    def update_from_output(self, output):
        self._observe_draft_width(output)
        return [output]

    def _observe_draft_width(self, output):
        _busy(0.2)


@pytest.fixture
def engine_core_classes(monkeypatch):
    """The classes HostTimer wraps process-wide, as stand-ins, unwrapped
    again after the test, and its garbage collector callback removed."""
    import gc

    from vllm.v1.core.sched import scheduler
    from vllm.v1.worker.gpu import async_utils

    callbacks = list(gc.callbacks)

    monkeypatch.setattr(async_utils, "AsyncOutput", _SleepingOutput)
    monkeypatch.setattr(scheduler, "Scheduler", _Scheduler)
    for cls, attr in ((_SleepingOutput, "get_output"), (_Scheduler, "schedule"),
                      (_Scheduler, "update_from_output"),
                      (_Scheduler, "_observe_draft_width")):
        monkeypatch.setattr(cls, attr, cls.__dict__[attr])
    yield
    gc.callbacks[:] = callbacks


def test_host_timer_times_steps_and_dsl_calls_and_changes_no_result(
        engine_core_classes):
    import ab_hooks

    class Worker(ab_hooks.HostTimer):
        def __init__(self, runner):
            self.model_runner = runner

    runner = _TimedRunner(dsl=True)
    worker = Worker(runner)
    assert worker.host_timer_read() is None
    assert worker.host_timer_on() is True
    assert worker.host_timer_on() is False  # already timed: not twice
    for _ in range(5):
        assert runner.execute_model() == "output"
        assert runner.sample_tokens() == "drafts"
    # The wrapped real DraftedTokenCounts still reports what was recorded
    # (slot 2 drafted 3, slot 0 one; no forwards recorded).
    assert runner.gathered == [([0, 0], 0)] + [([3, 1], 0)] * 4
    with pytest.raises(RuntimeError, match="step failed"):
        runner.execute_model(fail=True)
    assert _SleepingOutput().get_output() == "copied"
    sched = _Scheduler()
    assert sched.schedule() == "scheduled"
    assert sched.update_from_output("out") == ["out"]
    got = worker.host_timer_read()
    assert got["steps"] == 6
    # From one step's start to the next: 3 ms computing, 2 ms asleep.
    assert 4.5 < got["step_wall_ms"] < 50
    assert 2.5 < got["step_cpu_ms"] < got["step_wall_ms"] - 1.5
    assert set(got) == {"steps", "step_wall_ms", "step_cpu_ms", "step_wall_mean_ms",
                        "step_cpu_mean_ms", "step_busy_wall_mean_ms",
                        "step_busy_cpu_mean_ms", "idle_gaps", "execute_model",
                        "sample_tokens", "propose", "begin", "record", "snapshot",
                        "clock", "wait_output", "schedule", "update_from_output",
                        "served_width", "gc0", "gc1", "gc2"}
    # The hand-off is timed inside the call that makes it.
    assert got["served_width"]["calls"] == got["update_from_output"]["calls"] == 1 / 6
    assert (got["update_from_output"]["cpu_us"] > got["served_width"]["cpu_us"]
            > 150 / 6)
    assert got["schedule"]["cpu_us"] > 400 / 6
    # A wait that sleeps uses no CPU time.
    assert got["wait_output"]["wall_us"] > 900 / 6
    assert got["wait_output"]["cpu_us"] < got["wait_output"]["wall_us"] / 4
    assert got["execute_model"]["calls"] == 1.0  # the failed step counts
    assert got["execute_model"]["cpu_us"] > 2500
    assert got["sample_tokens"]["calls"] == pytest.approx(5 / 6)
    assert got["sample_tokens"]["wall_us"] > got["sample_tokens"]["cpu_us"] + 1000
    assert got["snapshot"]["calls"] == got["record"]["calls"] == pytest.approx(5 / 6)
    assert got["begin"]["calls"] == 0.0  # wrapped, never called here
    # Each read starts afresh.
    again = worker.host_timer_read()
    assert again["steps"] == 0 and again["step_wall_ms"] is None
    assert again["snapshot"] == {"calls": None, "wall_us": None, "cpu_us": None}


def test_host_timer_times_only_the_calls_an_sd_runner_has(engine_core_classes):
    import ab_hooks

    class Worker(ab_hooks.HostTimer):
        def __init__(self, runner):
            self.model_runner = runner

    runner = _TimedRunner(dsl=False)
    runner.speculator = None  # target-only
    worker = Worker(runner)
    assert worker.host_timer_on() is True
    runner.execute_model()
    runner.execute_model()
    got = worker.host_timer_read()
    assert set(got) == {"steps", "step_wall_ms", "step_cpu_ms", "step_wall_mean_ms",
                        "step_cpu_mean_ms", "step_busy_wall_mean_ms",
                        "step_busy_cpu_mean_ms", "idle_gaps", "execute_model",
                        "sample_tokens", "wait_output", "schedule",
                        "update_from_output", "served_width", "gc0", "gc1", "gc2"}
    assert got["steps"] == 2 and got["step_cpu_ms"] > 2.5


def test_dump_loop_graphs_writes_the_smallest_and_largest_loop(
        tmp_path, monkeypatch, capsys, engine_core_classes):
    """``DSL_DUMP_LOOP_GRAPHS``: the DSL draft loops' graphs of the smallest
    and the largest captured batch size, written by the CUDA runtime's dot
    printer (a stand-in here, which records what it was asked: this machine
    has no CUDA) from each loop's own graph handle; nothing without loops."""
    import ab_hooks

    assert ab_hooks.loop_sizes_to_dump([8, 1, 64, 32]) == [1, 64]
    assert ab_hooks.loop_sizes_to_dump([4]) == [4]
    assert ab_hooks.loop_sizes_to_dump([]) == []
    asked = []

    def dot_print(graph, path, flags):
        asked.append((graph, path, flags))
        Path(path.decode()).write_text("digraph {}")
        return (0,)

    runtime = types.SimpleNamespace(
        cudaGraphDebugDotPrint=dot_print,
        cudaGraphDebugDotFlags=types.SimpleNamespace(cudaGraphDebugDotFlagsVerbose=1))
    bindings = types.ModuleType("cuda.bindings")
    bindings.runtime = runtime
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", runtime)

    class Desc:
        def __init__(self, n):
            self.num_tokens = n

    class Loop:
        def __init__(self, n):
            self._graph = f"graph-{n}"

    speculator = types.SimpleNamespace(
        decode_loops={Desc(n): Loop(n) for n in (1, 2, 64, 32)})
    out = tmp_path / "dot"
    written = ab_hooks.dump_loop_graphs(speculator, str(out))
    assert written == [str(out / "draft-loop-1.dot"), str(out / "draft-loop-64.dot")]
    assert [(g, f) for g, _, f in asked] == [("graph-1", 1), ("graph-64", 1)]
    assert (out / "draft-loop-64.dot").read_text() == "digraph {}"
    # From host_timer_on, with the variable set: the same files; a printer
    # that fails leaves the timer on.
    class Worker(ab_hooks.HostTimer):
        def __init__(self, runner):
            self.model_runner = runner

    runner = _TimedRunner(dsl=True)
    runner.speculator.decode_loops = speculator.decode_loops
    monkeypatch.setenv("DSL_DUMP_LOOP_GRAPHS", str(tmp_path / "from-timer"))
    asked.clear()
    assert Worker(runner).host_timer_on() is True
    assert [g for g, _, _ in asked] == ["graph-1", "graph-64"]
    assert (tmp_path / "from-timer" / "draft-loop-1.dot").exists()
    runtime.cudaGraphDebugDotPrint = None  # not callable: the probe fails
    runner = _TimedRunner(dsl=True)
    runner.speculator.decode_loops = speculator.decode_loops
    assert Worker(runner).host_timer_on() is True
    assert "ab_hooks: no loop graphs written" in capsys.readouterr().err
    # No device loops (SD, or DSL on the host loop): nothing is written.
    assert ab_hooks.dump_loop_graphs(types.SimpleNamespace(decode_loops={}), str(out)) == []
    assert ab_hooks.dump_loop_graphs(object(), str(out)) == []


def test_step_times_leave_idle_gaps_out_of_the_busy_mean(monkeypatch):
    """A period from one step's start to the next that waits for work (no
    request in flight) is left out of the busy means and counted; the plain
    means keep it. Periods of 4, 4, 5, 4 ms and one 40 ms gap, by a fake
    clock."""
    import ab_hooks

    starts = [0, 4, 8, 13, 17, 57]  # ms; 17 -> 57 is the gap
    clock = iter(t * 1_000_000 for t in starts)
    now = {"ns": 0}

    def wall():
        return now["ns"]

    monkeypatch.setattr(ab_hooks.time, "perf_counter_ns", wall)
    monkeypatch.setattr(ab_hooks.time, "thread_time_ns", wall)
    times = ab_hooks._StepTimes()
    holder = type("Holder", (), {"step": staticmethod(lambda: None)})()
    times.wrap(holder, "step", "execute_model", step=True)
    for _ in starts:
        now["ns"] = next(clock)
        holder.step()
    got = times.read()
    assert got["steps"] == 6 and got["idle_gaps"] == 1
    assert got["step_wall_ms"] == 4.0
    assert got["step_busy_wall_mean_ms"] == got["step_busy_cpu_mean_ms"] == 4.25
    assert got["step_wall_mean_ms"] == pytest.approx(57 / 5)
    # Nothing to read: no gaps, no means.
    again = times.read()
    assert again["idle_gaps"] == 0 and again["step_busy_wall_mean_ms"] is None


def test_step_times_time_each_garbage_collection_by_generation():
    import gc

    import ab_hooks

    times = ab_hooks._StepTimes()
    cycles = []

    def step(collect):
        for _ in range(2000):  # cyclic garbage for the collector to free
            node = {}
            node["self"] = node
        if collect is not None:
            gc.collect(collect)
        cycles.append(1)

    holder = type("Holder", (), {"step": staticmethod(step)})()
    times.wrap(holder, "step", "execute_model", step=True)
    callback = times.time_gc()
    try:
        was = gc.isenabled()
        gc.disable()  # only the explicit collections below
        try:
            holder.step(2)
            holder.step(0)
            holder.step(None)
            holder.step(1)
        finally:
            if was:
                gc.enable()
        got = times.read()
    finally:
        gc.callbacks.remove(callback)
    assert got["steps"] == 4 and len(cycles) == 4
    assert [got[f"gc{g}"]["calls"] for g in range(3)] == [0.25, 0.25, 0.25]
    # A full collection of 2000 cycles takes time, inside the step that ran it.
    assert got["gc2"]["wall_us"] > 0 and got["gc2"]["cpu_us"] > 0
    assert got["execute_model"]["wall_us"] >= got["gc2"]["wall_us"]
    # Each read starts afresh; removed, the callback counts no later collection.
    assert times.calls["gc2"] == [0, 0, 0]
    gc.collect()
    assert times.calls["gc0"] == times.calls["gc1"] == times.calls["gc2"] == [0, 0, 0]


def test_probe_text_writes_an_object_answer_per_round():
    import abab

    assert abab.probe_text([[1.23456], [None], []]) == "1.235 None None"
    assert abab.probe_text([[{"steps": 3, "gather": {"wall_us": 41.0}}],
                            [{"steps": 0}]]) == (
        "{steps: 3, gather: {wall_us: 41.000}} | {steps: 0}")


def test_host_timer_names_what_the_series_vllm_has():
    """What HostTimer wraps by name exists in the series' vLLM, so a renamed
    call fails here instead of dropping out of the timings unseen."""
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.worker.gpu.async_utils import AsyncOutput
    from vllm.v1.worker.gpu.model_runner import GPUModelRunner
    from vllm.v1.worker.gpu.spec_decode.drafted_token_counts import DraftedTokenCounts
    from vllm.v1.worker.gpu.spec_decode.host_step_clock import HostStepClock
    from vllm.v1.worker.gpu.spec_decode.speculator import DraftModelSpeculator

    for cls, attr in ((AsyncOutput, "get_output"), (Scheduler, "schedule"),
                      (Scheduler, "update_from_output"),
                      (Scheduler, "_observe_draft_width"),
                      (GPUModelRunner, "execute_model"),
                      (GPUModelRunner, "sample_tokens"),
                      (DraftModelSpeculator, "propose"),
                      (DraftModelSpeculator, "_begin_confidence_exit"),
                      (DraftedTokenCounts, "record"), (DraftedTokenCounts, "snapshot"),
                      (HostStepClock, "step_started")):
        assert callable(getattr(cls, attr, None)), f"{cls.__name__}.{attr}"


_CHILD = """
import sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
sys.stdout.write("up\\n"); sys.stdout.flush()
sys.stdin.readline()  # then start one more thread, after the pinning
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
sys.stdout.write("more\\n"); sys.stdout.flush()
time.sleep(60)
"""


def test_pin_engines_pins_every_thread_of_the_children_and_not_the_client():
    import abab

    allowed = os.sched_getaffinity(0)
    # Two CPUs at least (CI has two): one to pin to, one that shows it moved.
    assert len(allowed) >= 2, "this test needs a machine with two CPUs"
    cpu = min(allowed)
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "up\n"
        tids = [int(t) for t in os.listdir(f"/proc/{child.pid}/task")]
        assert len(tids) >= 2
        assert all(os.sched_getaffinity(t) == allowed for t in tids)
        got = abab.pin_children({cpu})
        assert got["cpus"] == [cpu] and got["processes"] >= 1 and got["refused"] == 0
        assert got["threads"] >= len(tids)
        assert all(os.sched_getaffinity(t) == {cpu} for t in tids)
        # A thread started later inherits it; the client is not pinned.
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "more\n"
        later = [int(t) for t in os.listdir(f"/proc/{child.pid}/task")]
        assert len(later) > len(tids)
        assert all(os.sched_getaffinity(t) == {cpu} for t in later)
        assert os.sched_getaffinity(0) == allowed
    finally:
        child.kill()
        child.wait()


def test_pin_engines_names_a_bad_cpu_list():
    import abab

    allowed = os.sched_getaffinity(0)
    lo, top = min(allowed), max(allowed)
    assert abab.parse_cpus(f"{top}") == {top}
    assert abab.parse_cpus(f"{lo},{top}") == {lo, top}
    assert abab.parse_cpus(f"{lo}-{lo}") == {lo}
    for bad, says in (("2-x", "is not a CPU list"), ("", "is not a CPU list"),
                      (f"{top + 1}", "names CPUs this process may not use")):
        with pytest.raises(SystemExit, match="--pin-engines: .*" + says):
            abab.parse_cpus(bad)


def test_abab_pins_the_engines_once_up_and_records_it(tmp_path, monkeypatch):
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines().install(monkeypatch, abab)
    calls = []
    monkeypatch.setattr(abab, "pin_children",
                        lambda cpus: calls.append(cpus) or {"cpus": sorted(cpus)})
    cpu = min(os.sched_getaffinity(0))
    assert abab.main(args + ["--pin-engines", str(cpu)]) == 0
    assert calls == [{cpu}]
    assert json.loads(out.read_text())["pinned"] == {"cpus": [cpu]}
    calls.clear()
    assert abab.main(args) == 0
    assert calls == [] and json.loads(out.read_text())["pinned"] is None


def test_pin_client_pins_this_process_beside_the_engines(tmp_path, monkeypatch,
                                                         capsys):
    """--pin-client: this process's threads go to its CPUs when the engines
    are pinned, recorded in "pinned"; it needs --pin-engines and no CPU of
    theirs, each refused with an error naming the flag."""
    import threading

    allowed = os.sched_getaffinity(0)
    assert len(allowed) >= 2, "this test needs a machine with two CPUs"
    lo, top = min(allowed), max(allowed)
    abab, out, args = _abab(tmp_path, "sd4,sd3")
    _FakeEngines().install(monkeypatch, abab)
    monkeypatch.setattr(abab, "pin_children", lambda cpus: {"cpus": sorted(cpus)})
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)  # a client thread to pin too
    helper.start()
    try:
        assert abab.main(args + ["--pin-engines", str(top),
                                 "--pin-client", str(lo)]) == 0
        assert os.sched_getaffinity(0) == {lo}
        assert os.sched_getaffinity(helper.native_id) == {lo}
    finally:
        os.sched_setaffinity(0, allowed)
        stop.set()
        helper.join()
    assert json.loads(out.read_text())["pinned"] == {"cpus": [top], "client_cpus": [lo]}
    for extra, says in ((["--pin-client", str(lo)], "needs --pin-engines"),
                        (["--pin-engines", str(top), "--pin-client", str(top)],
                         "are engine CPUs"),
                        (["--pin-engines", str(top), "--pin-client", f"{top + 1}"],
                         "names CPUs this process may not use")):
        capsys.readouterr()
        with pytest.raises(SystemExit) as err:
            abab.main(args + extra)
        said = f"{err.value.code} {capsys.readouterr().err}"
        assert err.value.code != 0 and "--pin-client: " in said and says in said
    with pytest.raises(SystemExit, match="--pin-client: .*may not use"):
        abab.parse_cpus(f"{top + 1}", "--pin-client")


def test_host_timer_table_reads_the_timers_answers_per_arm(
        tmp_path, engine_core_classes):
    """The reader of HostTimer's probe answers, on answers the real HostTimer
    gave: the median over rounds of each field, per arm and point."""
    import ab_hooks
    import host_timer_table

    class Worker(ab_hooks.HostTimer):
        def __init__(self, runner):
            self.model_runner = runner

    runner = _TimedRunner(dsl=True)
    worker = Worker(runner)
    assert worker.host_timer_on()
    rounds = []
    for _ in range(3):
        for _ in range(3):
            runner.execute_model()
            runner.sample_tokens()
        rounds.append([worker.host_timer_read()])
    run = {"points": [{"concurrency": 1, "probes": {"dsl4+t": rounds}},
                      {"concurrency": 8, "probes": {}}]}
    path = tmp_path / "abab.json"
    path.write_text(json.dumps(run))
    med = host_timer_table.arm_medians(rounds)
    assert med["step_cpu_ms"] == statistics.median(r[0]["step_cpu_ms"] for r in rounds)
    assert med["snapshot"]["wall_us"] == statistics.median(
        r[0]["snapshot"]["wall_us"] for r in rounds)
    # A call wrapped but never made takes no time.
    assert med["begin"] == {"wall_us": 0.0, "cpu_us": 0.0}
    text = host_timer_table.table(json.loads(path.read_text()))
    assert text.startswith("c=1\n  dsl4+t") and "c=8" not in text
    assert "execute_model " in text and "wait_output" in text
    assert host_timer_table.table({"points": []}) == (
        "no HostTimer probe answers in this run")


def test_host_timer_pair_splits_the_step_into_each_calls_own_time():
    """--pair: each call's own time (less the timed calls inside it), the
    step outside every timed call, and gc apart, as ARM less BASE per round
    (median, range), on hand-computed answers."""
    import host_timer_table

    def answer(step_ms, **wall):
        out = {"steps": 100, "step_wall_ms": step_ms - 0.2, "step_cpu_ms": step_ms,
               "step_wall_mean_ms": step_ms + 20, "step_busy_wall_mean_ms": step_ms}
        for name, us in wall.items():
            out[name] = {"calls": 1.0, "wall_us": us, "cpu_us": us}
        return out

    sd = [answer(3.0, execute_model=1000, sample_tokens=1500, propose=800,
                 schedule=100, update_from_output=100, wait_output=20, gc0=5,
                 gone=40),
          answer(4.0, execute_model=1300, sample_tokens=2000, propose=1000,
                 schedule=150, update_from_output=120, wait_output=30, gc0=5,
                 gone=40)]
    dsl = [answer(3.5, execute_model=1100, sample_tokens=1800, propose=900,
                  begin=30, record=20, gather=60, clock=15, schedule=100,
                  update_from_output=140, served_width=30, wait_output=20, gc0=9),
           answer(4.2, execute_model=1310, sample_tokens=2100, propose=1010,
                  begin=30, record=20, gather=60, clock=15, schedule=150,
                  update_from_output=150, served_width=30, wait_output=30, gc0=5)]
    own = host_timer_table.own_times(dsl[0])
    assert own["execute_model"] == 1085 and own["clock"] == 15
    assert own["sample_tokens"] == 1800 - 900 - 20 - 60 and own["propose"] == 870
    assert own["update_from_output"] == 110 and own["gc0"] == 9
    assert own[host_timer_table.OUTSIDE] == 3500 - (1100 + 1800 + 100 + 140 + 20)
    run = {"points": [{"concurrency": 1, "probes": {
        "sd4+t": [[a] for a in sd], "dsl4+t": [[a] for a in dsl]}}]}
    text = host_timer_table.paired(run, "sd4+t", "dsl4+t")
    rows = {line[:40].strip(): line[40:].split() for line in text.splitlines()[1:]}
    assert rows["step (median step)"] == ["+350", "[+200,", "+500]"]
    # A call only the base makes shows, as gone.
    assert rows["gone"] == ["-40", "[-40,", "-40]"]
    # Own times: 85 and -5 (execute_model less clock), 0 for an equal call.
    assert rows["execute_model"] == ["+40", "[-5,", "+85]"]
    # 1800 - 900 - 20 - 60 against 1500 - 800; 2100 - 1010 - 20 - 60 against 1000.
    assert rows["sample_tokens"] == ["+65", "[+10,", "+120]"]
    assert rows["begin (in propose)"] == ["+30", "[+30,", "+30]"]
    assert rows["served_width (in update_from_output)"] == ["+30", "[+30,", "+30]"]
    assert rows["schedule"] == ["+0", "[+0,", "+0]"]
    assert rows["gc0"] == ["+2", "[+0,", "+4]"]
    # Outside: 340 and 460 in the DSL arm against 240 and 360.
    outside = [3500 - 3160 - (3000 - 2760), 4200 - 3740 - (4000 - 3640)]
    assert rows[host_timer_table.OUTSIDE] == [
        f"{statistics.median(outside):+.0f}", f"[{min(outside):+.0f},",
        f"{max(outside):+.0f}]"]
    assert list(rows)[-2:] == [host_timer_table.OUTSIDE, "gc0"]
    # Without the mean busy step (answers of older runs) no outside line: a
    # median step cannot be set against mean calls, nor a mean over idle gaps.
    del dsl[0]["step_busy_wall_mean_ms"]
    assert "step_wall_mean_ms" in dsl[0]
    assert host_timer_table.OUTSIDE not in host_timer_table.own_times(dsl[0])
    assert "no HostTimer probe answers of both" in host_timer_table.paired(
        run, "sd4+t", "sd2+t")


# Cost a token by width, cap 4: width 2 the cheapest (``_serve_width``).
_CAP4_COSTS = {1: 5.1, 2: 4.7, 3: 5.0, 4: 5.4}


def _cycling_forwards():
    """A loop drafting 1, 2, 3, 1, ... forwards, at most the width
    (``_serve_width``'s ``forwards``)."""
    import itertools

    turn = itertools.count()
    return lambda w: min(w, 1 + next(turn) % 3)


def _serve_width(controller, clock, num_steps, cost_per_token, tokens, seed=0,
                 num_reqs=8, forwards=None):
    """Steps under async scheduling, as vLLM's served width tests serve them:
    the next step is placed before the previous one's output arrives; a step
    at width w takes ``cost_per_token[w] * tokens(w)`` ms (2% log-normal
    noise) and gives each request ``tokens(w)``. With ``forwards`` the output
    also reports the loop's draft forwards, ``forwards(w)``, and a quarter of
    the requests with every draft accepted. The width of every step."""
    import random

    rng = random.Random(seed)
    placed = [controller.width(num_reqs)]
    for step in range(num_steps):
        placed.append(controller.width(num_reqs))
        width = placed[step]
        clock[0] += cost_per_token[width] * tokens(width) * rng.lognormvariate(0.0, 0.02)
        if forwards is None:
            controller.observe_step(num_reqs, True, tokens(width))
        else:
            controller.observe_step(num_reqs, True, tokens(width), forwards(width), 0.25)
    return placed[:num_steps]


@pytest.mark.parametrize("keep", [False, True])
def test_served_keeps_width_keeps_the_width_it_forgets_the_evidence_of(
        keep, monkeypatch):
    """vLLM's real served width rule at one batch size (cap 4, width 2 the
    cheapest a token): it walks down to 2; then what a request gets a step
    grows by 60% (other requests), so it forgets its evidence. With no other
    batch size settled, the series (since patch 0043) starts again from the
    width it had, as ``ServedKeepsWidth`` makes it do (before 0043 it went
    back to the cap): never the cap in the steps after."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.setattr(served_width.ServedWidthController, "_forget",
                        served_width.ServedWidthController._forget)
    if keep:
        class Worker(ab_hooks.ServedKeepsWidth):
            pass

        assert Worker().dsl_served_keeps_width() is True
        assert Worker().dsl_served_keeps_width() is False  # not twice
        assert issubclass(ab_hooks.ServedKeepsWidthTimer, ab_hooks.HostTimer)
    forgot = []
    inner = served_width.ServedWidthController._forget
    monkeypatch.setattr(served_width.ServedWidthController, "_forget",
                        lambda self, size, shift: (forgot.append(size.width),
                                                   inner(self, size, shift)))
    clock = [0.0]
    controller = served_width.ServedWidthController([8], 8, 4, clock=lambda: clock[0])
    costs = _CAP4_COSTS
    _serve_width(controller, clock, 6000, costs, lambda w: 1.0 + 0.3 * w)
    assert controller.widths()[8] == 2 and forgot == []
    # The requests change: 60% more tokens a step at every width.
    placed = _serve_width(controller, clock, 400, costs, lambda w: 1.6 * (1.0 + 0.3 * w),
                          seed=1)
    assert forgot and forgot[0] == 2
    # Width 2 kept, its neighbours explored again; never the cap.
    assert 4 not in placed[:120] and placed[-120:].count(2) > 90
    if keep:
        assert controller.widths()[8] == 2
        assert 4 not in placed and {1, 3} <= set(placed)


@pytest.mark.parametrize("hook", [False, True])
def test_served_explores_until_compared_ends_the_slow_exploration(hook, monkeypatch):
    """vLLM's real served width rule at 64 requests (cap 4, width 2 the
    cheapest a token): it walks down to 2 and, as the series ships, keeps
    running one block in 16 at 1 or 3. With the hook, once both neighbours
    were compared, every step runs at 2; before that it explores as the
    series does (the walk down is the same)."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.setattr(served_width, "_EXPLORE_SLOW", served_width._EXPLORE_SLOW)
    clock = [0.0]
    controller = served_width.ServedWidthController([64], 64, 4, clock=lambda: clock[0])
    if hook:
        _install_once(controller, ab_hooks.ServedExploresUntilCompared)
    costs = _CAP4_COSTS
    placed = _serve_width(controller, clock, 6000, costs, lambda w: 1.0 + 0.5 * w,
                          num_reqs=64)
    assert controller.widths()[64] == 2
    assert {1, 3} <= set(placed[:2000])  # both neighbours compared on the way
    tail = placed[-2048:]
    if hook:
        assert set(tail) == {2}
    else:
        assert {1, 3} <= set(tail) and tail.count(2) / len(tail) > 0.9


def _core_with(controller, method="dsl_served_explores_until_compared"):
    """vLLM's ``EngineCore`` (its class, not started) whose scheduler holds
    ``controller``, and whose ``rpc`` calls the worker's ``method`` on its own
    stack, as the engine core serves ``collective_rpc`` on one GPU."""
    from vllm.v1.engine.core import EngineCore

    class Core(EngineCore):
        def __init__(self):  # no engine: only what the hook reads
            self.scheduler = types.SimpleNamespace(draft_width_controller=controller)

        def rpc(self, worker):
            return getattr(worker, method)()

    return Core()


def _install_once(controller, hook_cls, method="dsl_served_explores_until_compared"):
    """Run ``hook_cls().method`` from an engine core whose scheduler holds
    ``controller``: it installs the first time, and says False the second
    (not twice)."""
    core = _core_with(controller, method)
    worker = hook_cls()
    assert core.rpc(worker) is True
    assert core.rpc(worker) is False  # not twice


def _info_lines(monkeypatch, served_width) -> list[str]:
    """The served width rule's INFO lines from now on, formatted."""
    lines: list[str] = []
    monkeypatch.setattr(served_width.logger, "info",
                        lambda msg, *args: lines.append(msg % args))
    return lines


@pytest.mark.parametrize("hook", [False, True])
def test_served_forgets_one_request_only_keeps_larger_batch_sizes_evidence(
        hook, monkeypatch):
    """vLLM's real served width rule, cap 4, width 2 the cheapest a token:
    8 requests walk down to 2, then what a request gets a step grows by 60%.
    As the series ships, the batch size of 8 forgets its evidence and
    explores both neighbours again; with the hook it keeps its width and
    explores only one block in ``_EXPLORE_SLOW``. One request at a time still
    forgets on the same change with the hook (the case the rule was written
    for)."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.setattr(served_width.ServedWidthController, "_forget",
                        served_width.ServedWidthController._forget)
    lines = _info_lines(monkeypatch, served_width)
    clock = [0.0]
    controller = served_width.ServedWidthController([1, 8], 8, 4, clock=lambda: clock[0])
    if hook:
        _install_once(controller, ab_hooks.ServedForgetsOneRequestOnly,
                      "dsl_served_forgets_one_request_only")
        assert issubclass(ab_hooks.ServedForgetsOneRequestOnlyTimer, ab_hooks.HostTimer)
    costs = _CAP4_COSTS
    _serve_width(controller, clock, 6000, costs, lambda w: 1.0 + 0.3 * w)
    assert controller.widths()[8] == 2
    assert not any("choosing again" in line for line in lines), lines
    placed = _serve_width(controller, clock, 400, costs, lambda w: 1.6 * (1.0 + 0.3 * w),
                          seed=1)
    forgot = [line for line in lines if "batches of up to 8 get" in line]
    if hook:
        assert forgot == [] and controller.widths()[8] == 2
        assert placed.count(2) / len(placed) > 0.9
    else:
        assert forgot and {1, 3} <= set(placed[-200:])
    _serve_width(controller, clock, 6000, costs, lambda w: 1.0 + 0.3 * w, num_reqs=1)
    assert controller.widths()[1] < 4
    _serve_width(controller, clock, 2000, costs, lambda w: 1.6 * (1.0 + 0.3 * w),
                 seed=2, num_reqs=1)
    assert any("batches of up to 1 get" in line for line in lines), lines


def _explained_run(monkeypatch, hook):
    """vLLM's real served width rule at 8 requests, cap 4, width 2 the
    cheapest a token, its loop drafting 1, 2, 3, 1, ... forwards (at most the
    width): 4 narrows at once to 3, which it fills, then moves to 2 once its
    units priced one narrower say so; with ``hook`` under
    ``ServedWidthExplains``. The widths placed and the lines logged."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    cls = served_width.ServedWidthController
    for owner, name in ((served_width, "_mean_and_bound"), (cls, "_start_block"),
                        (cls, "_finish_block")):
        monkeypatch.setattr(owner, name, getattr(owner, name))
    monkeypatch.setattr(ab_hooks, "_EXPLAIN_EVERY_S", 0.0)
    lines = _info_lines(monkeypatch, served_width)
    clock = [0.0]
    controller = served_width.ServedWidthController([8], 8, 4, clock=lambda: clock[0])
    if hook:
        _install_once(controller, ab_hooks.ServedWidthExplains, "dsl_served_width_explains")
        assert issubclass(ab_hooks.ServedWidthExplainsTimer, ab_hooks.HostTimer)
    placed = _serve_width(controller, clock, 3000, _CAP4_COSTS, lambda w: 1.0 + 0.3 * w,
                          forwards=_cycling_forwards())
    return placed, lines, controller


def test_served_width_explains_each_test_and_decides_the_same(monkeypatch):
    """The hook logs every window test and the blocks behind them, and the
    rule places the same widths as without it. Each move the rule logs
    follows a test of that batch size that passes the rule's bar (mean below
    -``_MARGIN`` and bound below 0, or one narrower that the loop never
    filled); a narrower test the loop filled that does not move fails it.
    Every block summary adds up, and counts the blocks the rule started."""
    import re

    from vllm.v1.spec_decode.dynamic import served_width

    without, plain, _ = _explained_run(monkeypatch, hook=False)
    placed, lines, controller = _explained_run(monkeypatch, hook=True)
    assert placed == without
    assert not any(line.startswith("served width") for line in plain)
    assert controller.widths()[8] == 2
    test = re.compile(r"served width test: batch size 8 at (\d) vs (\d), (\d+) units, "
                      r"mean ([-+][\d.]+), bound ([-+][\d.]+) (paired|narrower: never "
                      r"filled (True|False), drafted at most (\d))")
    moves, last, narrower = 0, None, set()
    saved = re.compile(r", saves ([-\d.]+)% of the time, loses ([-\d.]+)% of the tokens$")
    priced_lines = 0
    for line in lines:
        m = test.match(line)
        if m:
            last = m
            if m[6] != "paired":
                narrower.add(m[7])
                # Every step gives a request 1 + 0.3 w tokens, a quarter of
                # them all accepted: one narrower loses 0.25 of a token a
                # step of those, and saves some of the time.
                priced = saved.search(line)
                assert priced, line
                width = int(m[1])
                assert float(priced[2]) == pytest.approx(25 / (1 + 0.3 * width), abs=0.051), line
                assert 0 <= float(priced[1]) < 100, line
                priced_lines += 1
            continue
        if "drafts for up to 8 requests (from" in line:
            moves += 1
            assert last is not None, line
            passes = float(last[4]) < -served_width._MARGIN and float(last[5]) < 0
            assert passes or last[7] == "True", (last[0], line)
            last = None
        elif last is not None and last[7] == "False":
            assert not (float(last[4]) < -served_width._MARGIN and float(last[5]) < 0), last[0]
    assert moves == 2 and narrower == {"True", "False"} and priced_lines, lines
    blocks = re.compile(r"served width blocks: 8 rows at \d: started (\d+), finished (\d+), "
                        r"compared (\d+) \((\d+) explored\), too few measured (\d+), "
                        r"stale (\d+)$")
    started = 0
    for line in lines:
        if line.startswith("served width blocks"):
            c = [int(x) for x in blocks.match(line).groups()]
            assert c[1] == 1 and c[1] == c[2] + c[4] + c[5] and c[3] <= c[2], line
            started += c[0]
    size = controller._state[0]
    assert 0 <= size.blocks - started <= 2


def _slot_first_variant(monkeypatch):
    """vLLM's served width module with the one line that
    ``ServedPricesSlotFirst`` changes edited in its source (as session 66's
    ``benchmarks/results/2026-12-07-cpu-s66-cap8-life/sim.sh`` does, plus
    session 67's exemption of a width the loop never filled, as in
    ``benchmarks/results/2026-12-07-s67-plan/wip-slot-first.patch``), loaded
    apart from the real one."""
    from vllm.v1.spec_decode.dynamic import served_width

    source = Path(served_width.__file__).read_text()
    old = "        if size.narrower.ratios and size.width > 1:\n"
    assert source.count(old) == 1
    source = source.replace(old, "        if size.narrower.ratios and size.width > 1 and ("
                                 "size.last_slot is not None"
                                 " or size.narrower.widest < size.width):\n")
    module = types.ModuleType("served_width_slot_first")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(source, module.__name__, "exec"), module.__dict__)
    return module


def _slot_first_run(module, hook=False, monkeypatch=None):
    """Cap 4 at 8 requests and at 32, width 2 the cheapest a token, the loop
    drafting 1, 2, 3, 1, ... forwards: the widths placed, and the controller."""
    import ab_hooks

    clock = [0.0]
    controller = module.ServedWidthController([8, 32], 32, 4, clock=lambda: clock[0])
    if hook:
        cls = module.ServedWidthController
        monkeypatch.setattr(cls, "_start_block", cls._start_block)
        _install_once(controller, ab_hooks.ServedPricesSlotFirst,
                      "dsl_served_prices_slot_first")
    forwards = _cycling_forwards()  # one cycle across the four runs
    placed = []
    for seed, rows in enumerate((8, 32, 8, 32)):
        placed += _serve_width(controller, clock, 1500, _CAP4_COSTS, lambda w: 1.0 + 0.3 * w,
                               seed=seed, num_reqs=rows, forwards=forwards)
    return placed, controller


def test_served_prices_slot_first_is_the_one_line_variant(monkeypatch):
    """With the hook vLLM's real rule places, step for step, the widths of
    the variant that counts the narrower width as compared only once its
    slot is priced; without it the rule places others (the hook matters
    here), and both end at the cheapest width."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    variant, _ = _slot_first_run(_slot_first_variant(monkeypatch))
    series, _ = _slot_first_run(served_width)
    hooked, controller = _slot_first_run(served_width, hook=True, monkeypatch=monkeypatch)
    assert hooked == variant
    assert series != variant
    assert controller.widths() == {8: 2, 32: 2}
    timer = ab_hooks.ServedPricesSlotFirstExplainsTimer
    assert issubclass(timer, ab_hooks.ServedWidthExplains)
    assert issubclass(timer, ab_hooks.HostTimer)


def _start_up_run(monkeypatch, hook):
    """Cap 4 at 8 requests, width 2 the cheapest a token, the loop drafting
    1, 2, 3, 1, ... forwards, whose steps take no longer for it (the served
    steps price a draft step at about nothing) while start-up timed one at
    2.0: the moves (step, from, to) and the batch size's state."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.setattr(served_width._Size, "draft_step_time",
                        served_width._Size.draft_step_time)
    clock = [0.0]
    controller = served_width.ServedWidthController([8], 8, 4, clock=lambda: clock[0])
    controller.set_draft_step_ceilings({8: 2.0})
    moves = []
    move = controller._move

    def on_move(size, width, *args, **kwargs):
        moves.append((controller._steps, size.width, width))
        return move(size, width, *args, **kwargs)

    controller._move = on_move
    if hook:
        _install_once(controller, ab_hooks.ServedPricesDraftStepAtStartUp,
                      "dsl_served_prices_draft_step_at_start_up")
    _serve_width(controller, clock, 3000, _CAP4_COSTS, lambda w: 1.0 + 0.3 * w,
                 forwards=_cycling_forwards())
    return moves, controller._state[0]


def test_served_prices_draft_step_at_start_up_prices_what_start_up_timed(monkeypatch):
    """The series prices the draft step from the served steps (about
    nothing here) and narrows 3 to 2 on paired blocks; with the hook it
    prices what start-up timed (2.0), still reads the served price, and
    narrows 3 to 2 sooner, on the counterfactual. Where start-up
    overstates the served draft step, as here, that price alone moves the
    batch size on to 1, which paired blocks then undo: what an A/B of the
    hook has to rule out."""
    import ab_hooks

    series, series_size = _start_up_run(monkeypatch, hook=False)
    hooked, size = _start_up_run(monkeypatch, hook=True)
    assert series_size.last_draft_step < 0.1 and series_size.draft_step_ceiling == 2.0
    assert [m[1:] for m in series] == [(4, 3), (3, 2)]
    assert size.last_draft_step == 2.0 and size.last_draft_step_served < 0.1
    assert hooked[:2] == [series[0], (hooked[1][0], 3, 2)] and hooked[1][0] < series[1][0]
    assert (2, 1) in [m[1:] for m in hooked] and (1, 2) in [m[1:] for m in hooked]
    assert ab_hooks.ServedPricesDraftStepAtStartUp().dsl_served_prices_draft_step_at_start_up() is False
    timer = ab_hooks.ServedPricesAtStartUpExplainsTimer
    assert issubclass(timer, ab_hooks.ServedPricesSlotFirst)
    assert issubclass(timer, ab_hooks.ServedWidthExplains)
    assert issubclass(timer, ab_hooks.HostTimer)


def test_served_width_explains_refuses_where_no_engine_core_calls():
    """As ``ServedForgetsOneRequestOnly``: False where no engine core with a
    served width controller calls it, and nothing is wrapped."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    before = served_width.ServedWidthController._finish_block, served_width._mean_and_bound
    assert ab_hooks.ServedWidthExplains().dsl_served_width_explains() is False
    assert (served_width.ServedWidthController._finish_block,
            served_width._mean_and_bound) == before


def test_served_forgets_one_request_only_refuses_where_no_engine_core_calls():
    """Called where no engine core with a served width controller is on the
    stack (a worker apart from the scheduler), the hook says False, which
    stops the A/B, and changes nothing."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    before = served_width.ServedWidthController._forget
    assert ab_hooks.ServedForgetsOneRequestOnly().dsl_served_forgets_one_request_only() is False
    assert served_width.ServedWidthController._forget is before


def test_served_explores_until_compared_finds_the_controller_in_a_frozen_heap(
        monkeypatch):
    """The engine core freezes its heap after start-up (``gc.freeze()``), so
    ``gc.get_objects()`` lists neither it nor its scheduler's controller
    (session 51's run: the hook said False on the engine that had one). The
    hook finds it from the engine core that calls it; a controller that no
    calling engine core holds does not count."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.setattr(served_width, "_EXPLORE_SLOW", served_width._EXPLORE_SLOW)
    before = served_width._EXPLORE_SLOW
    controller = served_width.ServedWidthController([64], 64, 4)
    core = _core_with(controller)
    worker = ab_hooks.ServedExploresUntilCompared()
    gc.freeze()
    try:
        assert not any(o is controller for o in gc.get_objects())
        assert worker.dsl_served_explores_until_compared() is False  # no core calls
        assert served_width._EXPLORE_SLOW == before
        core.scheduler.draft_width_controller = None  # a core without one
        assert core.rpc(worker) is False
        assert served_width._EXPLORE_SLOW == before
        core.scheduler.draft_width_controller = controller
        assert core.rpc(worker) is True
        assert served_width._EXPLORE_SLOW == sys.maxsize
    finally:
        gc.unfreeze()


def test_served_explores_until_compared_refuses_a_process_without_the_controller():
    """In a process with no served width controller (a worker apart from
    the scheduler) the hook says False, which stops the A/B, and changes
    nothing."""
    code = ("import ab_hooks\n"
            "from vllm.v1.spec_decode.dynamic import served_width as s\n"
            "before = s._EXPLORE_SLOW\n"
            "print(ab_hooks.ServedExploresUntilCompared()"
            ".dsl_served_explores_until_compared(), s._EXPLORE_SLOW == before)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT / "benchmarks", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-2:] == ["False", "True"]


def _one_host_bound_request(module, seed):
    """One request on a host-bound engine (vLLM's test of the step check:
    4.3 ms a step whatever the width, each draft accepted with 0.3): the
    width of the batch size of one after 1000 steps."""
    import random

    now = [0.0]
    controller = module.ServedWidthController([1], 1, 4, clock=lambda: now[0])
    rng = random.Random(seed)
    placed = [controller.width(1)]
    for _ in range(1000):
        placed.append(controller.width(1))
        accepted = 0
        while accepted < placed[-2] and rng.random() < 0.3:
            accepted += 1
        now[0] += 4.3 * rng.lognormvariate(0.0, 0.03)
        controller.observe_step(1, True, 1.0 + accepted)
    return controller.widths()[1]


def test_served_narrows_on_tokens_turns_the_step_check_off(monkeypatch):
    """With the step check (0037) one host-bound request keeps the cap; the
    hook turns the check off class-wide, and the same steps move it to 3, as
    the series without the check did (session 41)."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width as module

    monkeypatch.setattr(module._Window, "steps_shorter", module._Window.steps_shorter)
    assert _one_host_bound_request(module, seed=32) == 4

    class Worker(ab_hooks.ServedNarrowsOnTokens):
        pass

    assert Worker().dsl_served_narrows_on_tokens() is True
    assert Worker().dsl_served_narrows_on_tokens() is False  # not twice
    assert issubclass(ab_hooks.ServedNarrowsOnTokensTimer, ab_hooks.HostTimer)
    assert _one_host_bound_request(module, seed=32) == 3


def test_served_narrows_on_tokens_says_where_there_is_no_check(monkeypatch):
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    monkeypatch.delattr(served_width._Window, "steps_shorter", raising=False)
    assert ab_hooks.ServedNarrowsOnTokens().dsl_served_narrows_on_tokens() is False


def test_known_drafts_off_makes_every_proposal_record():
    """With 0039 a DSL speculator at floor 0 and no step priced claims
    its K before the loop (``get_num_drafted_tokens`` None: the runner
    records nothing); the hook turns that off for its engine, so the same
    proposal hands the runner the device counts again."""
    import ab_hooks
    import numpy as np
    import torch

    from vllm.v1.spec_decode.dynamic import confidence_exit as exit_mod
    from vllm.v1.worker.gpu.spec_decode import draft_confidence_states as states_mod
    from vllm.v1.worker.gpu.spec_decode import speculator as base

    class Speculator(base.DraftModelSpeculator):
        # The abstract methods, which this test never calls.
        capture = init_cudagraph_manager = load_draft_model = propose = None

    cpu = torch.device("cpu")
    speculator = object.__new__(Speculator)
    speculator.confidence_exit = exit_mod.DraftConfidenceExit(0.0, 4, cpu)
    speculator.draft_confidence_states = states_mod.DraftConfidenceRequestStates(
        0.0, 3, 4, cpu
    )

    def propose():
        speculator._note_known_drafts(np.array([0, 1]), 3, [2, 2], False)
        return speculator.get_num_drafted_tokens()

    assert propose() is None and speculator.known_drafts == 3

    class Worker(ab_hooks.KnownDraftsOff):
        model_runner = types.SimpleNamespace(speculator=speculator)

    assert Worker().dsl_known_drafts_off() is True
    assert Worker().dsl_known_drafts_off() is False  # not twice
    assert issubclass(ab_hooks.KnownDraftsOffTimer, ab_hooks.HostTimer)
    drafted = propose()
    assert speculator.known_drafts is None
    assert drafted is not None  # the exit state's counts, for record()


def test_known_drafts_off_says_where_there_is_no_claim():
    import ab_hooks

    class Worker(ab_hooks.KnownDraftsOff):
        model_runner = types.SimpleNamespace(speculator=object())

    assert Worker().dsl_known_drafts_off() is False
    Worker.model_runner = types.SimpleNamespace(speculator=None)
    assert Worker().dsl_known_drafts_off() is False


def test_first_pass_begin_off_sets_the_loop_up_with_its_own_launch():
    """With patch 0040 a replayed first pass sets
    the draft loop up inside its graph (the proposal launches none); the
    hook disarms that for good, so the same proposal launches its own
    set-up again, as the series does."""
    import ab_hooks
    import torch

    from vllm.v1.spec_decode.dynamic.confidence_exit import DraftConfidenceExit
    from vllm.v1.worker.gpu.spec_decode.standalone_ar.speculator import (
        StandaloneARSpeculator,
    )

    speculator = object.__new__(StandaloneARSpeculator)
    speculator.confidence_exit = DraftConfidenceExit(0.0, 4, torch.device("cpu"))
    speculator._begin_in_first_pass = True  # as _capture_prefill leaves it
    launched = []
    speculator._begin_confidence_exit = lambda *args: launched.append(args)

    def propose():
        speculator._begin_draft_loop(2, 3, torch.tensor([0, 1]), False, True)

    propose()
    assert launched == [] and int(speculator.confidence_exit.begin_armed) == 1

    class Worker(ab_hooks.FirstPassBeginOff):
        model_runner = types.SimpleNamespace(speculator=speculator)

    assert Worker().dsl_first_pass_begin_off() is True
    assert Worker().dsl_first_pass_begin_off() is False  # not twice
    propose()
    assert len(launched) == 1 and int(speculator.confidence_exit.begin_armed) == 0
    assert issubclass(ab_hooks.SeriesDslTimer, ab_hooks.HostTimer)


def test_series_dsl_turns_each_wip_off_where_the_tree_has_it(monkeypatch):
    """Each hook of the control arm runs, and says where its wip is not in
    the engine (a speculator without either claim); the served width's
    class-wide change is undone after the test."""
    import ab_hooks

    from vllm.v1.spec_decode.dynamic import served_width

    gate = getattr(served_width._Window, "steps_shorter", None)
    if gate is not None:
        monkeypatch.setattr(served_width._Window, "steps_shorter", gate)

    class Worker(ab_hooks.SeriesDsl):
        model_runner = types.SimpleNamespace(speculator=object())

    answers = Worker().dsl_as_the_series()
    assert answers == [gate is not None, False, False]


def _round_steps(ms, running, drafted, added=None, firsts=None):
    """One round of abab.py's per-step record (step_ms[arm][round])."""
    n = len(ms)
    return {"trace": {"ms": ms, "added": added or [0] * n, "firsts": firsts or [0] * n},
            "engine_steps": {"running": running, "drafted": drafted}}


def test_full_steps_reads_only_full_decode_steps_at_the_width_and_pairs_rounds(tmp_path):
    import full_steps

    c = 4
    # Round 1: sd2's full steps 10 and 12 (mean 11); left out: a step of 3
    # requests, one with an arrival, one with a first token, one with a row
    # that drafted 1 (7 drafted tokens), one at width 3 (12 drafted).
    sd_r1 = _round_steps([10, 12, 50, 60, 70, 80, 90], [4, 4, 3, 4, 4, 4, 4],
                         [8, 8, 6, 8, 8, 7, 12], added=[0, 0, 0, 1, 0, 0, 0],
                         firsts=[0, 0, 0, 0, 1, 0, 0])
    sd_r2 = _round_steps([11, 11], [4, 4], [8, 8])
    dsl_r1 = _round_steps([11, 13, 99], [4, 4, 4], [8, 8, 12])
    dsl_r2 = _round_steps([11.5, 12.5], [4, 4], [8, 8])
    data = {"points": [{"concurrency": c, "step_ms": {
        "sd2": [sd_r1, sd_r2], "dsl4": [dsl_r1, dsl_r2]}}]}
    path = tmp_path / "abab.json"
    path.write_text(json.dumps(data))
    rows = {r["arm"]: r for r in full_steps.rows_of(data, 2, "sd2", None, settle=0)}
    assert rows["sd2"]["steps"] == 4 and rows["sd2"]["mean_ms"] == 11
    assert rows["sd2"]["round_means_ms"] == [11, 11]
    assert "diff_ms" not in rows["sd2"]
    dsl = rows["dsl4"]
    assert dsl["round_means_ms"] == [12, 12] and dsl["steps"] == 4
    assert dsl["diff_ms"] == pytest.approx(1.0)
    assert dsl["diff_pct"] == pytest.approx(100 / 11)
    assert dsl["rounds_paired"] == 2 and dsl["diff_ci95_ms"][0] == pytest.approx(1.0)
    # Width 3 reads the one step that drafted 12 in each arm, and no other.
    w3 = {r["arm"]: r for r in full_steps.rows_of(data, 3, "sd2", None, settle=0)}
    assert w3["sd2"]["mean_ms"] == 90 and w3["dsl4"]["mean_ms"] == 99
    assert w3["dsl4"]["round_means_ms"] == [99, None]
    # --settle 2 leaves out the two steps after the arrival (step 3) and the
    # first token (step 4): sd2's step at width 3 (step 6) goes, dsl4's stays.
    settled = {r["arm"]: r for r in full_steps.rows_of(data, 3, "sd2", None, settle=2)}
    assert "sd2" not in settled and settled["dsl4"]["mean_ms"] == 99
    assert full_steps.full_step_times(sd_r1, c, 2, settle=1) == [10, 12]
    # Where the record has the verify's padded tokens, a step that drafted the
    # width but was placed wider (DSL's loop stopped early) is not at that
    # width: at width 2 the verify holds 12 tokens (4 x 3), at 3 slots 16.
    placed = _round_steps([11, 20, 12, 30], [4, 4, 4, 4], [8, 8, 8, 12])
    placed["engine_steps"]["padded_tokens"] = [12, 16, None, 16]
    assert full_steps.full_step_times(placed, c, 2, settle=0) == [11, 12]
    assert full_steps.full_step_times(placed, c, 3, settle=0) == [30]
    # --mix: every full step by width placed and draft steps run; a record
    # without the verify's tokens counts nothing.
    mixed = {"points": [{"concurrency": c, "step_ms": {"dsl8": [placed], "sd2": [sd_r2]}}]}
    (kinds,) = full_steps.mix_of(mixed, None, settle=0)
    assert kinds["arm"] == "dsl8" and [(k["width"], k["drafted"], k["steps"], k["mean_ms"])
                                       for k in kinds["kinds"]] == [
        (2, 2.0, 1, 11), (3, 2.0, 1, 20), (3, 3.0, 1, 30)]
    assert [k["share"] for k in kinds["kinds"]] == [1 / 3] * 3
    # The command: a table, the rows as JSON, exit 1 where nothing is read.
    def cli(*args):
        return subprocess.run([sys.executable, str(BENCH / "full_steps.py"), str(path),
                               *args], capture_output=True, text=True)

    out = cli("--json", str(tmp_path / "rows.json"))
    assert out.returncode == 0, out.stderr
    assert "vs sd2: +1.000 ms" in out.stdout
    assert json.loads((tmp_path / "rows.json").read_text())[1]["arm"] == "dsl4"
    mix_path = tmp_path / "mixed.json"
    mix_path.write_text(json.dumps(mixed))
    out = subprocess.run([sys.executable, str(BENCH / "full_steps.py"), str(mix_path),
                          "--mix"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "c=4   dsl8             width 2 drafted 2.00: 33% 11.000 ms; width 3 drafted "
        "2.00: 33% 20.000 ms; width 3 drafted 3.00: 33% 30.000 ms")
    assert cli("--mix").returncode == 1  # no verify tokens recorded
    none = cli("--concurrency", "8")
    assert none.returncode == 1 and "no full steps" in none.stdout
    bad = cli("--width", "0")
    assert bad.returncode == 2 and "--width" in bad.stderr
    bad = cli("--settle", "-1")
    assert bad.returncode == 2 and "--settle" in bad.stderr
    bad = cli("--base", "sd3")
    assert bad.returncode == 2 and "--base: no arm 'sd3'" in bad.stderr
    assert "its arms: dsl4, sd2" in bad.stderr


def test_profile_step_kernel_table_counts_overlapping_kernels_once_and_ranks_by_time(
        tmp_path):
    from profile_step import kernel_table, kernel_report, parse_window

    # Two steps: "gemm" 0-10 and 20-30, "exit" 5-8 (inside gemm: busy once),
    # "copy" 28-34 (overlaps gemm's end by 2).
    kernels = [("gemm", 0.0, 10.0), ("exit", 5.0, 8.0), ("gemm", 20.0, 30.0),
               ("copy", 28.0, 34.0)]
    t = kernel_table(kernels, nsteps=2)
    assert t["kernels_us_per_step"] == {"gemm": 10.0, "copy": 3.0, "exit": 1.5}
    assert list(t["kernels_us_per_step"]) == ["gemm", "copy", "exit"]
    assert t["kernel_us_per_step"] == 14.5
    assert t["busy_us_per_step"] == (10 + 14) / 2
    assert t["span_us_per_step"] == 17.0
    assert kernel_table(kernels, 2, top=1)["kernels_us_per_step"] == {"gemm": 10.0}
    assert kernel_table([], 3)["busy_us_per_step"] == 0.0

    base = {"torchprof_steps": 2, "window_wall_us_per_step": 20.0, **t}
    mine = {"torchprof_steps": 2, "window_wall_us_per_step": 21.0,
            **kernel_table(kernels + [("exit", 40.0, 44.0)], nsteps=2)}
    lines = kernel_report({"sd2": base, "dsl4@1-64:2": mine},
                          {"sd2": "sd2", "dsl4@1-64:2": "sd2"}, top=5)
    assert "dsl4@1-64:2 - sd2" in lines[1] and "GPU busy +2.0 (14.0 vs 12.0)" in lines[1]
    assert "span +5.0 (22.0 vs 17.0)" in lines[1] and "wall +1.0 (21.0 vs 20.0)" in lines[1]
    assert lines[2].split() [:2] == ["+2.0", "us"] and lines[2].endswith("exit")
    # An arm without a window profile, or whose base did not run, is skipped.
    assert kernel_report({"sd2": base}, {"sd2": "sd4"}, top=5) == []
    # A base written before idle time and per-run figures were kept: no idle
    # figure, the rest against its means.
    from profile_step import window_summary
    newer = window_summary([(kernels, 2, 21e-6)])
    lines = kernel_report({"sd2": base, "dsl4": newer}, {"dsl4": "sd2"}, top=5)
    assert "GPU busy +0.0 (12.0 vs 12.0)" in lines[1] and "idle" not in lines[1]
    assert "Idle gaps" not in "\n".join(lines)

    bad = subprocess.run([sys.executable, str(BENCH / "profile_step.py"), "--models", "m",
                          "--prompts", "p", "--out", str(tmp_path), "--arms", "sd2,dsl4",
                          "--base", "sd3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--base: 'sd3' is not one of --arms" in bad.stderr

    assert parse_window("40:30") == (40, 30)
    for bad in ("40", "0:5", "4:0", "a:b"):
        with pytest.raises(Exception, match="--profile-window"):
            parse_window(bad)


def test_profile_step_gaps_name_the_kernels_either_side_of_an_idle_gpu():
    from profile_step import kernel_gaps, short_kernel_name

    assert short_kernel_name("void at::native::reduce_kernel<512, 1>(int, f<a>(b))") == \
        "at::native::reduce_kernel<512, 1>"
    # An argument list inside the template (a function type) stays.
    assert short_kernel_name("void k<void (int)>(float)") == "k<void (int)>"
    assert short_kernel_name("nvjet_sm90_tst_96x64_TNN") == "nvjet_sm90_tst_96x64_TNN"
    assert short_kernel_name("x" * 100) == "x" * 90
    assert short_kernel_name("x" * 80, width=10) == "x" * 10
    # Two steps. "gemm" 0-10, "exit" 5-12 (ends the busy interval), idle
    # 12-20, "copy" 20-22, idle 22-22.5 (under 1 us: not a gap), "gemm"
    # 22.5-30, idle 30-40, "copy" 40-41.
    kernels = [("gemm", 0.0, 10.0), ("exit", 5.0, 12.0), ("copy", 20.0, 22.0),
               ("gemm", 22.5, 30.0), ("copy", 40.0, 41.0)]
    g = kernel_gaps(kernels, nsteps=2)
    assert g["gaps_us_per_step"] == {"gemm -> copy": 5.0, "exit -> copy": 4.0}
    assert g["gaps_per_step"] == {"gemm -> copy": 0.5, "exit -> copy": 0.5}
    assert g["idle_us_per_step"] == 9.0
    assert kernel_gaps(kernels, 2, min_gap_us=9.0)["gaps_us_per_step"] == \
        {"gemm -> copy": 5.0}
    assert kernel_gaps(kernels, 2, top=1)["gaps_us_per_step"] == {"gemm -> copy": 5.0}
    assert kernel_gaps([], 1)["idle_us_per_step"] == 0.0


def test_profile_step_window_summary_keeps_each_run_and_the_report_its_spread(
        tmp_path):
    import marshal

    from profile_step import difference_interval, report, window_summary

    # Run 1: 2 steps, busy 10 of span 20; run 2: 4 steps, busy 24 of span 40.
    one = ([("gemm", 0.0, 10.0), ("copy", 30.0, 40.0)], 2, 50e-6)
    two = ([("gemm", 100.0, 124.0), ("copy", 130.0, 140.0)], 4, 80e-6)
    w = window_summary([one, two])
    assert w["torchprof_steps"] == 6
    assert [r["busy_us_per_step"] for r in w["runs"]] == [10.0, 8.5]
    assert [r["span_us_per_step"] for r in w["runs"]] == [20.0, 10.0]
    assert [r["wall_us_per_step"] for r in w["runs"]] == pytest.approx([25.0, 20.0])
    # Means weighted by steps: (10*2 + 8.5*4) / 6.
    assert w["busy_us_per_step"] == pytest.approx(9.0)
    assert w["kernels_us_per_step"] == pytest.approx({"gemm": 34 / 6, "copy": 20 / 6})
    assert w["gaps_us_per_step"] == pytest.approx({"gemm -> copy": 26 / 6})
    assert w["idle_us_per_step"] == pytest.approx(26 / 6)

    assert difference_interval([3.0], [1.0]) == "+2.0"
    # Welch: se = sqrt(2/2 + 2/2) = sqrt(2); 1.96 * sqrt(2) = 2.77.
    assert difference_interval([2.0, 4.0], [0.0, 2.0]) == "+2.0 [-0.8, +4.8]"

    # report(): an arm whose K differs from --base's still gets its host and
    # window sections against the base (a loop variable once replaced the
    # base, and both were lost), and a built-in's address does not split its
    # row in two.
    def prof(name, seconds):
        stats = {("~", 0, f"<function Event.synchronize at {name}>"):
                 (1, 1, seconds, seconds, {})}
        with open(tmp_path / f"{arm}.prof", "wb") as f:
            marshal.dump(stats, f)

    for arm, k, addr, sync, runs in (("sd2", 2, "0x7f01", 0.004, [one, two]),
                                     ("dsl4@1-64:2", 4, "0x7f02", 0.003, [two, two])):
        prof(addr, sync)
        from profile_step import parse_arm
        (tmp_path / f"{arm}.json").write_text(json.dumps({
            "arm": parse_arm(arm), "tpot_ms": 5.0, "steps": 10,
            "wall_per_step_us": 1.0, "cprofile_wall_per_step_us": 2.0,
            "cprofile_steps": 2, "gpu_us_per_step": 3.0, "gpu_events_per_step": 4.0,
            "host_calls_per_step": {"cudaGraphLaunch": 3.0}, **window_summary(runs)}))
    text = report(tmp_path, ["sd2", "dsl4@1-64:2"], top=5, base="sd2")
    assert "dsl4@1-64:2 - sd2: host own time per engine step, total -500.0 us" in text
    assert "   -500.0 us  (  1500.0 vs   2000.0)  ~:0(<function Event.synchronize>)" in text
    window = next(line for line in text.splitlines()
                  if line.startswith("dsl4@1-64:2 - sd2, profiled window"))
    assert "(8 steps in 2 run(s))" in window
    # Busy per run: dsl4@ [8.5, 8.5], sd2 [10, 8.5] (variance 1.125): -0.75
    # +- 1.96 * sqrt(1.125 / 2) = 1.47.
    assert "GPU busy -0.8 [-2.2, +0.7] (8.5 vs 9.2)" in window
    assert "Idle gaps (GPU waiting, by the kernels either side)" in text
    assert (tmp_path / "report.txt").read_text() == text

    bad = subprocess.run([sys.executable, str(BENCH / "profile_step.py"), "--models", "m",
                          "--prompts", "p", "--out", str(tmp_path), "--arms", "sd2",
                          "--profile-repeats", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--profile-repeats: expected a whole number >= 1" \
        in bad.stderr


def test_profile_step_gaps_tell_a_late_launch_from_a_queued_one(tmp_path):
    from profile_step import (gap_differences, kernel_gaps, report, run_lines,
                              trace_kernels, window_summary)

    # A Chrome trace as torch's profiler writes it: host calls (runtime and
    # driver API) and the GPU work they issued, tied by "correlation".
    trace = {"traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 0.0,
         "dur": 3.0, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "void body<1>(int)", "ts": 5.0, "dur": 10.0,
         "args": {"correlation": 1}},
        # The same graph launch: a 5 us gap inside one graph.
        {"ph": "X", "cat": "kernel", "name": "loop_control", "ts": 20.0, "dur": 1.0,
         "args": {"correlation": 1}},
        # Issued at 2 (long before the loop ended at 21): queued, so its 25
        # us gap is a device-side wait, though not inside one graph.
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 2.0,
         "dur": 1.0, "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "void copy<2>(float)", "ts": 46.0, "dur": 2.0,
         "args": {"correlation": 2}},
        # Issued at 60, 12 us after the GPU went idle at 48: 12 of its 14 us
        # gap are the host's.
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "ts": 60.0,
         "dur": 1.0, "args": {"correlation": 3}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
         "ts": 62.0, "dur": 1.0, "args": {"correlation": 3}},
        # GPU work whose host call the trace lacks, then a memset.
        {"ph": "X", "cat": "kernel", "name": "orphan", "ts": 70.0, "dur": 1.0,
         "args": {"correlation": 9}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "ts": 65.0,
         "dur": 1.0, "args": {"correlation": 4}},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 80.0,
         "dur": 1.0, "args": {"correlation": 4}},
        {"ph": "i", "cat": "kernel", "name": "marker", "ts": 1.0},
        {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "ts": 1.0, "dur": 1.0,
         "args": {}},
    ]}
    k = trace_kernels(trace)
    assert k == [("void body<1>(int)", 5.0, 15.0, 0.0, 1), ("loop_control", 20.0, 21.0, 0.0, 1),
                 ("void copy<2>(float)", 46.0, 48.0, 2.0, 2),
                 ("Memcpy HtoD (Pinned -> Device)", 62.0, 63.0, 60.0, 3),
                 ("orphan", 70.0, 71.0, None, None), ("Memset (Device)", 80.0, 81.0, 65.0, 4)]
    g = kernel_gaps(k, nsteps=1)
    assert g["gaps_us_per_step"] == {"loop_control -> copy<2>": 25.0,
                                     "copy<2> -> Memcpy HtoD ": 14.0,
                                     "orphan -> Memset ": 9.0,
                                     "Memcpy HtoD  -> orphan": 7.0,
                                     "body<1> -> loop_control": 5.0}
    assert g["gaps_host_late_us_per_step"] == {"loop_control -> copy<2>": 0.0,
                                               "copy<2> -> Memcpy HtoD ": 12.0,
                                               "orphan -> Memset ": 0.0,
                                               "Memcpy HtoD  -> orphan": 0.0,
                                               "body<1> -> loop_control": 0.0}
    assert {k_: v for k_, v in g["gaps_in_graph_us_per_step"].items() if v} == \
        {"body<1> -> loop_control": 5.0}
    assert g["host_late_us_per_step"] == 12.0
    assert g["launch_known"] == pytest.approx(53 / 60)
    # Without launch times there is no host-late figure at all.
    plain = kernel_gaps([x[:3] for x in k], nsteps=1)
    assert "host_late_us_per_step" not in plain
    assert plain["gaps_us_per_step"] == g["gaps_us_per_step"]

    # window_summary keeps each run's host-late time and largest gaps.
    w = window_summary([(k, 1, 90e-6), ([x[:3] for x in k], 1, 90e-6)], run_gaps=1)
    assert w["runs"][0]["host_late_us_per_step"] == 12.0
    assert "host_late_us_per_step" not in w["runs"][1]
    assert w["runs"][1]["gaps_us_per_step"] == {"loop_control -> copy<2>": 25.0}
    assert w["gaps_host_late_us_per_step"]["copy<2> -> Memcpy HtoD "] == 12.0
    base = window_summary([([x for x in k if x[0] != "loop_control"], 1, 90e-6)])
    mine = window_summary([(k, 1, 90e-6)])
    lines = gap_differences(mine, base, top=3)
    # The control kernel moved the copy's wait from after the body to after
    # itself (queued in both), and brought a wait inside the graph.
    # Each line ends with how often the gap occurs a step and its cost each
    # time ("-" where it does not occur).
    assert lines == [
        "      -31.0 us  (     0.0 vs     31.0; host-late     0.0 vs     0.0; "
        "in-graph     0.0 vs     0.0; 0.000 vs 1.000 a step, - vs 31.0 us each)  "
        "body<1> -> copy<2>",
        "      +25.0 us  (    25.0 vs      0.0; host-late     0.0 vs     0.0; "
        "in-graph     0.0 vs     0.0; 1.000 vs 0.000 a step, 25.0 vs - us each)  "
        "loop_control -> copy<2>",
        "       +5.0 us  (     5.0 vs      0.0; host-late     0.0 vs     0.0; "
        "in-graph     5.0 vs     0.0; 1.000 vs 0.000 a step, 5.0 vs - us each)  "
        "body<1> -> loop_control"]
    # Two steps, the gap in one of them: half a step, the whole gap each time.
    two = window_summary([(k, 2, 90e-6)])
    assert gap_differences(two, base, top=3)[1].endswith(
        "0.500 vs 0.000 a step, 25.0 vs - us each)  loop_control -> copy<2>")
    # Against a file without host-late figures: no host-late part.
    old = window_summary([([x[:3] for x in k], 1, 90e-6)])
    assert "host-late" not in "\n".join(gap_differences(mine, old, top=4))

    assert run_lines({"sd2": old, "dsl4": mine, "x": {"tpot_ms": 1.0}}) == [
        "sd2 runs (busy / idle / wall us a step): 16 / 60 / 90",
        "dsl4 runs (busy / idle / host-late / wall us a step): 16 / 60 / 12 (88% known) / 90"]
    # A run's trace kernels give all its figures (the gap keys and their
    # host-late parts then name the same kernels).
    renamed = window_summary([(k, 1, 90e-6)])
    assert set(renamed["kernels_us_per_step"]) == {x[0] for x in k}
    assert renamed["gaps_us_per_step"] == g["gaps_us_per_step"]

    # report() of a results folder whose cProfile dumps were dropped.
    for arm in ("sd2", "dsl4"):
        from profile_step import parse_arm
        (tmp_path / f"{arm}.json").write_text(json.dumps({
            "arm": parse_arm(arm), "tpot_ms": 5.0, "steps": 10,
            "wall_per_step_us": 1.0, "cprofile_wall_per_step_us": 2.0,
            "cprofile_steps": 2, "gpu_us_per_step": 3.0, "gpu_events_per_step": 4.0,
            "host_calls_per_step": {"cudaGraphLaunch": 3.0},
            **(mine if arm == "dsl4" else base)}))
    text = report(tmp_path, ["sd2", "dsl4"], top=3, base="sd2")
    assert "dsl4 - sd2: host own time not compared (no dsl4.prof, sd2.prof here)" in text
    assert "dsl4 runs (busy / idle / host-late / wall us a step)" in text
    assert "host-late" in text.split("Idle gaps")[1]
