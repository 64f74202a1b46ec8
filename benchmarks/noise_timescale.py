"""On what timescale does the host's speed move in an ``abab.py`` run, and what
segment length would pair the arms more closely?

    python3 benchmarks/noise_timescale.py [--taus 0.25,0.5,1,2,4,8] \\
        [--segments 0.5,1,2,5] [--arms N] [--total-s S] [--gap-s G] \\
        [--json OUT] [NAME=]ABAB.json[.gz] ...

Reads the client's per-step trace that ``abab.py`` keeps for every arm and
round (``points[i]["step_ms"][arm][round]["trace"]``: each ``engine.step()``'s
start and duration, with ``start_monotonic_s`` placing the round on one
clock). The arms run one after another without pause, so the steps of all
segments form one gap-free timeline of the run. Each decode step (no first
token, no request added before it) is divided by its arm's mean step at the
same number of requests in flight over all rounds of the point: ``y`` ~ 1,
the host's slowness at that moment as that arm sees it (an arm's own speed
cancels). TPOT of a round is that round's mean step over tokens a step
(checked: table 1), so the spread of ``y`` averaged over a segment is the
spread of its TPOT.

Tables, per file and concurrency point:

1. what the file holds: segments, their length and the pause between them,
   the whole span, and how closely TPOT follows the mean step (so steps stand
   in for TPOT).
2. step level: the spread of single steps and their lag-1 autocorrelation.
3. timescale: ``y`` averaged over windows of ``tau`` seconds (tiled inside
   each segment, and over the whole timeline): the spread of window means,
   the Allan deviation (the rms difference of two adjacent windows over
   sqrt 2; adjacent windows are what a paired A/B compares) and what it
   would be if the noise at the shortest tau were white (falling as
   1/sqrt(tau)); the autocorrelation of the shortest windows' means by lag.
4. adjacent segments, as the run had them: the spread of the log ratio of
   two adjacent segments' mean ``y`` (1, 2, 3 segments apart), against the
   part that the short-timescale noise alone would give (the shortest
   tau's Allan variance scaled to the segment length; in brackets, single
   steps taken as independent): the rest is drift, motion of the host's
   speed on timescales of a segment or longer. The segment's first 0.25 s
   against the rest of it (a warm-up after the engine sat idle would show
   here). Whether the slowness is shared by the engines: the last window
   of a segment against the first of the next (two engines) compared with
   adjacent windows inside a segment (one engine). The segments' mean
   ``y`` against their rounds' host counters (``cell.HostClock``).
5. prediction by replay: the measured ``y`` timeline (wrapped around its
   end) is cut into an ABBA schedule of ``--arms`` arms with segments of T
   seconds and ``--gap-s`` between them, as many rounds as fit into
   ``--total-s`` (default: the point's own measured span; a longer one
   reuses the record), at every one of ``--offsets`` start offsets. Per
   arm position i (i segments from the base arm in every round, as in
   ``abab.py``): the spread over rounds of the per-round ratio (sigma_r),
   the 95% t half-width of its mean over the rounds (t x sigma_r / sqrt N,
   as ``abab.py`` computes it), and the rms of the actual error of that
   mean over the offsets (the true ratio is 1 by construction; the offsets
   share one record, so this is a rough check of the half-width, not an
   estimate of its own); also the base arm's own spread over rounds (std,
   and (max - min) / median as ``abab.py``'s "noise"). The row at the
   run's own segment length checks the replay against the run's TPOT
   ratios.
5b. the same schedule on fresh draws of a model: stationary Gaussian noise
   with the run's spectrum (``y`` in 0.05 s bins, periodogram smoothed over
   9 frequencies), ``--draws`` independent draws: per arm position, the
   per-round ratio's sd, abab.py's t half-width, the half-width that holds
   95% of the draws' actual errors of the mean, and the share of t
   intervals that hold the truth (is abab.py's interval honest when the
   rounds are short and correlated noise is not cancelled by ABBA?). The
   model keeps the spectrum, not the stalls' heavy tail.
6. c = 1 only, where requests run one at a time: per pair of arms, how
   much the true ratio differs between prompts (each request's decode time,
   same prompt in both arms, averaged over the rounds, less the rounds'
   sampling part) and the per-request noise; what a round of one request
   would add if the prompts rotated between rounds.

What the replay assumes: the host's slowness is a property of time that
scales every arm's step alike (sessions 38-41: every named call of a step
grows and shrinks with it); it moves the same way in a future run; rounds
of a different length see the same host; a segment of T seconds is
realizable (at c = 1 a round is whole requests: 256 tokens take ~0.7 s);
the per-segment pause and warm-up are as measured. It cannot see noise that
the recorded run had no time for (drift slower than the point's span) and
the spreads it gives at long T rest on few independent segments.

Standard library and numpy only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np

# Two-sided 95% Student t quantiles by degrees of freedom (abab.py's, with 60
# and 120 added: abab.py takes 2.04 beyond 30, 2-3% wider at 60-120).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
       9: 2.26, 10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04, 60: 2.00,
       120: 1.98}

MIN_WINDOW_STEPS = 5      # a window with fewer decode steps is left out
MIN_BUCKET_STEPS = 20     # an in-flight count with fewer steps uses the arm's mean
START_S = 0.25            # table 4: a segment's first part, seconds


def t95(df: int) -> float:
    return T95[max(k for k in T95 if k <= df)] if df >= 1 else float("nan")


def read_json(path: Path) -> dict:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


# --------------------------------------------------------------------------
# The timeline of one point


def point_series(point: dict, arms: list[str]) -> dict:
    """The point's decode steps on one clock, normalized per arm and
    in-flight count: ``t`` (step start, s), ``y`` (step / its arm's mean at
    that in-flight count), ``seg`` (segment index, segments in time order),
    and ``segments`` (arm, round, start, end, steps, TPOT, mean step over
    tokens a step)."""
    raw = []
    for a in arms:
        for r, rec in enumerate(point["step_ms"].get(a) or []):
            if not rec or "trace" not in rec or "start_monotonic_s" not in rec:
                continue
            tr = rec["trace"]
            at = np.asarray(tr["at_ms"], float) / 1e3 + rec["start_monotonic_s"]
            ms = np.asarray(tr["ms"], float)
            n = len(ms)
            firsts = np.asarray(tr.get("firsts") or [0] * n)
            added = np.asarray(tr.get("added") or [0] * n)
            inflight = np.asarray(tr.get("inflight") or [1] * n)
            decode = (firsts == 0) & (added == 0)
            tpots = point.get("tpot_ms", {}).get(a) or []
            per_step = point.get("tokens_per_step", {}).get(a) or []
            raw.append({"arm": a, "round": r, "start": float(at[0]),
                        "end": float(at[-1] + ms[-1] / 1e3),
                        "at": at[decode], "ms": ms[decode], "inflight": inflight[decode],
                        "tpot": tpots[r] if r < len(tpots) else None,
                        "tokens_per_step": per_step[r] if r < len(per_step) else None})
    if not raw:
        raise ValueError("no step traces in this point (abab.py before the trace?)")
    # Per arm and in-flight count: the mean decode step over every round.
    ref: dict[tuple[str, int], float] = {}
    for a in {s["arm"] for s in raw}:
        ms = np.concatenate([s["ms"] for s in raw if s["arm"] == a])
        inf = np.concatenate([s["inflight"] for s in raw if s["arm"] == a])
        arm_mean = float(ms.mean())
        for k in np.unique(inf):
            sel = inf == k
            ref[a, int(k)] = float(ms[sel].mean()) if sel.sum() >= MIN_BUCKET_STEPS else arm_mean
    raw.sort(key=lambda s: s["start"])
    t, y, seg = [], [], []
    segments = []
    for i, s in enumerate(raw):
        norm = np.array([ref[s["arm"], int(k)] for k in s["inflight"]])
        t.append(s["at"])
        y.append(s["ms"] / norm)
        seg.append(np.full(len(s["ms"]), i))
        mean_step = float(s["ms"].mean())
        segments.append({"arm": s["arm"], "round": s["round"], "start": s["start"],
                         "end": s["end"], "steps": len(s["ms"]), "tpot": s["tpot"],
                         "step_per_token": (mean_step / s["tokens_per_step"]
                                            if s["tokens_per_step"] else None)})
    return {"t": np.concatenate(t), "y": np.concatenate(y), "seg": np.concatenate(seg),
            "segments": segments, "arms": arms}


def gaps(series: dict) -> list[float]:
    segs = series["segments"]
    return [b["start"] - a["end"] for a, b in zip(segs, segs[1:])]


# --------------------------------------------------------------------------
# Windows


class Cum:
    """Window means of ``y`` over steps starting in [a, b) by cumulative
    sums (``t`` sorted)."""

    def __init__(self, t: np.ndarray, y: np.ndarray):
        order = np.argsort(t, kind="stable")
        self.t = t[order]
        self.c = np.concatenate([[0.0], np.cumsum(y[order])])

    def mean(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i = np.searchsorted(self.t, a, "left")
        j = np.searchsorted(self.t, b, "left")
        n = j - i
        with np.errstate(invalid="ignore", divide="ignore"):
            m = (self.c[j] - self.c[i]) / n
        return m, n


def windows_within(series: dict, tau: float) -> list[np.ndarray]:
    """Per segment, the log means of ``y`` over consecutive windows of
    ``tau`` s tiled from the segment's first decode step (whole windows only,
    each with at least MIN_WINDOW_STEPS steps; a short one ends the run of
    windows, so adjacent entries are adjacent in time)."""
    cum = Cum(series["t"], series["y"])
    out = []
    for i, s in enumerate(series["segments"]):
        ts = series["t"][series["seg"] == i]
        if len(ts) == 0:
            out.append(np.array([]))
            continue
        k = int((s["end"] - ts[0]) // tau)
        a = ts[0] + tau * np.arange(k)
        m, n = cum.mean(a, a + tau)
        ok = n >= MIN_WINDOW_STEPS
        stop = int(np.argmin(ok)) if not ok.all() else k
        out.append(np.log(m[:stop]))
    return out


def windows_timeline(series: dict, tau: float) -> np.ndarray:
    """Log means of ``y`` over windows of ``tau`` s tiled over the whole
    timeline, arms mixed (NaN for a window with too few steps)."""
    cum = Cum(series["t"], series["y"])
    t0, t1 = series["t"].min(), series["segments"][-1]["end"]
    k = int((t1 - t0) // tau)
    a = t0 + tau * np.arange(k)
    m, n = cum.mean(a, a + tau)
    m = np.where(n >= MIN_WINDOW_STEPS, m, np.nan)
    return np.log(m)


def allan(runs: list[np.ndarray]) -> tuple[float, int]:
    """Allan deviation of runs of adjacent window means: sqrt(mean(diff^2)/2)
    and the number of differences."""
    d = np.concatenate([np.diff(r) for r in runs if len(r) > 1] or [np.array([])])
    d = d[np.isfinite(d)]
    return (float(np.sqrt(0.5 * np.mean(d ** 2))) if len(d) else float("nan")), len(d)


def acf(x: np.ndarray, lags: list[int]) -> list[float]:
    """Autocorrelation of a series with NaN holes (pairs with both ends)."""
    x = x - np.nanmean(x)
    var = np.nanmean(x ** 2)
    out = []
    for lag in lags:
        if lag >= len(x):
            out.append(float("nan"))
            continue
        p = x[:-lag] * x[lag:]
        out.append(float(np.nanmean(p) / var) if np.isfinite(p).any() else float("nan"))
    return out


# --------------------------------------------------------------------------
# Tables


def pct(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}%"


def table_holds(series: dict, point: dict) -> tuple[list[str], dict]:
    segs = series["segments"]
    lens = [s["end"] - s["start"] for s in segs]
    g = gaps(series)
    span = segs[-1]["end"] - segs[0]["start"]
    dev = [abs(s["tpot"] / s["step_per_token"] - 1) for s in segs
           if s["tpot"] and s["step_per_token"]]
    rounds = max(s["round"] for s in segs) + 1
    out = {"segments": len(segs), "rounds": rounds, "steps": int(len(series["y"])),
           "segment_s_median": float(np.median(lens)), "segment_s_min": float(min(lens)),
           "segment_s_max": float(max(lens)), "gap_s_median": float(np.median(g)) if g else 0.0,
           "gap_s_max": float(max(g)) if g else 0.0, "span_s": span,
           "tpot_vs_step_max_dev": max(dev) if dev else None}
    lines = [
        "1. what the file holds",
        f"   {len(segs)} segments ({len(series['arms'])} arms x {rounds} rounds), "
        f"{len(series['y'])} decode steps with start and duration",
        f"   segment {out['segment_s_min']:.2f}-{out['segment_s_max']:.2f} s "
        f"(median {out['segment_s_median']:.2f}), pause between segments median "
        f"{1e3 * out['gap_s_median']:.0f} ms (max {1e3 * out['gap_s_max']:.0f}), "
        f"span {span:.1f} s",
        f"   TPOT vs mean decode step / tokens a step, per segment: within "
        f"{pct(out['tpot_vs_step_max_dev'])} (the steps carry TPOT)"]
    return lines, out


def table_steps(series: dict) -> tuple[list[str], dict]:
    y, seg = series["y"], series["seg"]
    same = seg[1:] == seg[:-1]
    ly = np.log(y)
    d = ly - ly.mean()
    r1 = float(np.sum(d[1:][same] * d[:-1][same]) / np.sum(d ** 2))
    out = {"step_sd": float(np.std(y)), "lag1": r1,
           "tiny_share": float(np.mean(y < 0.3)), "long_share": float(np.mean(y > 2))}
    lines = ["2. single steps (normalized step y; a stall is often followed by "
             "near-zero steps as the client catches up with the engine core)",
             f"   sd {pct(out['step_sd'])}, lag-1 autocorrelation of log y {r1:+.2f}, "
             f"steps < 0.3x mean {pct(out['tiny_share'])}, > 2x {pct(out['long_share'])}"]
    return lines, out


def table_timescale(series: dict, taus: list[float]) -> tuple[list[str], dict]:
    rows = []
    tau0 = taus[0]
    a0 = None
    for tau in taus:
        within = windows_within(series, tau)
        flat = np.concatenate(within) if within else np.array([])
        a_in, n_in = allan(within)
        line = windows_timeline(series, tau)
        a_tl, n_tl = allan([line])
        if a0 is None:
            a0 = a_tl
        white = a0 * math.sqrt(tau0 / tau)
        rows.append({"tau_s": tau, "windows_within": int(len(flat)),
                     "sd_within": float(np.std(flat)) if len(flat) > 1 else float("nan"),
                     "allan_within": a_in, "pairs_within": n_in,
                     "sd_timeline": float(np.nanstd(line)),
                     "allan_timeline": a_tl, "pairs_timeline": n_tl,
                     "white_from_tau0": white})
    lags = [1, 2, 4, 8, 16]
    ac = acf(windows_timeline(series, tau0), lags)
    repeat = {a: repeating_share(series, tau0, a) for a in series["arms"]}
    lines = ["3. timescale: y averaged over windows of tau seconds "
             "(log; Allan = rms of adjacent-window difference / sqrt 2)",
             f"   {'tau s':>6} {'win':>5} {'sd in seg':>9} {'Allan in seg':>12} "
             f"{'sd timeline':>11} {'Allan timeline':>14} {'white from tau0':>15} "
             f"{'Allan/white':>11}"]
    for r in rows:
        lines.append(f"   {r['tau_s']:>6g} {r['windows_within']:>5} {pct(r['sd_within']):>9} "
                     f"{pct(r['allan_within']):>12} {pct(r['sd_timeline']):>11} "
                     f"{pct(r['allan_timeline']):>14} {pct(r['white_from_tau0']):>15} "
                     f"{r['allan_timeline'] / r['white_from_tau0']:>11.2f}")
    lines.append(f"   autocorrelation of {tau0:g} s window means at lag "
                 + ", ".join(f"{lag * tau0:g} s {v:+.2f}" for lag, v in zip(lags, ac)))
    lines.append(f"   share of the {tau0:g} s windows' variance inside a segment that repeats "
                 "every round at the same place (the workload's own shape, which "
                 "cancels in a pair): " + ", ".join(f"{a} {pct(v, 0)}" for a, v in repeat.items()))
    return lines, {"rows": rows, "acf_tau_s": tau0,
                   "acf": {str(lag * tau0): v for lag, v in zip(lags, ac)},
                   "repeating_share": repeat}


def repeating_share(series: dict, tau: float, arm: str) -> float:
    """Of the variance of an arm's ``tau`` windows about their segment's mean,
    the share that is the same in every round at the same place in the
    segment (the workload's shape): variance of the across-round mean
    profile, less its sampling part, over the total; 0 if none shows."""
    w = windows_within(series, tau)
    rows = [w[i] for i, s in enumerate(series["segments"]) if s["arm"] == arm and len(w[i])]
    if len(rows) < 3:
        return float("nan")
    k = min(len(r) for r in rows)
    if k < 2:
        return float("nan")
    m = np.array([r[:k] for r in rows])
    m = m - m.mean(axis=1, keepdims=True)
    total = m.var()
    if total <= 0:
        return 0.0
    profile = m.mean(axis=0).var() - m.var(axis=0, ddof=1).mean() / len(rows)
    return float(max(profile, 0.0) / total)


def segment_means(series: dict) -> np.ndarray:
    return np.array([math.log(series["y"][series["seg"] == i].mean())
                     for i in range(len(series["segments"]))])


def table_adjacent(series: dict, tau0: float, allan_tau0: float,
                   point: dict) -> tuple[list[str], dict]:
    m = segment_means(series)
    segs = series["segments"]
    lens = np.array([s["end"] - s["start"] for s in segs])
    steps = np.array([s["steps"] for s in segs], float)
    step_var = float(np.var(series["y"]))
    out = {"lags": []}
    lines = [f"4. adjacent segments as run (log ratio of segment means). Short-scale "
             f"part: what noise that is white above {tau0:g} s would give "
             f"(Allan({tau0:g} s)^2 x {tau0:g} s / segment length, per segment); "
             "in brackets, independent single steps (step variance / steps). "
             "The rest is drift: motion of the host's speed over a segment or longer"]
    lines.append(f"   {'apart':>5} {'pairs':>5} {'sd of ratio':>11} {'short-scale part':>21} "
                 f"{'drift share of var':>18}")
    for lag in (1, 2, 3):
        if len(m) <= lag:
            continue
        d = m[lag:] - m[:-lag]
        sd = float(np.sqrt(np.mean(d ** 2)))  # about 0: normalized per arm
        # Var of one segment mean from short-timescale noise alone: white at
        # tau0, so Allan^2 x tau0 / T; two segments per difference.
        white = float(np.sqrt(np.mean(allan_tau0 ** 2 * tau0 * (1 / lens[lag:] + 1 / lens[:-lag]))))
        single = float(np.sqrt(np.mean(step_var * (1 / steps[lag:] + 1 / steps[:-lag]))))
        share = 1 - white ** 2 / sd ** 2 if sd > 0 else float("nan")
        out["lags"].append({"apart": lag, "pairs": int(len(d)), "sd": sd,
                            "short_scale": white, "single_steps": single,
                            "drift_share": share})
        lines.append(f"   {lag:>5} {len(d):>5} {pct(sd):>11} {pct(white):>12} [{pct(single):>6}] "
                     f"{pct(max(share, 0.0), 0):>18}")
    # Segment start: the first START_S against the rest of the same segment.
    diffs = []
    for i, s in enumerate(segs):
        sel = series["seg"] == i
        t, y = series["t"][sel], series["y"][sel]
        head = t < t[0] + START_S
        if head.sum() >= MIN_WINDOW_STEPS and (~head).sum() >= MIN_WINDOW_STEPS:
            diffs.append(math.log(y[head].mean()) - math.log(y[~head].mean()))
    if len(diffs) > 1:
        dm, dsd = float(np.mean(diffs)), float(np.std(diffs, ddof=1))
        half = t95(len(diffs) - 1) * dsd / math.sqrt(len(diffs))
        out["start"] = {"seconds": START_S, "mean": dm, "ci95_half": half, "sd": dsd,
                        "segments": len(diffs)}
        lines.append(f"   first {START_S:g} s of a segment vs its rest: {dm * 100:+.1f}% "
                     f"[95% CI +-{100 * half:.1f}], sd {pct(dsd)} over {len(diffs)} segments")
    cross = boundary_allan(series, [tau0, 2 * tau0, 4 * tau0])
    out["boundary"] = cross
    lines.append("   shared by the engines? Allan of the last window of a segment and the "
                 "first of the next (two arms' engines) vs inside a segment (one engine), "
                 "with the correlation across the boundary: "
                 + "; ".join(f"{c['tau_s']:g} s {pct(c['across'])} vs {pct(c['inside'])} "
                             f"(r {c['corr']:+.2f}, n {c['pairs']})" for c in cross))
    corr = host_correlation(series, point, m)
    if corr:
        out["host_corr"] = corr
        lines.append("   segment mean y against its round's host counters (cell.HostClock), "
                     f"correlation over {len(m)} segments: "
                     + ", ".join(f"{k} {v:+.2f}" for k, v in corr.items()))
    return lines, out


def boundary_allan(series: dict, taus: list[float]) -> list[dict]:
    """Per tau: the Allan deviation of the pair (last tau of a segment, first
    tau of the next), two different engines, against adjacent windows inside
    segments, one engine; and the correlation across the boundary. If the
    slowness were each engine's own, the boundary pairs would differ more
    and correlate less."""
    cum = Cum(series["t"], series["y"])
    segs = series["segments"]
    out = []
    for tau in taus:
        ends = np.array([s["end"] for s in segs[:-1]])
        starts = np.array([series["t"][series["seg"] == i + 1].min() for i in range(len(segs) - 1)])
        m1, n1 = cum.mean(ends - tau, ends)
        m2, n2 = cum.mean(starts, starts + tau)
        ok = (n1 >= MIN_WINDOW_STEPS) & (n2 >= MIN_WINDOW_STEPS)
        a, b = np.log(m1[ok]), np.log(m2[ok])
        inside, _ = allan(windows_within(series, tau))
        across = float(np.sqrt(0.5 * np.mean((b - a) ** 2))) if ok.any() else float("nan")
        out.append({"tau_s": tau, "pairs": int(ok.sum()), "across": across,
                    "inside": inside,
                    "corr": float(np.corrcoef(a, b)[0, 1]) if ok.sum() > 2 else float("nan")})
    return out


def host_correlation(series: dict, point: dict, m: np.ndarray) -> dict:
    """Correlation of the segments' mean log y with their rounds' host
    counters (``step_ms[arm][round]["host"]``), where recorded and varying."""
    cols: dict[str, list[float]] = {}
    for s in series["segments"]:
        rec = point["step_ms"][s["arm"]][s["round"]] or {}
        host = rec.get("host") or {}
        for key in ("steal", "busy", "cpu_wait_ms", "throttled_ms"):
            cols.setdefault(key, []).append(float(host.get(key, np.nan)))
    out = {}
    for key, v in cols.items():
        v = np.array(v)
        if np.isfinite(v).all() and np.std(v) > 0:
            out[key] = float(np.corrcoef(m, v)[0, 1])
    return out


def replay(series: dict, seg_s: float, n_arms: int, gap_s: float, total_s: float,
           offsets: int, detail: bool = False) -> dict:
    """ABBA schedules of ``n_arms`` segments of ``seg_s`` (``gap_s`` apart)
    laid on the wrapped ``y`` timeline at ``offsets`` start offsets; as many
    rounds as fit into ``total_s``. Per arm position i (1..n_arms-1): the
    rms over offsets of the per-round ratio's sd, the mean 95% half-width
    over offsets, and the rms error of the mean ratio; and the base arm's
    sd and (max - min) / median over rounds."""
    t, y = series["t"], series["y"]
    t0 = t.min()
    span = series["segments"][-1]["end"] - t0
    tt = np.concatenate([t - t0, t - t0 + span])
    cum = Cum(tt, np.concatenate([y, y]))
    slot = seg_s + gap_s
    rounds = int(total_s // (n_arms * slot))
    if rounds < 2:
        return {"segment_s": seg_s, "rounds": rounds}
    starts = np.arange(rounds * n_arms) * slot  # slot j of the schedule
    phis = np.linspace(0.0, span, offsets, endpoint=False)
    a = (starts[None, :] + phis[:, None]) % span
    m, n = cum.mean(a, a + seg_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        lm = np.log(m)
    lm = np.where(n >= MIN_WINDOW_STEPS, lm, np.nan)
    lm = lm.reshape(offsets, rounds, n_arms)  # [offset, round, slot in round]
    # Round r's order: arm i at slot i (even r), at slot n_arms-1-i (odd r).
    odd = np.arange(rounds) % 2 == 1
    by_arm = np.where(odd[None, :, None], lm[:, :, ::-1], lm)  # [offset, round, arm]
    base = by_arm[:, :, 0]
    out = {"segment_s": seg_s, "rounds": rounds, "positions": []}
    tq = t95(rounds - 1)
    for i in range(1, n_arms):
        r = by_arm[:, :, i] - base  # log ratio per round
        sd = np.nanstd(r, axis=1, ddof=1)
        mean = np.nanmean(r, axis=1)
        out["positions"].append({
            "apart": i, "sd_ratio": float(np.sqrt(np.nanmean(sd ** 2))),
            "ci95_half": float(np.nanmean(tq * sd / math.sqrt(rounds))),
            "rms_error_of_mean": float(np.sqrt(np.nanmean(mean ** 2)))})
        if detail:
            out["positions"][-1].update(errors=mean, halves=tq * sd / math.sqrt(rounds),
                                        sds=sd)
    bsd = np.nanstd(base, axis=1, ddof=1)
    bexp = np.exp(base)
    brange = (np.nanmax(bexp, axis=1) - np.nanmin(bexp, axis=1)) / np.nanmedian(bexp, axis=1)
    out["base_sd"] = float(np.sqrt(np.nanmean(bsd ** 2)))
    out["base_range"] = float(np.nanmean(brange))
    return out


def observed_ratios(point: dict, arms: list[str]) -> list[dict]:
    """The run's own per-round TPOT ratios against the base arm: sd of the
    log ratio over rounds and abab.py's 95% half-width, per arm position."""
    base = point["tpot_ms"].get(arms[0]) or []
    out = []
    for i, a in enumerate(arms[1:], 1):
        v = point["tpot_ms"].get(a) or []
        r = np.log(np.array(v[:len(base)]) / np.array(base[:len(v)]))
        if len(r) < 2:
            continue
        sd = float(np.std(r, ddof=1))
        ratios = np.exp(r)
        half = t95(len(r) - 1) * float(np.std(ratios, ddof=1)) / math.sqrt(len(r))
        out.append({"arm": a, "apart": i, "sd_ratio": sd, "ci95_half": half})
    b = np.array(base)
    return out + [{"arm": arms[0], "base_sd": float(np.std(np.log(b), ddof=1)),
                   "base_range": float((b.max() - b.min()) / np.median(b))}]


def table_replay(series: dict, point: dict, seg_list: list[float], n_arms: int,
                 gap_s: float, total_s: float, offsets: int,
                 own_seg_s: float) -> tuple[list[str], dict]:
    lines = [f"5. replay: ABBA, {n_arms} arms, {total_s:.0f} s of segments and pauses "
             f"({1e3 * gap_s:.0f} ms each), {offsets} start offsets; per arm position "
             "(segments from the base in each round): sd of the per-round ratio / "
             "95% half-width of its mean / rms actual error of the mean"]
    head = f"   {'T s':>5} {'rounds':>6}"
    for i in range(1, n_arms):
        head += f" {f'{i} apart: sd / CI / err':>26}"
    head += f" {'base sd':>8} {'base range':>10}"
    lines.append(head)
    rows = []
    own = round(own_seg_s, 2)
    for seg_s in sorted(set(seg_list) | {own}):
        r = replay(series, seg_s, n_arms, gap_s, total_s, offsets)
        rows.append(r)
        if r["rounds"] < 2:
            lines.append(f"   {seg_s:>5g} {r['rounds']:>6}  (fewer than 2 rounds fit)")
            continue
        text = f"   {seg_s:>5g} {r['rounds']:>6}"
        for p in r["positions"]:
            text += (f" {pct(p['sd_ratio']):>8} / {pct(p['ci95_half']):>6} / "
                     f"{pct(p['rms_error_of_mean']):>6}")
        text += f" {pct(r['base_sd']):>8} {pct(r['base_range']):>10}"
        if seg_s == own:
            text += "   <- the run's own segment length"
        lines.append(text)
    obs = observed_ratios(point, series["arms"])
    text = f"   run's own TPOT ({len(point['tpot_ms'][series['arms'][0]])} rounds):"
    for o in obs:
        if "apart" in o:
            text += (f" {o['arm']} ({o['apart']} apart) sd {pct(o['sd_ratio'])} "
                     f"CI +-{pct(o['ci95_half'])};")
        else:
            text += f" base sd {pct(o['base_sd'])}, range {pct(o['base_range'])}"
    lines.append(text)
    return lines, {"rows": rows, "observed": obs}


MODEL_BIN_S = 0.05     # table 5b: the timeline's bins
MODEL_SMOOTH = 9       # table 5b: periodogram smoothed over this many frequencies


def model_draws(series: dict, length_s: float, draws: int,
                rng: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray]]:
    """Fresh series of ``length_s`` seconds from a stationary Gaussian
    process with the spectrum of this run's ``y`` timeline: ``y`` averaged
    over MODEL_BIN_S bins, its periodogram smoothed over MODEL_SMOOTH
    neighbouring frequencies (as a power density), new amplitudes and
    phases per draw. Returns the bins' times and the draws."""
    t0 = series["t"].min()
    span = series["segments"][-1]["end"] - t0
    dt = MODEL_BIN_S
    nb = int(span // dt)
    idx = ((series["t"] - t0) // dt).astype(int)
    ok = idx < nb
    sums = np.bincount(idx[ok], weights=series["y"][ok], minlength=nb)
    counts = np.bincount(idx[ok], minlength=nb)
    x = np.full(nb, np.nan)
    np.divide(sums, counts, out=x, where=counts > 0)
    good = np.isfinite(x)
    x[~good] = np.interp(np.flatnonzero(~good), np.flatnonzero(good), x[good])
    level = x.mean()
    psd = np.abs(np.fft.rfft(x - level)) ** 2 * dt / nb
    f = np.fft.rfftfreq(nb, dt)
    k = np.ones(MODEL_SMOOTH) / MODEL_SMOOTH
    smooth = psd.copy()
    smooth[1:] = np.convolve(np.pad(psd[1:], MODEL_SMOOTH // 2, mode="reflect"), k, "valid")
    n2 = int(math.ceil(length_s / dt))
    f2 = np.fft.rfftfreq(n2, dt)
    s2 = np.interp(f2, f[1:], smooth[1:])
    s2[0] = 0.0
    scale = np.sqrt(s2 * n2 / dt / 2)
    out = []
    for _ in range(draws):
        z = scale * (rng.standard_normal(len(f2)) + 1j * rng.standard_normal(len(f2)))
        z[0] = 0.0
        if n2 % 2 == 0:
            z[-1] = z[-1].real * math.sqrt(2)
        out.append(np.maximum(level + np.fft.irfft(z, n=n2), 1e-3))
    return np.arange(n2) * dt, out


def model_check(series: dict, seg_s: float, n_arms: int, gap_s: float, total_s: float,
                draws: int, seed: int = 0) -> dict:
    """The ABBA schedule on ``draws`` fresh model series (``model_draws``):
    per arm position, the sd of the per-round ratio, abab.py's t half-width
    (mean over draws), the half-width that holds 95% of the draws' actual
    errors of the mean, and the share of draws whose t interval holds the
    true ratio (1)."""
    rng = np.random.default_rng(seed)
    length = total_s + seg_s + gap_s
    t, ys = model_draws(series, length, draws, rng)
    per: dict[int, dict[str, list]] = {}
    rounds = 0
    for y in ys:
        ser = {"t": t, "y": y, "seg": np.zeros(len(t), int),
               "segments": [{"end": t[-1] + MODEL_BIN_S}]}
        r = replay(ser, seg_s, n_arms, gap_s, total_s, 1, detail=True)
        rounds = r["rounds"]
        if rounds < 2:
            return {"segment_s": seg_s, "rounds": rounds}
        for p in r["positions"]:
            d = per.setdefault(p["apart"], {"err": [], "half": [], "sd": []})
            d["err"].append(float(p["errors"][0]))
            d["half"].append(float(p["halves"][0]))
            d["sd"].append(float(p["sds"][0]))
    out = {"segment_s": seg_s, "rounds": rounds, "draws": draws, "positions": []}
    for apart, d in sorted(per.items()):
        err, half = np.abs(np.array(d["err"])), np.array(d["half"])
        out["positions"].append({
            "apart": apart, "sd_ratio": float(np.sqrt(np.mean(np.square(d["sd"])))),
            "ci95_half": float(np.mean(half)),
            "error_95": float(np.quantile(err, 0.95)),
            "coverage": float(np.mean(err <= half))})
    return out


def table_model(series: dict, seg_list: list[float], n_arms: int, gap_s: float,
                total_s: float, draws: int) -> tuple[list[str], dict]:
    lines = [f"5b. model: Gaussian host noise with this run's spectrum ({MODEL_BIN_S:g} s "
             f"bins, periodogram smoothed over {MODEL_SMOOTH} frequencies), {draws} fresh "
             f"draws of the same ABBA schedule ({total_s:.0f} s); per arm position: sd of "
             "the per-round ratio / abab.py's t half-width / half-width that holds 95% "
             "of the actual errors / share of t intervals that hold the truth"]
    head = f"   {'T s':>5} {'rounds':>6}"
    for i in range(1, n_arms):
        head += f" {f'{i} apart: sd / t CI / true 95% / cover':>38}"
    lines.append(head)
    rows = []
    for seg_s in sorted(set(seg_list)):
        r = model_check(series, seg_s, n_arms, gap_s, total_s, draws)
        rows.append(r)
        if r["rounds"] < 2:
            lines.append(f"   {seg_s:>5g} {r['rounds']:>6}  (fewer than 2 rounds fit)")
            continue
        text = f"   {seg_s:>5g} {r['rounds']:>6}"
        for p in r["positions"]:
            text += (f" {pct(p['sd_ratio']):>8} / {pct(p['ci95_half']):>6} / "
                     f"{pct(p['error_95']):>6} / {pct(p['coverage'], 0):>5}")
        lines.append(text)
    return lines, {"rows": rows}


def request_times(point: dict, arm: str) -> np.ndarray | None:
    """At c = 1 (one request at a time): per round and request, the time from
    its first token to its last (the steps after the first-token step up to
    the step it finished in), s; None where the rounds differ in requests."""
    rows = []
    for rec in point["step_ms"].get(arm) or []:
        tr = (rec or {}).get("trace")
        if not tr or "finished" not in tr:
            return None
        ms = np.asarray(tr["ms"], float)
        starts = np.flatnonzero(np.asarray(tr["firsts"]) > 0)
        ends = np.flatnonzero(np.asarray(tr["finished"]) > 0)
        if len(starts) != len(ends) or np.any(ends < starts):
            return None
        rows.append([ms[s + 1:e + 1].sum() / 1e3 for s, e in zip(starts, ends)])
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return np.array(rows)


def table_prompts(point: dict, arms: list[str]) -> tuple[list[str], dict]:
    """c = 1 only: per pair of arms, the log ratio of the same request's
    decode time (same prompt, same length: TPOT's ratio) by request. Its
    mean over rounds differs between prompts by the pair's true
    prompt-to-prompt spread (less the rounds' sampling part) on top of the
    host's noise; the per-request noise is the spread about each round's
    mean. What a round of one request would add if prompts rotated."""
    if point.get("concurrency") != 1:
        return [], {}
    times = {a: request_times(point, a) for a in arms}
    if any(v is None for v in times.values()) or len({v.shape for v in times.values()}) != 1:
        return [], {}
    rounds, k = times[arms[0]].shape
    if rounds < 2 or k < 2:
        return [], {}
    lines = [f"6. per request (c = 1: {k} requests a round, the same prompts every round): "
             "log ratio of a request's decode time between two arms; prompt-to-prompt "
             "sd of the pair's true ratio / per-request sd about the round's mean"]
    out = {}
    pairs = []
    for i in range(len(arms)):
        for j in range(i + 1, len(arms)):
            lr = np.log(times[arms[j]] / times[arms[i]])
            within = float((lr - lr.mean(axis=1, keepdims=True)).var(axis=0, ddof=1).mean())
            het = float(lr.mean(axis=0).var(ddof=1) - within / rounds)
            name = f"{arms[j]}/{arms[i]}"
            out[name] = {"prompt_sd": math.sqrt(max(het, 0.0)), "request_sd": math.sqrt(within)}
            pairs.append(f"{name} {pct(out[name]['prompt_sd'])} / {pct(out[name]['request_sd'])}")
    for n in range(0, len(pairs), 3):
        lines.append("   " + "; ".join(pairs[n:n + 3]))
    return lines, out


def analyze(point: dict, arms: list[str], taus: list[float], seg_list: list[float],
            n_arms: int | None, gap_s: float | None, total_s: float | None,
            offsets: int, draws: int = 0) -> tuple[list[str], dict]:
    series = point_series(point, arms)
    lines, out = [], {"concurrency": point.get("concurrency")}
    for name, (ls, o) in (("holds", table_holds(series, point)),
                          ("steps", table_steps(series))):
        lines += ls
        out[name] = o
    ls, o = table_timescale(series, taus)
    lines += ls
    out["timescale"] = o
    ls, o = table_adjacent(series, taus[0], o["rows"][0]["allan_timeline"], point)
    lines += ls
    out["adjacent"] = o
    h = out["holds"]
    gap = h["gap_s_median"] if gap_s is None else gap_s
    total = h["span_s"] if total_s is None else total_s
    ls, o = table_replay(series, point, seg_list, n_arms or len(arms), gap, total, offsets,
                         h["segment_s_median"])
    lines += ls
    out["replay"] = o
    if draws:
        ls, o = table_model(series, seg_list, n_arms or len(arms), gap, total, draws)
        lines += ls
        out["model"] = o
    ls, o = table_prompts(point, arms)
    lines += ls
    out["prompts"] = o
    return lines, out


def select(lines: list[str], tables: set[int]) -> list[str]:
    """The lines of the numbered tables in ``tables``."""
    out, keep = [], True
    for line in lines:
        head = line.split(".", 1)[0]
        if head.isdigit():
            keep = int(head) in tables
        if keep:
            out.append(line)
    return out


def totals(text: str) -> dict[int | None, float]:
    """``--total-s``: ``S`` for every point, or ``C:S[,C:S...]``."""
    try:
        if ":" not in text:
            v = float(text)
            if v <= 0:
                raise ValueError
            return {None: v}
        out = {}
        for item in text.split(","):
            c, _, v = item.partition(":")
            out[int(c)] = float(v)
            if out[int(c)] <= 0:
                raise ValueError
        return out
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not S or C:S[,C:S...] with S > 0 (e.g. 90 or 1:158.5,8:144.8)")


def floats(text: str) -> list[float]:
    try:
        v = [float(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
    if not v or any(x <= 0 for x in v):
        raise argparse.ArgumentTypeError(f"{text!r}: every value must be > 0")
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("files", nargs="+", metavar="[NAME=]ABAB.json[.gz]")
    ap.add_argument("--taus", type=floats, default=[0.25, 0.5, 1, 2, 4, 8],
                    help="window lengths, s, shortest first (table 3)")
    ap.add_argument("--segments", type=floats, default=[0.5, 1, 2, 5],
                    help="segment lengths per arm to replay, s (table 5)")
    ap.add_argument("--arms", type=int, default=None,
                    help="arms in the replayed schedule (default: the file's)")
    ap.add_argument("--gap-s", type=float, default=None,
                    help="pause between segments in the replay (default: the run's median)")
    ap.add_argument("--total-s", type=totals, default=None,
                    help="measuring time per point in the replay, s: one number, or "
                         "C:S[,C:S...] per concurrency (default: the point's own span)")
    ap.add_argument("--offsets", type=int, default=200,
                    help="start offsets of the replayed schedule")
    ap.add_argument("--draws", type=int, default=400,
                    help="fresh model draws per segment length (table 5b; 0: none)")
    ap.add_argument("--concurrency", type=int, action="append",
                    help="only these points (repeatable)")
    ap.add_argument("--tables", type=lambda t: {int(x) for x in t.split(",")},
                    default={1, 2, 3, 4, 5, 6},
                    help="which tables to print, e.g. 5 (all are computed)")
    ap.add_argument("--json", type=Path, help="write every table's numbers here")
    args = ap.parse_args(argv)
    if args.taus != sorted(args.taus):
        ap.error("--taus: shortest first")
    if args.arms is not None and args.arms < 2:
        ap.error("--arms: at least 2")
    report = []
    for spec in args.files:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).parent.name or spec, spec
        d = read_json(Path(path))
        for point in d["points"]:
            c = point.get("concurrency")
            if args.concurrency and c not in args.concurrency:
                continue
            if point.get("bystanders"):
                continue
            arms = [a for a in d["arms"] if point["tpot_ms"].get(a)]
            print(f"== {name} c={c} (arms {', '.join(arms)}; base {arms[0]})")
            total = None
            if args.total_s is not None:
                total = args.total_s.get(c, args.total_s.get(None))
            lines, out = analyze(point, arms, args.taus, args.segments, args.arms,
                                 args.gap_s, total, args.offsets, args.draws)
            print("\n".join(select(lines, args.tables)))
            print()
            report.append({"name": name, "file": str(path), **out})
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
