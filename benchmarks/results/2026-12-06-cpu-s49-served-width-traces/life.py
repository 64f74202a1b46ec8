"""The served width and the loop's rule together, driven by the drafter's
real traces: a simulated A/B of DSL (cap 4) against SD K=2 at 32 and 64
requests, as the H100's s49p ran it.

    python3 life.py --module A.py [--module B.py ...] [--batch 32] [--waves 9] [--seeds 10]

Each ``--module`` is a ``served_width.py`` whose real
``ServedWidthController`` serves one engine's life (loaded as
``benchmarks/sim_served_width.py`` does). The life is the A/B's: ``--waves``
waves of B requests (the first is the warm round), each a row of session
44's traces (the proxies' 16-layer draft, ShareGPT test split, 128 prompts x
256 tokens; a seed shifts which rows a wave takes), all starting together
with a prompt step. Every step: the controller places the width for the
step's requests, the rows verify the drafts of the loop before (its
``n`` draft steps, cut to this width), each accepting the leading run its
trace marks accepted plus one token; then the loop drafts for the next step
by the kernel's batch rule on the raw confidences (as
``../2026-12-06-cpu-s49-batch-stop-traces/batch.py``), at most the next
step's width. A step lasts ``V0(b) + S(b) w + D(b) n`` ms with 3% log-normal
noise (the H100's served costs, as there; ``n`` the draft steps behind what
it verifies: under async scheduling they run within its period), and the
controller observes it with the forwards behind it and the share of rows
that had every slot accepted. SD K=2 serves the same waves at 2.

Printed per module: SD K=2's TPOT over DSL's per wave (> 1: DSL faster; the
mean over seeds), the mean over waves 2 on, the share of B-request steps by
width placed, and the moves and forgets of batch size B (seed 0's).
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks/results/2026-12-06-cpu-s49-batch-stop-traces"))
import batch  # noqa: E402
import trace_stop_sim as ts  # noqa: E402
from sim_served_width import load  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
CAP = 4


def rule_forwards(rows, live, width: int) -> int:
    """The kernel's batch rule on the raw confidences, 1 to ``width``
    (``batch.rule_steps`` at the start-up costs of ``len(live)`` rows)."""
    if not live:
        return width
    d_rule, v_rule = batch._interp(batch.STARTUP, len(live))
    return batch.rule_steps(rows, live, width, lambda p, p2, h, pos: p, d_rule, v_rule)


def life(module, rows, b: int, waves: int, seed: int, fixed: int | None = None,
         count_from: int = 0, exact: bool = False, phases: dict | None = None):
    """Per wave the mean TPOT (ms); with ``module``, the controller's moves
    and forgets of batch size ``b`` and the widths placed at ``b`` (steps of
    more than 3/4 ``b`` requests, or with ``exact`` of ``b``, from wave
    ``count_from`` on: 0 is the warm round). ``phases``, where given, sums
    from that wave on the time and tokens of steps of exactly ``b`` requests
    (``"full"``) and of fewer (``"tail"``), prompt steps left out:
    ``{phase: [ms, tokens]}``."""
    rng = random.Random(seed)
    clock = [0.0]
    ctl = None
    events: list = []
    widths = collections.Counter()
    if module is not None:
        ctl = module.ServedWidthController(list(SIZES), max(SIZES), CAP,
                                           clock=lambda: clock[0] / 1e3)
        move, forget = ctl._move, ctl._forget

        def on_move(size, width, *a, **k):
            if size.rows == b:
                events.append((size.width, width))
            return move(size, width, *a, **k)

        def on_forget(size, shift):
            if size.rows == b:
                events.append((size.width, "forget"))
            return forget(size, shift)

        ctl._move, ctl._forget = on_move, on_forget
    out = []
    offset = seed * 37
    for wave in range(waves):
        live = [[(offset + wave * b + i) % len(rows), 0, None] for i in range(b)]
        prompt = True
        drafted = None
        width_next = ctl.width(len(live)) if ctl else fixed
        tpots = []
        while live:
            n_live = len(live)
            width = width_next
            if ctl and wave >= count_from and (
                    n_live == b if exact else n_live > b * 3 // 4):
                widths[width] += 1
            v0, s, d = batch._interp(batch.SERVED, n_live)
            verified = width if drafted is None else min(drafted, width)
            behind = width if drafted is None else drafted
            tokens = full = 0
            still = []
            spent = (v0 + s * width + d * behind) * (1.5 if prompt else 1.0) \
                * rng.lognormvariate(0.0, 0.03)
            clock[0] += spent
            for i, t, t0 in live:
                r = rows[i]
                room = len(r["p"]) - t
                if prompt:
                    got = 1
                else:
                    run = ts.accepted_run(r["accepted"], t, min(verified, room))
                    got = min(run + 1, room)
                    full += run == width
                tokens += got
                t0 = clock[0] if t0 is None else t0
                if t + got >= len(r["p"]):
                    tpots.append((clock[0] - t0) / (len(r["p"]) - 1))
                else:
                    still.append([i, t + got, t0])
            if phases is not None and wave >= count_from and not prompt:
                acc = phases.setdefault("full" if n_live == b else "tail", [0.0, 0])
                acc[0] += spent
                acc[1] += tokens
            if fixed is not None:
                forwards = fixed
            else:
                width_next = ctl.width(len(still)) if still else width
                forwards = rule_forwards(rows, still, width_next)
            if ctl:
                ctl.observe_step(n_live, not prompt, tokens / n_live,
                                 None if prompt else drafted,
                                 None if prompt else full / n_live)
            drafted = forwards
            prompt = False
            live = still
        out.append(statistics.fmean(tpots))
    return out, events, widths


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, action="append", required=True)
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--waves", type=int, default=9)
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    rows = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
    lines = []
    for b in args.batch or [32, 64]:
        base = [life(None, rows, b, args.waves, s, fixed=2)[0] for s in range(args.seeds)]
        lines.append(f"B={b}, {args.seeds} seeds x {args.waves} waves: SD K=2's TPOT over DSL's "
                     "per wave (> 1: DSL faster), wave 1 the warm round")
        for path in args.module:
            module = load(path)
            ratios = [[] for _ in range(args.waves)]
            widths = collections.Counter()
            ev0 = None
            for s in range(args.seeds):
                t, events, w = life(module, rows, b, args.waves, s)
                for k in range(args.waves):
                    ratios[k].append(base[s][k] / t[k])
                widths.update(w)
                ev0 = events if ev0 is None else ev0
            per = " ".join(f"{statistics.fmean(r):.3f}" for r in ratios)
            later = statistics.fmean(x for r in ratios[1:] for x in r)
            tot = sum(widths.values())
            shares = " ".join(f"{k}: {100 * v / tot:.0f}%" for k, v in sorted(widths.items()))
            lines.append(f"  {path.name}: {per} | waves 2-{args.waves} {later:.3f}; "
                         f"widths at {b}: {shares}; seed 0 at {b}: {ev0}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
