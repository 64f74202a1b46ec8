"""``benchmarks/stop_rule_sim.py``: SD at fixed K against its closed form, the
rule between the fixed-K policies, and its input errors."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
import stop_rule_sim as sim  # noqa: E402

# Two bins: confident drafts accepted 90% of the time, unsure ones 20%.
BINS = [(0.85, 0.9, 3), (0.15, 0.2, 1)]


def test_fixed_k_matches_its_closed_form():
    # Independent positions: E[accepted] = sum_j (E p)^j, E p = 0.725.
    p = (0.9 * 3 + 0.2) / 4
    for k in (1, 2, 4):
        got = sim.simulate(BINS, 5.0, 1.0, 4, f"sd{k}", 40000, random.Random(1))
        want = 1 + sum(p**j for j in range(1, k + 1))
        assert got["tokens_per_step"] == pytest.approx(want, rel=0.02)
        assert got["ms_per_step"] == pytest.approx(5.0 + k)


def test_the_rule_drafts_less_when_drafts_cost_more():
    rng = random.Random(2)
    cheap = sim.simulate(BINS, 10.0, 0.1, 4, "raw", 20000, rng)
    dear = sim.simulate(BINS, 1.0, 1.0, 4, "raw", 20000, rng)
    # Cheap drafts: the rule runs to the cap (ms per step = V + 4 D).
    assert cheap["ms_per_step"] == pytest.approx(10.4, rel=0.01)
    assert dear["ms_per_step"] < 1.0 + 4 * 1.0 - 0.5
    assert 1.0 < dear["tokens_per_step"] < cheap["tokens_per_step"]


def _cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """``stop_rule_sim.py`` run as a script with ``args``."""
    return subprocess.run([sys.executable, str(BENCH / "stop_rule_sim.py"), *args],
                          capture_output=True, text=True, timeout=timeout)


def _calibration(tmp_path, extra_bins=()) -> Path:
    """A calibration file of ``BINS`` (and ``extra_bins``, as JSON bins)."""
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps({"bins": [
        {"mean_p": q, "accept_rate": p, "count": c} for q, p, c in BINS]
        + list(extra_bins)}))
    return cal


def test_cli_writes_rows_and_refuses_bad_costs(tmp_path):
    cal = _calibration(tmp_path, [{"mean_p": 0.5, "accept_rate": 0.5, "count": 0}])
    out = tmp_path / "sim.json"
    ok = _cli("--calibration", str(cal), "--costs", "1:4.0/1.0,64:10.0/2.0",
              "--samples", "2000", "--out", str(out))
    assert ok.returncode == 0, ok.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [r["batch"] for r in rows] == [1, 64]
    assert set(rows[0]["policies"]) == {"sd1", "sd2", "sd3", "sd4", "raw", "calibrated"}
    assert rows[0]["best_sd"].startswith("sd")
    bad = _cli("--calibration", str(cal), "--costs", "1:4.0", timeout=60)
    assert bad.returncode != 0 and "--costs item '1:4.0' is not B:V/D" in bad.stderr
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    none = _cli("--calibration", str(empty), timeout=60)
    assert none.returncode != 0 and "no non-empty 'bins'" in none.stderr


def test_batch_form_takes_one_decision_for_the_rows():
    # One bin: every row has the same confidences, so the batch's decision
    # (sum of gains against the sum of totals) is the one row's, every step.
    one_bin = [(0.6, 0.6, 1)]
    single = sim.simulate(one_bin, 5.0, 1.0, 4, "raw", 4000, random.Random(3))
    batch = sim.simulate(one_bin, 5.0, 1.0, 4, "raw", 4000, random.Random(3), rows=3)
    assert batch["ms_per_step"] == single["ms_per_step"]
    assert batch["draft_forwards_per_step"] == single["draft_forwards_per_step"]
    assert batch["tokens_per_step"] == pytest.approx(3 * single["tokens_per_step"], rel=0.03)
    # 0.6 * 0.6 * 6 = 2.16 > 1 * 1.6: a second step; 0.216 * 7 = 1.5 < 1.96: no third.
    assert single["draft_forwards_per_step"] == 2


def test_batch_form_pools_the_rows_gains():
    # Rows of mixed confidence (BINS: mostly confident): one unsure row stops
    # a lone request, but eight rows' pooled gain still pays, so the batch
    # drafts deeper on average; SD at fixed K runs K forwards at any size.
    rng = random.Random(4)
    single = sim.simulate(BINS, 5.0, 1.0, 4, "raw", 6000, rng)
    batch = sim.simulate(BINS, 5.0, 1.0, 4, "raw", 3000, rng, rows=8)
    assert batch["draft_forwards_per_step"] > single["draft_forwards_per_step"]
    sd = sim.simulate(BINS, 5.0, 1.0, 4, "sd3", 500, rng, rows=8)
    assert sd["draft_forwards_per_step"] == 3 and sd["ms_per_step"] == 8.0


def test_cli_batch_flag_sets_rows_to_the_batch_size(tmp_path):
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps({"bins": [
        {"mean_p": q, "accept_rate": p, "count": c} for q, p, c in BINS]}))
    out = tmp_path / "sim.json"
    ok = subprocess.run([sys.executable, str(BENCH / "stop_rule_sim.py"), "--calibration",
                         str(cal), "--costs", "1:4.0/1.0,4:5.0/1.1", "--samples", "500",
                         "--batch", "--cap", "2", "--out", str(out)],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [(r["batch"], r["rows"]) for r in rows] == [(1, 1), (4, 4)]
    assert set(rows[1]["policies"]) == {"sd1", "sd2", "raw", "calibrated"}


def test_the_oracle_drafts_the_accepted_run_and_beats_every_fixed_k():
    """The oracle's tokens a step are SD at the cap's (the same run plus the
    bonus token), at fewer draft passes: at least one a step, and on
    average E[min(run, cap)] floored at 1, so it beats every fixed K."""
    p = (0.9 * 3 + 0.2) / 4
    got = sim.simulate(BINS, 5.0, 1.0, 4, "oracle", 40000, random.Random(3))
    want_tokens = 1 + sum(p**j for j in range(1, 5))
    assert got["tokens_per_step"] == pytest.approx(want_tokens, rel=0.02)
    # P(run >= j) = p^j: E[max(min(run, 4), 1)] = 1 + sum_{j=2..4} p^j.
    want_forwards = 1 + sum(p**j for j in range(2, 5))
    assert got["draft_forwards_per_step"] == pytest.approx(want_forwards, rel=0.02)
    for k in (1, 2, 3, 4):
        sd = sim.simulate(BINS, 5.0, 1.0, 4, f"sd{k}", 40000, random.Random(4))
        assert got["tokens_per_ms"] > sd["tokens_per_ms"]


def test_a_survival_threshold_of_zero_is_sd_at_the_cap_and_of_one_is_sd1():
    """``thr<a>``: draft on while the calibrated survival is >= a. At a = 0
    every step goes on (SD at the cap); above every survival it stops after
    the first draft (SD K=1); in between it drafts between the two."""
    rng = lambda: random.Random(5)  # noqa: E731
    cap = sim.simulate(BINS, 5.0, 1.0, 4, "thr0.00", 20000, rng())
    one = sim.simulate(BINS, 5.0, 1.0, 4, "thr1.01", 20000, rng())
    mid = sim.simulate(BINS, 5.0, 1.0, 4, "thr0.50", 20000, rng())
    assert cap["ms_per_step"] == pytest.approx(9.0)
    assert one["ms_per_step"] == pytest.approx(6.0)
    assert 6.0 < mid["ms_per_step"] < 9.0


def test_cli_reports_the_oracle_and_the_best_threshold(tmp_path):
    out = tmp_path / "sim.json"
    ok = _cli("--calibration", str(_calibration(tmp_path)), "--costs", "1:4.0/1.0",
              "--samples", "3000", "--oracle", "--thresholds", "--out", str(out),
              timeout=300)
    assert ok.returncode == 0, ok.stderr
    (row,) = json.loads(out.read_text())["rows"]
    assert "oracle" in row["policies"] and row["oracle_vs_best_sd"] > 1.0
    assert 0.0 < row["best_threshold"] < 1.0
    assert row["threshold_vs_best_sd"] <= row["oracle_vs_best_sd"]
    assert "oracle" in ok.stdout and "best survival threshold" in ok.stdout
