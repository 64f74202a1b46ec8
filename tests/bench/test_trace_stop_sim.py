"""``benchmarks/trace_stop_sim.py``: replays of hand-computed traces, the
predictors' fits, and the CLI on a small synthetic trace pair."""

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import trace_stop_sim as sim  # noqa: E402

ACCEPTED = [1, 1, 0, 1, 0, 0, 1, 1]


def _row(accepted, p=None):
    n = len(accepted)
    p = p or [0.9 if a else 0.2 for a in accepted]
    return {"p": p, "p2": [0.05] * n, "entropy": [1.0] * n, "accepted": accepted}


def test_fixed_k_and_the_oracle_by_hand():
    rows = [_row(ACCEPTED)]
    # SD K=2: steps at 0 (run 2, +3), 3 (run 1, +2), 5 (run 0, +1), 6 (run
    # 2, +2: the trace ends) -> 8 tokens, 4 steps of 4 + 2 ms.
    sd2 = sim.replay(rows, 2, 4.0, 1.0, 2, 0.8, 0.5)
    assert sd2["tokens_per_ms"] == pytest.approx(8 / 24)
    assert sd2["tokens_per_step"] == pytest.approx(2.0)
    assert sd2["draft_forwards_per_step"] == pytest.approx(2.0)
    # The oracle drafts 2, 1, 1 (at least one), 2.
    oracle = sim.replay(rows, "oracle", 4.0, 1.0, 2, 0.8, 0.5)
    assert oracle["tokens_per_ms"] == pytest.approx(8 / 22)
    assert oracle["draft_forwards_per_step"] == pytest.approx(6 / 4)


def test_a_threshold_stops_where_the_survival_drops():
    rows = [_row(ACCEPTED)]
    raw = sim.Predictor("raw")
    # a = 0.5: 0.9 -> go on, 0.9 * 0.9 = 0.81 -> go on (cap 2 ends it);
    # at 3: 0.9 then 0.9 * 0.2 -> stop after 2 anyway; at 5: 0.2 -> stop
    # after 1: one forward less than SD K=2, the same tokens.
    thr = sim.replay(rows, sim.Threshold(raw, 0.5), 4.0, 1.0, 2, 0.8, 0.5)
    assert thr["tokens_per_ms"] == pytest.approx(8 / 23)
    # a above every survival: one draft a step, as SD K=1.
    one = sim.replay(rows, sim.Threshold(raw, 0.99), 4.0, 1.0, 2, 0.8, 0.5)
    assert one == sim.replay(rows, 1, 4.0, 1.0, 2, 0.8, 0.5)


def test_the_rule_prices_one_more_step():
    rule = sim.Rule(sim.Predictor("raw"), 4.0, 1.0)
    # After one draft of 0.9: gain 0.81 x (4 + 1) = 4.05 > 1 x 1.9.
    assert rule.go_on([0.9])
    # After one draft of 0.2: gain 0.04 x 5 = 0.2 < 1.2.
    assert not rule.go_on([0.2])


def test_history_and_calibrated_predictors_fit_their_tables():
    samples = [(0.95, 0.01, 0.9, 1)] * 30 + [(0.95, 0.01, 0.1, 0)] * 30
    cal = sim.Predictor("calibrated").fit(samples)
    hist = sim.Predictor("history").fit(samples)
    assert cal(0.95, 0.01, 0.9) == pytest.approx(0.5)
    assert hist(0.95, 0.01, 0.9) == pytest.approx(1.0)
    assert hist(0.95, 0.01, 0.1) == pytest.approx(0.0)
    # A key with too few samples falls back to p's bin.
    assert hist(0.95, 0.01, 0.5) == pytest.approx(0.5)
    assert sim.Predictor("raw")(0.3, 0.1, 0.9) == 0.3
    with pytest.raises(ValueError, match="predictor"):
        sim.Predictor("psychic")


def test_samples_follow_sd_at_the_cap_and_the_history_before_each_step():
    samples = sim.samples_of([_row(ACCEPTED)], 0.5, 0.5, 2)
    # Steps at 0 (positions 0, 1), 3 (3, 4: rejected), 5 (5: rejected), 6 (6, 7).
    assert [s[3] for s in samples] == [1, 1, 1, 0, 0, 1, 1]
    hists = [s[2] for s in samples]
    assert hists[0] == hists[1] == 0.5  # one value for the whole step
    assert hists[2] == pytest.approx(0.875)  # 0.5 -> 0.75 -> 0.875


def _trace(path, rng, n_rows=12, n=64):
    rows = []
    for _ in range(n_rows):
        rate = rng.choice((0.3, 0.8))  # easy and hard requests
        acc = [int(rng.random() < rate) for _ in range(n)]
        p = [min(0.99, max(0.01, (0.7 if a else 0.3) + rng.uniform(-0.25, 0.25)))
             for a in acc]
        rows.append({"p": p, "p2": [x / 3 for x in p], "entropy": [1.0] * n,
                     "accepted": acc})
    with gzip.open(path, "wt") as f:
        json.dump({"rows": rows}, f)


def test_the_cli_reports_every_policy_on_both_splits(tmp_path):
    rng = random.Random(0)
    _trace(tmp_path / "tune.json.gz", rng)
    _trace(tmp_path / "test.json.gz", rng)
    out = tmp_path / "sim.json"
    res = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "trace_stop_sim.py"), "--tune",
         str(tmp_path / "tune.json.gz"), "--test", str(tmp_path / "test.json.gz"),
         "--cap", "3", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    for split in ("test", "tune"):
        ratios = data["splits"][split]["vs_best_sd"]
        assert {"sd1", "sd2", "sd3", "oracle", "rule-raw", "thr-history", "rule-online"} <= set(ratios)
        # No stop beats the oracle at the same cap.
        assert max(ratios.values()) == pytest.approx(ratios["oracle"])
    assert data["splits"]["tune"]["vs_best_sd"][f"sd{data['best_sd_k_on_tune']}"] == 1.0
    # Easy and hard requests: the request's history predicts better than p alone.
    pred = data["predictors"]
    assert pred["history"]["test"]["brier"] < pred["calibrated"]["test"]["brier"]


def test_a_trace_without_rows_gets_one_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": [{"p": [0.5], "p2": [], "entropy": [1.0],
                                         "accepted": [1]}]}))
    res = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "trace_stop_sim.py"), "--tune",
         str(bad), "--test", str(bad)], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "row 0" in res.stderr and "'p2'" in res.stderr


def test_the_per_request_oracle_gives_each_request_its_best_k():
    easy, hard = _row([1] * 8), _row([0] * 8)
    rows = [easy, hard]

    def run(rs, policy):
        return sim.replay(rs, policy, 4.0, 1.0, 2, 0.8, 0.5)

    got = sim.best_k_per_request(rows, run, 2)
    # easy at K=2: 3 steps (3 + 3 + 2 tokens) of 6 ms; hard at K=1: 8 steps
    # of one token, 5 ms each.
    assert got["tokens_per_ms"] == pytest.approx(16 / (18 + 40))
    assert got["steps"] == 11
    assert got["tokens_per_ms"] > max(run(rows, k)["tokens_per_ms"] for k in (1, 2))


def test_the_online_predictor_starts_at_p_and_learns_each_bins_bias():
    online = sim.Predictor("online", online_weight=4.0)
    assert online(0.35, 0.1, 0.5) == 0.35  # cold: the raw confidence
    for _ in range(12):  # bin 3 accepts every time: bias +0.65 a draft
        online.observe(0.35, 1)
    # 12 x 0.65 over 12 + 4 pseudo-drafts; p's within-bin value is kept.
    assert online(0.35, 0.1, 0.5) == pytest.approx(0.35 + 7.8 / 16)
    assert online(0.31, 0.1, 0.5) == pytest.approx(0.31 + 7.8 / 16)
    assert online(0.75, 0.1, 0.5) == 0.75  # another bin has learnt nothing
    assert online(0.39, 0.1, 0.5) <= 1.0
    online.reset()
    assert online(0.35, 0.1, 0.5) == 0.35
    # Forgetting: with decay 0.5 only the last few outcomes count.
    fading = sim.Predictor("online", online_weight=1.0, online_decay=0.5)
    for a in [1] * 20 + [0] * 20:
        fading.observe(0.55, a)
    assert fading(0.55, 0.1, 0.5) == pytest.approx(0.55 - 0.55 * 2 / 3, abs=1e-4)
    # The fitted kinds ignore what they observe.
    cal = sim.Predictor("calibrated").fit([(0.35, 0.1, 0.5, 0)] * 30)
    cal.observe(0.35, 1)
    assert cal(0.35, 0.1, 0.5) == 0.0


def test_a_rule_on_the_online_predictor_learns_within_a_replay_and_starts_cold():
    # p says 0.25 everywhere but every draft is accepted: the raw rule stops
    # after one draft; the online one learns the bias and drafts to the cap.
    rows = [_row([1] * 40, p=[0.25] * 40)]
    raw = sim.replay(rows, sim.Rule(sim.Predictor("raw"), 4.0, 1.0), 4.0, 1.0, 4, 0.8, 0.5)
    online = sim.Predictor("online", online_weight=2.0)
    rule = sim.Rule(online, 4.0, 1.0)
    first = sim.replay(rows, rule, 4.0, 1.0, 4, 0.8, 0.5)
    assert raw["draft_forwards_per_step"] == 1.0
    assert first["draft_forwards_per_step"] > 3.0
    assert first["tokens_per_ms"] > raw["tokens_per_ms"]
    # Each replay starts cold: the same result twice.
    assert sim.replay(rows, rule, 4.0, 1.0, 4, 0.8, 0.5) == first


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_the_logistic_estimator_starts_at_vllms_cold_coefficients():
    est = sim.make_predictor("logistic", 3)
    for p in (0.1, 0.5, 0.9):
        want = _sigmoid(0.5 * np.log(p / (1 - p)) - 0.2)
        assert est(p, 0.0, 0.0, 0) == pytest.approx(want)
    # Positions past the cap read the last intercept; nothing moves before a refit.
    est.observe(0.9, 1, 0)
    for _ in range(sim.LogisticEstimator.REFIT_INTERVAL - 1):
        est.end_step()
    assert est(0.9, 0.0, 0.0, 5) == pytest.approx(_sigmoid(0.5 * np.log(9) - 0.2))


def test_a_refit_is_the_newton_step_of_the_normal_equations():
    rng = np.random.default_rng(0)
    est = sim.make_predictor("logistic", 2)
    est.DAMPING = 0.0  # undamped: the arrowhead solve is the plain Newton step
    rows = []
    for _ in range(400):
        p, k = rng.uniform(0.05, 0.95), int(rng.integers(0, 2))
        a = int(rng.random() < p ** 0.5)  # under-confident drafter
        rows.append((p, k, a))
        est.observe(p, a, k)
    for _ in range(sim.LogisticEstimator.REFIT_INTERVAL):
        est.end_step()
    # The same step by numpy: design [f, e_k], weights p(1-p), ridge L2.
    f = np.array([np.log(p / (1 - p)) for p, _, _ in rows])
    x = np.column_stack([f] + [[k == j for _, k, _ in rows] for j in range(2)]).astype(float)
    pred = _sigmoid(0.5 * f - 0.2)
    y = np.array([a for _, _, a in rows], float)
    h = x.T @ (x * (pred * (1 - pred))[:, None]) + 1e-3 * np.eye(3)
    step = np.linalg.solve(h, x.T @ (y - pred))
    assert est.w == pytest.approx(0.5 + step[0], rel=1e-6)
    assert est.b == pytest.approx(list(-0.2 + step[1:]), rel=1e-6)
    est.reset()
    assert (est.w, est.b) == (0.5, [-0.2, -0.2])
