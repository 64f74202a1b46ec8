"""``benchmarks/verdict.py`` on synthetic ``abab.py`` results: best K, the
direction of the ratio, its interval, the tune-split K and the CLI."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
import verdict  # noqa: E402

# Per round TPOT (ms). c=1: sd3 is SD's best and DSL beats it by 1.25x;
# c=8: sd2 is SD's best and DSL is slower (0.8x).
TPOT = {
    1: {"target": [10.0, 10.4, 9.6, 10.0], "sd2": [5.0, 5.1, 4.9, 5.0],
        "sd3": [4.0, 4.2, 3.8, 4.0], "sd4": [4.4, 4.5, 4.3, 4.4],
        "dsl6": [3.2, 3.2, 3.2, 3.2]},
    8: {"target": [12.0, 12.0, 12.0, 12.0], "sd2": [5.0, 5.0, 5.0, 5.0],
        "sd3": [5.5, 5.6, 5.4, 5.5], "sd4": [6.0, 6.0, 6.0, 6.0],
        "dsl6": [6.25, 6.0, 6.5, 6.25]},
}


def abab_result(tmp_path: Path, name="abab.json", tpot=TPOT) -> Path:
    points = []
    for c, t in tpot.items():
        points.append({
            "concurrency": c, "requests": 2 * c, "tpot_ms": t,
            "spec": {"dsl6": {"draft_forwards_per_step": 3.5 if c == 1 else 5.0,
                              "draft_forwards_source": "counted",
                              "accepted_per_step": 2.0 * c},
                     "sd3": {"draft_forwards_per_step": 2.7,
                             "draft_forwards_source": "K a step that verified drafts",
                             "accepted_per_step": 1.5 * c}}})
    data = {"arms": ["target", "sd2", "sd3", "sd4", "dsl6"], "dataset": "sharegpt-test",
            "target": "t-x8b", "draft": "d-x1b", "rounds": 4, "failed": {},
            "points": points}
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def run(tmp_path, *args) -> tuple[list[dict], str]:
    out = tmp_path / "verdict.json"
    res = subprocess.run([sys.executable, str(BENCH / "verdict.py"), "--dsl-arm", "dsl6",
                          "--out", str(out), *map(str, args)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(out.read_text()), res.stdout


def test_best_k_and_the_ratio_is_sd_over_dsl(tmp_path):
    rows, text = run(tmp_path, abab_result(tmp_path))
    assert isinstance(rows, list) and len(rows) == 2
    c1, c8 = rows
    assert (c1["pair"], c1["concurrency"], c1["best_sd_k"]) == ("t-x8b/d-x1b", 1, 3)
    assert c8["best_sd_k"] == 2
    assert c1["best_sd_tpot_ms"] == pytest.approx(4.0)
    assert c1["dsl_tpot_ms"] == pytest.approx(3.2)
    assert c1["target_tpot_ms"] == pytest.approx(10.0)
    # > 1: DSL faster. Inverted (DSL / SD) this would be 0.8 at c=1.
    ratios = [4.0 / 3.2, 4.2 / 3.2, 3.8 / 3.2, 4.0 / 3.2]
    assert c1["ratio_dsl_vs_best_sd"] == pytest.approx(statistics.fmean(ratios))
    assert c1["ratio_dsl_vs_best_sd"] == pytest.approx(1.25)
    assert c1["call"] == "DSL faster"
    assert c8["ratio_dsl_vs_best_sd"] == pytest.approx(
        statistics.fmean([5.0 / 6.25, 5.0 / 6.0, 5.0 / 6.5, 5.0 / 6.25]))
    assert c8["ratio_dsl_vs_best_sd"] < 1 and c8["call"] == "SD faster"
    # The 95% t-interval over 4 rounds (df 3: t = 3.18).
    half = 3.18 * statistics.stdev(ratios) / 2
    assert c1["ci95"] == pytest.approx([1.25 - half, 1.25 + half])
    assert c1["ci95"][0] > 1
    # The base arm's (target's) spread: (10.4 - 9.6) / 10.
    assert c1["noise"] == pytest.approx(0.08) and c1["noise_arm"] == "target"
    # The ratio's own spread: (4.2 - 3.8) / 3.2 over its median 1.25; at c=8
    # target's TPOT never moved (noise 0) while the ratio did.
    assert c1["ratio_noise"] == pytest.approx((4.2 - 3.8) / 3.2 / 1.25)
    assert c8["noise"] == 0 and c8["ratio_noise"] == pytest.approx(
        (5.0 / 6.0 - 5.0 / 6.5) / statistics.median(
            [5.0 / 6.25, 5.0 / 6.0, 5.0 / 6.5, 5.0 / 6.25]))
    assert c1["dsl_draft_forwards_per_step"] == 3.5 and c8["dsl_accepted_per_step"] == 16
    assert c1["best_sd_note"] == "best K read off this same run, which favours SD"
    assert "> 1 means DSL is faster" in c1["ratio_note"]
    assert "> 1 means DSL is faster" in text and "DSL faster" in text
    line = next(x for x in text.splitlines() if x.startswith("t-x8b/d-x1b") and " 1 " in x)
    assert "1.250" in line and "4.000" in line and "3.200" in line
    assert "8.0%" in line and "10.0%" in line  # noise, then the ratio's


@pytest.mark.parametrize("tune", [
    {"1": 4, "8": 4},
    {"sharegpt-c1": {"sd_k": 4, "dsl": [8, 0.5]}, "sharegpt-c8": {"sd_k": 4},
     "humaneval-c1": {"sd_k": 2}},
])
def test_tune_split_k(tmp_path, tune):
    tune_file = tmp_path / "tune.json"
    tune_file.write_text(json.dumps(tune))
    rows, _ = run(tmp_path, "--tune", tune_file, abab_result(tmp_path))
    assert [r["best_sd_k"] for r in rows] == [4, 4]
    assert rows[0]["ratio_dsl_vs_best_sd"] == pytest.approx(4.4 / 3.2)
    assert rows[0]["best_sd_note"] == f"K chosen on the tune split ({tune_file})"


def test_tune_split_k_from_an_abab_run_on_the_tune_split(tmp_path):
    # On the tune split sd4 wins at c=1, sd2 at c=8.
    tune_tpot = {c: dict(t) for c, t in TPOT.items()}
    tune_tpot[1]["sd4"] = [3.0, 3.0, 3.0, 3.0]
    tune = abab_result(tmp_path, "tune.json", tune_tpot)
    rows, _ = run(tmp_path, "--tune", tune, abab_result(tmp_path))
    assert [r["best_sd_k"] for r in rows] == [4, 2]


def test_a_missing_arm_is_null_not_an_error(tmp_path):
    tpot = {1: {"target": [10.0, 10.0], "sd2": [5.0, 5.0], "dsl6": []}}
    rows, _ = run(tmp_path, f"pairA={abab_result(tmp_path, tpot=tpot)}")
    (row,) = rows
    assert row["pair"] == "pairA" and row["best_sd_k"] == 2
    assert row["ratio_dsl_vs_best_sd"] is None and row["ci95"] == [None, None]
    # One round: a ratio, no interval.
    tpot = {1: {"target": [10.0], "sd2": [5.0], "dsl6": [4.0]}}
    (row,), _ = run(tmp_path, abab_result(tmp_path, tpot=tpot))
    assert row["ratio_dsl_vs_best_sd"] == pytest.approx(1.25)
    assert row["ci95"] == [None, None] and row["call"] is None


def test_help_says_which_way_the_ratio_goes():
    res = subprocess.run([sys.executable, str(BENCH / "verdict.py"), "--help"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert "> 1 means DSL is faster" in " ".join(res.stdout.split())
    assert verdict.RATIO_NOTE in " ".join(res.stdout.split())


def test_an_adaptive_verification_arm_is_an_anchor_not_a_fixed_k(tmp_path):
    """``sd4av`` (SD with upstream's adaptive verification) is faster than every
    fixed K here, yet best K stays a fixed-K arm; its TPOT is reported beside
    them, and every arm's per-step counters are in the row."""
    tpot = {c: {**t, "sd4av": [1.0, 1.0, 1.0, 1.0]} for c, t in TPOT.items()}
    rows, _ = run(tmp_path, abab_result(tmp_path, tpot=tpot))
    assert [r["best_sd_k"] for r in rows] == [3, 2]
    assert rows[0]["other_arms_tpot_ms"] == {"sd4av": pytest.approx(1.0)}
    assert rows[0]["arms_per_step"]["dsl6"] == {
        "draft_forwards": 3.5, "forwards_source": "counted", "accepted": 2.0}
    assert rows[0]["arms_per_step"]["sd3"] == {
        "draft_forwards": 2.7, "forwards_source": "K a step that verified drafts",
        "accepted": 1.5}


def test_a_load_where_target_only_wins_is_not_a_tie_with_sd(tmp_path):
    # c=64: SD's best K ties DSL, but target-only beats both; c=1: SD wins
    # over target-only, so the best fixed arm is SD's best K.
    tpot = {
        1: {"target": [10.0] * 4, "sd2": [5.0] * 4, "sd3": [4.0, 4.2, 3.8, 4.0],
            "sd4": [4.4] * 4, "dsl6": [3.2] * 4},
        64: {"target": [6.0, 6.1, 5.9, 6.0], "sd2": [7.0, 6.9, 7.1, 7.0],
             "sd3": [6.8, 7.0, 6.9, 6.9], "sd4": [7.5] * 4,
             "dsl6": [6.9, 6.9, 7.0, 6.8]},
    }
    rows, text = run(tmp_path, abab_result(tmp_path, tpot=tpot))
    c1, c64 = rows
    assert c1["best_fixed"] == "sd3"
    assert c1["ratio_dsl_vs_best_fixed"] == pytest.approx(c1["ratio_dsl_vs_best_sd"])
    assert c1["call_vs_best_fixed"] == c1["call"] == "DSL faster"
    assert (c64["best_sd_k"], c64["call"]) == (3, "tie")
    assert c64["best_fixed"] == "target"
    assert c64["ratio_dsl_vs_best_fixed"] == pytest.approx(
        statistics.fmean(t / d for t, d in zip(tpot[64]["target"], tpot[64]["dsl6"])))
    lo, hi = c64["ci95_vs_best_fixed"]
    assert hi < 1 and c64["call_vs_best_fixed"] == "target-only faster"
    assert "(target 0.870 target-only faster)" in text


def test_points_measured_beside_bystanders_are_not_rows(tmp_path):
    path = abab_result(tmp_path)
    data = json.loads(path.read_text())
    extra = json.loads(json.dumps(data["points"][0]))
    extra["bystanders"] = ["dsl4"]
    extra["tpot_ms"]["dsl6"] = [100.0] * 4
    data["points"].append(extra)
    data["points"][0]["bystanders"] = []
    path.write_text(json.dumps(data))
    rows, _ = run(tmp_path, path)
    assert [r["concurrency"] for r in rows] == [1, 8]
    assert rows[0]["dsl_tpot_ms"] == pytest.approx(3.2)


def test_a_gzipped_run_reads_as_the_plain_one(tmp_path):
    """Results are committed gzipped (abab.json.gz): the same rows."""
    import gzip

    plain = abab_result(tmp_path)
    packed = tmp_path / "abab.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    rows_plain, _ = run(tmp_path, plain)
    rows_packed, _ = run(tmp_path, packed)
    assert rows_packed == rows_plain and len(rows_packed) == 2


def test_a_label_reads_the_labelled_arms_as_the_plain_ones(tmp_path):
    plain, _ = run(tmp_path, abab_result(tmp_path))
    labelled = {c: {**{f"{a}+t": v for a, v in t.items()},
                    # An unlabelled arm of the same run is left out.
                    "sd5": [1.0] * 4}
                for c, t in TPOT.items()}
    path = abab_result(tmp_path, "labelled.json", tpot=labelled)
    data = json.loads(path.read_text())
    data["arms"] = [f"{a}+t" for a in data["arms"]] + ["sd5"]
    for point in data["points"]:
        point["spec"] = {f"{a}+t": v for a, v in point["spec"].items()}
    path.write_text(json.dumps(data))
    rows, _ = run(tmp_path, "--label", "t", path)
    assert rows == plain
    res = subprocess.run([sys.executable, str(BENCH / "verdict.py"), "--dsl-arm", "dsl6",
                          "--label", "x", "--out", str(tmp_path / "v.json"), str(path)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "no arm ends in '+x'" in res.stderr


def test_a_dsl_arm_of_another_label_is_read_against_the_labels_sd_arms(tmp_path):
    """--label t --dsl-arm dsl6+u: the +u variant of the DSL engine against the
    +t SD arms of the same rounds, exactly as the plain DSL arm would be."""
    plain, _ = run(tmp_path, abab_result(tmp_path))
    labelled = {c: {**{f"{a}+t": v for a, v in t.items()},
                    "dsl6+u": t["dsl6"]}
                for c, t in TPOT.items()}
    path = abab_result(tmp_path, "labelled.json", tpot=labelled)
    data = json.loads(path.read_text())
    data["arms"] = [f"{a}+t" for a in data["arms"]] + ["dsl6+u"]
    for point in data["points"]:
        point["spec"] = {**{f"{a}+t": v for a, v in point["spec"].items()},
                         "dsl6+u": point["spec"]["dsl6"]}
    path.write_text(json.dumps(data))
    rows, _ = run(tmp_path, "--label", "t", "--dsl-arm", "dsl6+u", path)
    assert len(rows) == len(plain)
    for got, want in zip(rows, plain):
        assert got["dsl_arm"] == "dsl6+u"
        for key in ("best_sd_k", "best_sd_tpot_ms", "dsl_tpot_ms", "ratio_dsl_vs_best_sd",
                    "ci95", "noise", "dsl_accepted_per_step"):
            assert got[key] == want[key], key
    # Its +t twin is read too, by its plain name, as before.
    rows_t, _ = run(tmp_path, "--label", "t", path)
    assert [r["dsl_tpot_ms"] for r in rows_t] == [r["dsl_tpot_ms"] for r in plain]
