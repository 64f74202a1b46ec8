"""benchmarks/noise_timescale.py on synthetic abab.py step traces whose host
speed is known: white step noise only (window means fall as 1/sqrt(tau),
adjacent segments differ by what the steps alone give, shorter segments
spread more per pair), and a slow sinusoidal drift (the Allan deviation
grows with tau as the sine's gives, adjacent segments differ by drift,
shorter segments pair more closely)."""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import noise_timescale as nt  # noqa: E402

ARMS = ["base", "other"]
STEP_MS = {"base": 2.0, "other": 4.0}


def synthetic(host, white: float, rounds: int = 8, seg_s: float = 4.0,
              gap_s: float = 0.01, seed: int = 0, first_request: float = 1.0) -> dict:
    """An abab.py result at c=1: ``rounds`` ABBA rounds of the two arms, each
    segment ``seg_s`` of back-to-back steps whose duration is the arm's step
    x ``host(t)`` x (1 + white noise), two requests one after the other;
    each request's first step is a prefill (excluded by the script). The arm
    "other" runs its first request ``first_request`` times as slow (a
    prompt-dependent ratio)."""
    rng = np.random.default_rng(seed)
    t = 100.0
    step_ms = {a: [] for a in ARMS}
    tpot = {a: [] for a in ARMS}
    for r in range(rounds):
        order = ARMS if r % 2 == 0 else ARMS[::-1]
        for a in order:
            start = t
            at, ms = [], []
            while t - start < seg_s:
                d = STEP_MS[a] * host(t) * max(0.05, 1 + white * rng.standard_normal())
                if a == "other" and t - start < seg_s / 2:
                    d *= first_request  # the first prompt's own speed in this arm
                at.append(1e3 * (t - start))
                ms.append(d)
                t += d / 1e3
            n = len(ms)
            # Two requests a segment, one after the other (c = 1).
            firsts = [0] * n
            finished = [0] * n
            firsts[0] = firsts[n // 2] = 1
            finished[n // 2 - 1] = finished[n - 1] = 1
            step_ms[a].append({
                "start_monotonic_s": start,
                "host": {"steal": 0.001 * r, "busy": 0.07, "cpu_wait_ms": 100.0},
                "trace": {"at_ms": at, "ms": ms, "firsts": firsts, "added": list(firsts),
                          "finished": finished, "inflight": [1] * n}})
            tpot[a].append(float(np.mean(ms[1:])))
            t += gap_s
    point = {"concurrency": 1, "tpot_ms": tpot, "step_ms": step_ms,
             "tokens_per_step": {a: [1.0] * rounds for a in ARMS}, "bystanders": []}
    return {"arms": ARMS, "points": [point]}


def analyze(d: dict, segments=(0.5, 2.0)) -> dict:
    _, out = nt.analyze(d["points"][0], ARMS, [0.25, 0.5, 1.0], list(segments), None,
                        None, None, 64)
    return out


def allan_at(out: dict, tau: float) -> float:
    row = next(r for r in out["timescale"]["rows"] if r["tau_s"] == tau)
    return row["allan_within"]


def replay_sd(out: dict, seg_s: float) -> float:
    row = next(r for r in out["replay"]["rows"] if r["segment_s"] == seg_s)
    return row["positions"][0]["sd_ratio"]


def test_white_noise_averages_down_and_is_not_called_drift():
    white = 0.2
    out = analyze(synthetic(lambda t: 1.0, white))
    assert out["holds"]["segments"] == 16
    assert out["holds"]["tpot_vs_step_max_dev"] < 0.01
    # Steps of 2-4 ms: a 0.25 s window holds ~60-125 of them.
    a025, a1 = allan_at(out, 0.25), allan_at(out, 1.0)
    assert a1 / a025 == pytest.approx(0.5, abs=0.12)
    # sd of white step noise over n steps: white / sqrt(n); at 0.25 s of
    # the two arms mixed (~94 steps on average) about 2%.
    assert 0.012 < a025 < 0.03
    lag1 = out["adjacent"]["lags"][0]
    assert lag1["drift_share"] < 0.5
    assert lag1["sd"] == pytest.approx(lag1["single_steps"], rel=0.35)
    # Per pair, a 4x shorter segment spreads ~2x more.
    assert replay_sd(out, 0.5) / replay_sd(out, 2.0) == pytest.approx(2.0, rel=0.25)


def test_slow_drift_grows_with_tau_and_pairs_better_when_short():
    amp, period = 0.1, 20.0
    out = analyze(synthetic(lambda t: math.exp(amp * math.sin(2 * math.pi * t / period)),
                            white=0.01))
    w = 2 * math.pi / period
    for tau in (0.5, 1.0):
        # Two adjacent tau-means of A sin(wt) differ by an amplitude of
        # A 4 sin^2(w tau / 2) / (w tau); Allan = that / 2.
        expected = amp * 4 * math.sin(w * tau / 2) ** 2 / (w * tau) / 2
        assert allan_at(out, tau) == pytest.approx(expected, rel=0.2)
    assert allan_at(out, 1.0) / allan_at(out, 0.25) > 3
    lag1 = out["adjacent"]["lags"][0]
    assert lag1["drift_share"] > 0.9
    assert lag1["sd"] > 5 * lag1["single_steps"]
    # Drift: a 4x shorter segment pairs ~4x more closely.
    assert replay_sd(out, 2.0) / replay_sd(out, 0.5) > 2.5


def test_replay_abba_cancels_a_locally_linear_drift():
    # An exactly periodic host (no jump where the replay wraps): over a
    # schedule of a quarter period the drift is nearly linear, so each
    # round's ratio is +-slope x slot, and reversing the order every other
    # round cancels it in the mean (an AB AB schedule would not).
    amp, period, dt = 0.1, 40.0, 0.002
    t = np.arange(0.0, period, dt)
    y = np.exp(amp * np.sin(2 * np.pi * t / period))
    series = {"t": t, "y": y, "seg": np.zeros(len(t), int),
              "segments": [{"end": period}]}
    r = nt.replay(series, 0.5, 2, 0.0, period / 4, 64)
    assert r["rounds"] == 10
    p = r["positions"][0]
    slope_rms = amp * 2 * np.pi / period / math.sqrt(2)
    assert p["sd_ratio"] == pytest.approx(slope_rms * 0.5, rel=0.25)
    assert p["rms_error_of_mean"] < 0.2 * p["sd_ratio"]


def test_cli_reads_gz_writes_json_and_prints_the_tables(tmp_path, capsys):
    path = tmp_path / "abab.json.gz"
    path.write_bytes(gzip.compress(json.dumps(synthetic(lambda t: 1.0, 0.1)).encode()))
    out_json = tmp_path / "out.json"
    assert nt.main(["--segments", "0.5,1", "--offsets", "16", "--draws", "20",
                    "--json", str(out_json),
                    f"syn={path}"]) == 0
    text = capsys.readouterr().out
    for head in ("== syn c=1", "1. what the file holds", "3. timescale", "4. adjacent",
                 "5. replay", "5b. model", "6. per request"):
        assert head in text
    report = json.loads(out_json.read_text())
    assert report[0]["name"] == "syn" and report[0]["concurrency"] == 1
    assert {r["segment_s"] for r in report[0]["replay"]["rows"]} >= {0.5, 1.0}


def test_help_exits_zero():
    with pytest.raises(SystemExit) as e:
        nt.main(["--help"])
    assert e.value.code == 0


def test_model_matches_the_replay_and_its_interval_holds_for_white_noise():
    d = synthetic(lambda t: 1.0, 0.2, rounds=6, seg_s=3.0)
    series = nt.point_series(d["points"][0], ARMS)
    span = series["segments"][-1]["end"] - series["t"].min()
    rep = nt.replay(series, 1.0, 2, 0.01, span, 32)
    mod = nt.model_check(series, 1.0, 2, 0.01, span, 300)
    assert mod["rounds"] == rep["rounds"]
    p, q = mod["positions"][0], rep["positions"][0]
    assert p["sd_ratio"] == pytest.approx(q["sd_ratio"], rel=0.25)
    assert 0.88 <= p["coverage"] <= 1.0
    assert p["error_95"] == pytest.approx(p["ci95_half"], rel=0.3)


def test_prompt_table_finds_a_prompt_dependent_ratio():
    # "other" is 10% slower on the first prompt only: the two prompts' log
    # ratios differ by log 1.1, an sd (ddof 1) of log(1.1) / sqrt 2.
    out = analyze(synthetic(lambda t: 1.0, 0.05, first_request=1.1))
    got = out["prompts"]["other/base"]["prompt_sd"]
    assert got == pytest.approx(math.log(1.1) / math.sqrt(2), rel=0.15)
    flat = analyze(synthetic(lambda t: 1.0, 0.05))
    assert flat["prompts"]["other/base"]["prompt_sd"] < 0.01
