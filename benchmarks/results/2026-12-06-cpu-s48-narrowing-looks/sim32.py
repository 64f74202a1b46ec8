"""The served width at 32 requests, simulated on CPU against session 48's
H100 A/B (``../2026-12-06-h100-s48/``, ``s48q`` at ``c = 32``): how often a
batch size narrows from 2 drafts to 1 where 2 is cheaper, and what it costs.

    python sim32.py --module A.py [--module B.py ...] [--waves 9] [--seeds 40]

Session 47's simulation (``../2026-12-06-cpu-s47-served-width-start/sim.py``:
the real ``ServedWidthController`` of each ``--module``, waves of requests of
256 tokens, one wave a round, acceptance growing over a request's life, the
batch rule's loop) with waves of 32 and the s48q engine's numbers:

- a step ``V0 + S * width + D * forwards`` with 3% log-normal noise, at 32
  requests ``S + D`` 1.45 ms (SD K=3's median step over SD K=2's, 11.30 -
  9.82 ms; DSL at width 1: 8.27-8.47 ms), ``S`` 0.25 ms (the engine's price of
  the slot), ``V0`` 6.92 ms (SD K=2's 9.82 ms less two of each); at one
  request session 47's fit (``D`` 1.22, ``S`` 0.10, ``V0 + 2 S + 2 D`` 8.50
  ms, SD K=2 at ``c = 1`` here), linear in the requests between;
- a request's acceptance ``U(0.32, 0.62)`` at its first token, 0.22 more at
  its last (SD K=2 got 1.76 tokens a step in a request's first tenth and 2.16
  in its last at ``c = 32``, 2.04 on average; width 1 1.62-1.68).

Printed per module: TPOT over SD K=2's per wave (mean over seeds, the first
wave is the A/B's warm round), SD K=1's and K=3's for reference, the lives in
which the batch size of 32 moved to 1 draft, the share of its steps at each
width (explored blocks included), and its moves with the units that decided
them.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "2026-12-06-cpu-s47-served-width-start"))
import sim  # noqa: E402

sim.N = 32
sim.P_LO, sim.P_HI, sim.GROWTH = 0.32, 0.62, 0.22


def step_ms(b: int, width: int, forwards: int) -> float:
    x = (b - 1) / 31
    d = 1.22 - 0.02 * x
    s = 0.10 + 0.15 * x
    v0 = 5.86 + 1.06 * x
    return v0 + s * width + d * forwards


sim.step_ms = step_ms
# --undercount: the share of requests with every draft accepted is reported
# times this (s48q's engine priced width 1 at 10.3% fewer tokens where it gave
# 19.5% fewer: 0.5).
UNDERCOUNT = 1.0


def run(path: Path, waves: int, seeds: int, base) -> list[str]:
    module = sim.load(path)
    moves: list[tuple[int, int, int, int, str]] = []
    widths = collections.Counter()
    move = module.ServedWidthController._move
    width = module.ServedWidthController.width

    def on_move(self, size, to, mean, n, how, detail="", **kw):
        if size.rows == sim.N:
            moves.append((size.rows, size.width, to, n, how))
        return move(self, size, to, mean, n, how, detail, **kw)

    def on_width(self, num_reqs):
        w = width(self, num_reqs)
        if num_reqs > 24:
            widths[w] += 1
        return w

    module.ServedWidthController._move = on_move
    module.ServedWidthController.width = on_width
    if UNDERCOUNT != 1.0:
        observe = module.ServedWidthController.observe_step

        def on_observe(self, num_reqs, decode_only, tokens, forwards=None, all_accepted=None):
            if all_accepted is not None:
                all_accepted *= UNDERCOUNT
            return observe(self, num_reqs, decode_only, tokens, forwards, all_accepted)

        module.ServedWidthController.observe_step = on_observe
    lines = []
    lives_at_1 = 0
    ratios = [[] for _ in range(waves)]
    for s in range(seeds):
        before = len(moves)
        t, _, _ = sim.life(module, 4, None, waves, s)
        for w in range(waves):
            ratios[w].append(t[w] / base[s][w])
        lives_at_1 += any(m[2] == 1 for m in moves[before:])
    per_wave = " ".join(f"{statistics.fmean(r):.3f}" for r in ratios)
    later = statistics.fmean(statistics.fmean(r) for r in ratios[1:])
    total = sum(widths.values())
    shares = ", ".join(f"{w}: {100 * widths[w] / total:.0f}%" for w in sorted(widths))
    to_1 = collections.Counter(m[3] for m in moves if m[2] == 1)
    lines.append(f"{path.name} cap 4: {per_wave} | waves 2-{waves} {later:.3f}")
    lines.append(f"  lives that moved 32 requests to 1: {lives_at_1}/{seeds}; "
                 f"steps of 25-32 requests by width: {shares}")
    lines.append(f"  moves to 1 at 32, by the units that decided them: {dict(sorted(to_1.items()))}; "
                 f"all moves at 32: {dict(collections.Counter((m[1], m[2], m[4]) for m in moves))}")
    return lines


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, action="append", required=True)
    ap.add_argument("--waves", type=int, default=9)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--undercount", type=float, default=1.0)
    ap.add_argument("--stop-at-1", type=float, default=None,
                    help="the loop stops after one draft step in this share of "
                    "steps (s48q's dsl4 at width 2: position 2 drafted in 85-96%% "
                    "of drafts); default the batch rule")
    args = ap.parse_args(argv)
    global UNDERCOUNT
    UNDERCOUNT = args.undercount
    if args.stop_at_1 is not None:
        sim.LOOP = "measured"
        sim.MEASURED = (args.stop_at_1, 1 - args.stop_at_1, 0, 0, 0)
    base = [sim.life(None, None, 2, args.waves, s)[0] for s in range(args.seeds)]
    lines = [f"{args.seeds} seeds, {args.waves} waves of {sim.N}, --undercount {args.undercount}, "
             f"--stop-at-1 {args.stop_at_1}; TPOT / SD K=2's per wave "
             "(> 1: slower), wave 1 is the A/B's warm round"]
    for k in (1, 3):
        t = [sim.life(None, None, k, args.waves, s)[0] for s in range(args.seeds)]
        r = statistics.fmean(t[s][w] / base[s][w] for s in range(args.seeds) for w in range(args.waves))
        lines.append(f"SD K={k}: {r:.3f}")
    for path in args.module:
        lines += run(path, args.waves, args.seeds, base)
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
