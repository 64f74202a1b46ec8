"""The DSL loop's batch rule at B > 1, replayed on the drafter's real traces.

    python3 batch.py [--batch 32] [--width 2] [--waves] [--steps N]

``benchmarks/trace_stop_sim.py`` replays one request in flight. Here ``B``
requests are in flight, each a row of session 44's traces (the proxies'
16-layer draft, ShareGPT test split, 128 prompts x 256 tokens). Without
``--waves`` a finished request is replaced by the next row at once (a steady
load of ``B``); with it, ``B`` requests start together and the next ``B``
once all have finished (the A/B's rounds: young requests together, then a
tail of fewer). Every step runs the kernel's batch rule
(``confidence_exit.py``): after draft step ``i`` the loop goes on while
``sum_r A_r x_r / sum_r N_r > D / (V + i D)`` over the step's rows, ``x``
the predictor's value of a row's last draft, ``A_r`` the product of its
values so far, ``N_r = 1 +`` the sum of those products; at most the width
``w`` placed (the served width's), at least one draft step. A step of ``b``
rows lasts ``V0(b) + S(b) w + D(b) n`` (the served costs on the H100: ``n``
draft steps, ``w`` verify slots a request; linear in ``b`` between the
fitted points); the rule reads the start-up table's ``D`` and ``V`` (what
the engine reads). Each row accepts the leading run of its drafts that the
trace marks accepted, plus one token.

Printed per (B, w): each policy's mean TPOT over requests (as the A/B
measures it: a request's time from its first to its last token over its
tokens) as SD K=2's TPOT over it (> 1: faster than SD K=2): the rule on the
raw confidence, on the confidence calibrated by bin on the tune split, a
perfectly informed batch oracle (per step the number of draft steps, 1 to
``w``, that maximises that step's tokens per ms given every row's true
outcome), and SD at K = 1 .. w placed at width w (``sdK@w``; ``sdK@K`` is
SD K). Then the share of the rule's steps by draft steps run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
import trace_stop_sim as ts  # noqa: E402

TRACES = ROOT / "benchmarks/results/2026-12-06-h100-s44-traces"
# Served costs on the H100 (the engines' logs of sessions 48-49: draft step D
# and verify slot S as priced; V0 so that V0 + 2 S + 2 D is SD K=2's median
# engine step at c = 1, 32, 64 in s49q / s49p).
SERVED = {1: (5.84, 0.12, 1.20), 32: (6.38, 0.20, 1.50), 64: (6.79, 0.60, 1.75)}
# The start-up table the rule reads (s49p's engine): D, V.
STARTUP = {1: (1.252, 6.222), 32: (1.670, 8.732), 64: (2.133, 12.939)}


def _interp(table: dict, b: int) -> tuple:
    keys = sorted(table)
    lo = max(k for k in keys if k <= b) if b >= keys[0] else keys[0]
    hi = min(k for k in keys if k >= b) if b <= keys[-1] else keys[-1]
    if lo == hi:
        return table[lo]
    f = (b - lo) / (hi - lo)
    return tuple(a + f * (c - a) for a, c in zip(table[lo], table[hi]))


def rule_steps(rows, live, width: int, predict, d_rule: float, v_rule: float) -> int:
    """The draft steps (1 to ``width``) the kernel's batch rule runs for the
    rows ``live`` (``[row, position, ...]``), ``predict`` giving each draft's
    value and ``d_rule``, ``v_rule`` the costs it reads."""
    n = 1
    surv = [1.0] * len(live)
    total = [1.0] * len(live)
    while n < width:
        last = []
        for k, (i, t, *_) in enumerate(live):
            r = rows[i]
            j = min(t + n - 1, len(r["p"]) - 1)
            last.append(predict(r["p"][j], r["p2"][j], 0.5, n - 1))
            surv[k] *= last[k]
            total[k] += surv[k]
        gain = sum(a * x for a, x in zip(surv, last))
        if gain * (v_rule + n * d_rule) <= d_rule * sum(total):
            break
        n += 1
    return n


def run(rows, b: int, width: int, policy, steps: int, waves: bool, predict=None,
        hist: list | None = None) -> float:
    """Mean TPOT (ms) over the requests that finished within ``steps``
    engine steps. ``policy``: an int K (SD), "rule" (with ``predict``) or
    "oracle"; ``hist`` counts the steps by draft steps run."""
    nxt = b
    # row, position, start time
    live = [[i % len(rows), 0, 0.0] for i in range(b)]
    now = 0.0
    tpots = []
    for _ in range(steps):
        if not live:
            live = [[(nxt + i) % len(rows), 0, now] for i in range(b)]
            nxt += b
        v0, s, d = _interp(SERVED, len(live))
        d_rule, v_rule = _interp(STARTUP, len(live))
        if policy == "oracle":
            best = None
            for n in range(1, width + 1):
                got = sum(1 + ts.accepted_run(rows[i]["accepted"], t, min(n, len(rows[i]["p"]) - t))
                          for i, t, _ in live)
                rate = got / (v0 + s * width + d * n)
                if best is None or rate > best[0]:
                    best = (rate, n)
            n = best[1]
        elif policy == "rule":
            n = rule_steps(rows, live, width, predict, d_rule, v_rule)
        else:
            n = policy
        if hist is not None:
            hist[n] += 1
        now += v0 + s * width + d * n
        still = []
        for i, t, t0 in live:
            r = rows[i]
            room = len(r["p"]) - t
            got = min(ts.accepted_run(r["accepted"], t, min(n, room)) + 1, room)
            if t + got >= len(r["p"]):
                tpots.append((now - t0) / len(r["p"]))
                if not waves:
                    still.append([nxt % len(rows), 0, now])
                    nxt += 1
            else:
                still.append([i, t + got, t0])
        live = still
    return statistics.fmean(tpots)


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--width", type=int, action="append")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--waves", action="store_true")
    args = ap.parse_args(argv)
    tune = ts.load_trace(TRACES / "trace-l16-self-tune.json.gz")
    test = ts.load_trace(TRACES / "trace-l16-self-test.json.gz")
    cal = ts.Predictor("calibrated").fit(ts.samples_of(tune, 0.9, 0.5, 4))
    raw = ts.Predictor("raw")
    lines = [f"SD K=2's TPOT over each policy's (> 1: faster), test split, "
             f"{'waves' if args.waves else 'steady load'}, {args.steps} steps"]
    for b in args.batch or [1, 32, 64]:
        base = run(test, b, 2, 2, args.steps, args.waves)
        for w in args.width or [2, 3, 4]:
            hists = {}
            cells = {}
            for name, pred in (("raw", raw), ("calibrated", cal)):
                hists[name] = [0] * (w + 1)
                cells[name] = run(test, b, w, "rule", args.steps, args.waves, pred, hists[name])
            cells["oracle"] = run(test, b, w, "oracle", args.steps, args.waves)
            for k in range(1, w + 1):
                cells[f"sd{k}@{w}"] = run(test, b, w, k, args.steps, args.waves)
            lines.append(f"B={b:2d} w={w}: " + " ".join(
                f"{name} {base / tpot:.3f}" for name, tpot in cells.items()))
            for name, h in hists.items():
                tot = sum(h) or 1
                lines.append(f"  rule {name}: draft steps " + " ".join(
                    f"{n}: {100 * c / tot:.0f}%" for n, c in enumerate(h) if c))
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
