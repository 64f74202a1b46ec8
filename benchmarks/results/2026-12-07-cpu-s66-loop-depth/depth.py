"""How far the DSL loop drafts at 8-64 requests under each start-up table.

    python3 depth.py [--steps N]

Session 66's A/B (``../2026-12-07-h100-s66/``): at a cap of 8 the served
width of 8-64 requests stayed at 3 drafts, with or without forgetting, where
at a cap of 4 it went to 2 (session 65). The served width's first move is at
once to the most the loop drafted in its first window (``served_width.py``:
where the loop never filled the width): 2 at a cap of 4, 3 at a cap of 8, in
both sessions' logs at 8 requests. The loop's rule reads the start-up table's
``V(B)``, the rest of an engine step, timed at the cap's verify width (K + 1
tokens a request): at 8 rows 6.827 ms at a cap of 4 and 7.116 at 8, at 32
rows 8.968 and 11.965 (session 65's engines). A larger ``V`` makes a draft
step look cheaper (the rule goes on while gain / tokens > D / (V + i D)), so
the same confidences draft further.

This replays the rule (``../2026-12-06-cpu-s49-batch-stop-traces/batch.py``'s
``rule_steps``, the kernel's batch rule) on session 44's traces (the proxies'
16-layer draft, ShareGPT test split) in waves of B requests, and prints, per
B and table:

- the share of steps the loop drafts 1, 2, 3 (width 3) and its most over a
  first window at the cap (24 counted steps at 8 requests: 4 units of 32
  requests, 6 counted steps a block; at 32 and 64 one block a unit), i.e.
  where the served width's first move lands;
- SD K=2's TPOT over the rule's at widths 2 and 3 under the H100's served
  costs (as ``batch.py``).

Tables: ``cap4`` and ``cap8`` (session 65's engines, as logged), and
``cap8@w``: cap 8's ``V`` read at the served width's tokens, ``B (w + 1)``,
on the same table's curve over tokens (``B (K + 1)``), the fix this tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(HERE.parent / "2026-12-06-cpu-s49-batch-stop-traces"))
import batch  # noqa: E402
import trace_stop_sim as ts  # noqa: E402

# Session 65's start-up tables (s65p-abab.log.gz, "prices each draft step"):
# rows: (draft step ms, rest of step ms).
CAP4 = {1: (1.280, 6.363), 2: (1.299, 6.435), 3: (1.315, 6.607), 4: (1.326, 6.580),
        5: (1.345, 6.823), 8: (1.384, 6.827), 10: (1.473, 7.230), 12: (1.487, 7.253),
        16: (1.487, 7.505), 20: (1.639, 8.058), 24: (1.640, 8.213), 32: (1.716, 8.968),
        40: (1.904, 9.605), 48: (1.972, 10.519), 56: (2.125, 11.539), 64: (2.197, 13.102)}
CAP8 = {1: (1.275, 6.473), 2: (1.297, 6.451), 3: (1.318, 6.583), 4: (1.331, 6.806),
        5: (1.345, 6.981), 6: (1.366, 7.039), 7: (1.373, 6.940), 8: (1.385, 7.116),
        9: (1.471, 7.484), 10: (1.476, 7.561), 12: (1.490, 7.626), 14: (1.478, 7.570),
        16: (1.489, 7.978), 18: (1.638, 8.536), 20: (1.638, 8.668), 24: (1.637, 9.082),
        28: (1.693, 9.568), 32: (1.738, 11.965), 36: (1.897, 12.304), 40: (1.894, 12.764),
        48: (1.965, 13.960), 56: (2.123, 15.057)}


def padded(table: dict, b: int) -> tuple[float, float]:
    """The engine's step function: a size costs what the next captured size
    costs (the largest where none is larger)."""
    keys = sorted(table)
    return table[next((k for k in keys if k >= b), keys[-1])]


def at_width(table: dict, cap: int, b: int, width: int) -> tuple[float, float]:
    """``D`` at ``b`` rows; ``V`` read where the table's steps had the served
    width's tokens: ``b (width + 1)`` on the curve of ``V`` over
    ``rows (cap + 1)`` (linear between timed sizes)."""
    d = padded(table, b)[0]
    tokens = b * (width + 1)
    pts = sorted((k * (cap + 1), v) for k, (_, v) in table.items())
    if tokens <= pts[0][0]:
        return d, pts[0][1]
    for (n0, v0), (n1, v1) in zip(pts, pts[1:]):
        if tokens <= n1:
            return d, v0 + (tokens - n0) / (n1 - n0) * (v1 - v0)
    return d, pts[-1][1]


def run(rows, b: int, width: int, costs, steps: int, window: int):
    """Waves of ``b`` requests for ``steps`` steps at ``width`` placed; the
    rule reads ``costs(live_rows, width)``. Returns (mean TPOT, histogram of
    draft steps while all ``b`` rows are in flight, the most drafted in each
    run of ``window`` such steps)."""
    predict = ts.Predictor("raw")
    live = [[i % len(rows), 0, 0.0] for i in range(b)]
    nxt, now, tpots, hist, maxima, cur = b, 0.0, [], [0] * (width + 1), [], []
    for _ in range(steps):
        if not live:
            live = [[(nxt + i) % len(rows), 0, now] for i in range(b)]
            nxt += b
        v0, s, d = batch._interp(batch.SERVED, len(live))
        d_rule, v_rule = costs(len(live), width)
        n = batch.rule_steps(rows, live, width, predict, d_rule, v_rule)
        if len(live) == b:
            hist[n] += 1
            cur.append(n)
            if len(cur) == window:
                maxima.append(max(cur))
                cur = []
        now += v0 + s * width + d * n
        still = []
        for i, t, t0 in live:
            r = rows[i]
            room = len(r["p"]) - t
            got = min(ts.accepted_run(r["accepted"], t, min(n, room)) + 1, room)
            if t + got >= len(r["p"]):
                tpots.append((now - t0) / len(r["p"]))
            else:
                still.append([i, t + got, t0])
        live = still
    return sum(tpots) / len(tpots), hist, maxima


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=6000)
    args = ap.parse_args(argv)
    test = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
    tables = {
        "cap4": (4, lambda b, w: padded(CAP4, b)),
        "cap8": (8, lambda b, w: padded(CAP8, b)),
        "cap8@w": (8, lambda b, w: at_width(CAP8, 8, b, w)),
    }
    lines = [f"test split, waves, {args.steps} steps; SD K=2's TPOT over the rule's (> 1: faster)"]
    for b in (8, 16, 32, 64):
        window = 24 if b < 16 else 4 * 6
        base = batch.run(test, b, 2, 2, args.steps, True)
        for name, (cap, costs) in tables.items():
            _, _, maxima = run(test, b, cap, costs, args.steps, window)
            first = {m: maxima.count(m) for m in sorted(set(maxima))}
            cells = []
            for w in (2, 3):
                tpot, hist, _ = run(test, b, w, costs, args.steps, window)
                tot = sum(hist) or 1
                share = " ".join(f"{n}:{100 * c / tot:.0f}%" for n, c in enumerate(hist) if c)
                cells.append(f"w={w} {base / tpot:.3f} ({share})")
            d, v = costs(b, 3)
            lines.append(
                f"B={b:2d} {name:7s} D {d:.3f} V(w=3) {v:.3f} | " + " | ".join(cells)
                + f" | most drafted in a first window at the cap {cap}: "
                + ", ".join(f"{m}: {c}" for m, c in first.items())
                + f" of {len(maxima)} windows")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
