"""Cap 8 against cap 4, served width and loop together, on the drafter's
traces: does the served width hold cap 8 at 3 drafts at 8-64 requests, as
the H100 did in sessions 65 and 66?

    python3 life_cap.py --module vllm/vllm/v1/spec_decode/dynamic/served_width.py \\
        [--seeds 10] [--waves 7] [--explain]

Session 49's ``life.py`` (``../2026-12-06-cpu-s49-served-width-traces/``)
drives the real ``ServedWidthController`` (loaded from ``--module``) with the
loop's batch rule on session 44's traces, one batch size a life. Here one
controller serves the A/B's whole sequence, as one engine does: ``--waves``
waves of 8 requests, then of 32, then of 64 (each wave's requests start
together with a prompt step and leave one by one, so the batch passes
through every smaller size). Per cap the rule reads that cap's start-up
table (session 65's engines, as logged: cap 4's and cap 8's ``D`` and
``V``); the controller gets the engine's captured sizes, its 512-token
graph limit and the table's draft step as ceiling, as the scheduler gives
them. Steps cost the H100's served costs (``batch.SERVED``: ``V0 + S w +
D n``, 3% noise). SD K=2 serves the same waves at 2.

Printed per cap: SD K=2's TPOT over DSL's per phase (waves 2 on of each
phase, mean over seeds), the widths placed at steps of the phase's full
batch, and seed 0's moves and forgets by batch size. With ``--explain`` the
controller runs under ``ab_hooks.ServedWidthExplains`` for seed 0 and its
test lines are printed.
"""

from __future__ import annotations

import argparse
import collections
import logging
import random
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(HERE.parent / "2026-12-06-cpu-s49-batch-stop-traces"))
import batch  # noqa: E402
import trace_stop_sim as ts  # noqa: E402
from sim_served_width import load  # noqa: E402

sys.path.insert(0, str(HERE.parent / "2026-12-07-cpu-s66-loop-depth"))
from depth import CAP4, CAP8, padded  # noqa: E402

# The captured sizes of session 65's cap-8 engine (its start-up table's rows)
# and 64; the graph limit: 512 tokens.
SIZES = sorted(set(CAP8) | set(CAP4) | {64})
MAX_GRAPH_TOKENS = 512
TABLES = {4: CAP4, 8: CAP8}


def rule_forwards(table, rows, live, width: int) -> int:
    if not live:
        return width
    d_rule, v_rule = padded(table, len(live))
    return batch.rule_steps(rows, live, width, lambda p, p2, h, pos: p, d_rule, v_rule)


def life(module, cap, rows, plan, seed, fixed=None, on_ctl=None):
    """One engine's life over ``plan`` (a batch size per wave). Per wave the
    mean TPOT (ms); the widths placed at steps of the wave's full batch; the
    moves and forgets, by batch size."""
    rng = random.Random(seed)
    clock = [0.0]
    ctl = None
    events: list = []
    table = TABLES[cap]
    if module is not None:
        ctl = module.ServedWidthController(list(SIZES), max(SIZES), cap,
                                           clock=lambda: clock[0] / 1e3,
                                           max_graph_tokens=MAX_GRAPH_TOKENS)
        ctl.set_draft_step_ceilings({b: d / 1e3 for b, (d, _) in table.items()})
        if on_ctl is not None:
            on_ctl(ctl)
        move, forget = ctl._move, ctl._forget

        def on_move(size, width, *a, **k):
            events.append((size.rows, size.width, width))
            return move(size, width, *a, **k)

        def on_forget(size, shift):
            events.append((size.rows, size.width, "forget"))
            return forget(size, shift)

        ctl._move, ctl._forget = on_move, on_forget
    out, widths = [], []
    offset = seed * 37
    for wave, b in enumerate(plan):
        live = [[(offset + wave * 64 + i) % len(rows), 0, None] for i in range(b)]
        prompt = True
        drafted = None
        width_next = ctl.width(len(live)) if ctl else fixed
        tpots = []
        placed = collections.Counter()
        while live:
            n_live = len(live)
            width = width_next
            if n_live == b:
                placed[width] += 1
            v0, s, d = batch._interp(batch.SERVED, n_live)
            verified = width if drafted is None else min(drafted, width)
            behind = width if drafted is None else drafted
            tokens = full = 0
            still = []
            clock[0] += (v0 + s * width + d * behind) * (1.5 if prompt else 1.0) \
                * rng.lognormvariate(0.0, 0.03)
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
            if fixed is not None:
                forwards = fixed
            else:
                width_next = ctl.width(len(still)) if still else width
                forwards = rule_forwards(table, rows, still, width_next)
            if ctl:
                ctl.observe_step(n_live, not prompt, tokens / n_live,
                                 None if prompt else drafted,
                                 None if prompt else full / n_live)
            drafted = forwards
            prompt = False
            live = still
        out.append(statistics.fmean(tpots))
        widths.append(placed)
    return out, widths, events


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--waves", type=int, default=7)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--explain", action="store_true")
    args = ap.parse_args(argv)
    rows = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
    plan = [b for b in (8, 32, 64) for _ in range(args.waves)]
    module = load(args.module)
    base = [life(None, 4, rows, plan, s, fixed=2)[0] for s in range(args.seeds)]
    lines = [f"{args.seeds} seeds; waves of 8, 32, 64 requests, {args.waves} each, one "
             "controller a seed; SD K=2's TPOT over DSL's, waves 2 on of each phase "
             "(> 1: DSL faster)"]
    for cap in (4, 8):
        ratios = collections.defaultdict(list)
        widths = collections.defaultdict(collections.Counter)
        ev0 = None
        for s in range(args.seeds):
            explain_lines: list[str] = []
            hook = None
            if args.explain and s == 0:
                def hook(ctl, _lines=explain_lines):
                    _explain(module, ctl, _lines)
            t, w, events = life(module, cap, rows, plan, s, on_ctl=hook)
            for k, b in enumerate(plan):
                if k % args.waves:
                    ratios[b].append(base[s][k] / t[k])
                    widths[b].update(w[k])
            if s == 0:
                ev0 = events
                ex0 = explain_lines
        for b in (8, 32, 64):
            tot = sum(widths[b].values())
            shares = " ".join(f"{k}: {100 * v / tot:.0f}%" for k, v in sorted(widths[b].items()))
            lines.append(f"cap {cap} at {b:2d}: {statistics.fmean(ratios[b]):.3f} "
                         f"(seeds {min(ratios[b]):.3f}-{max(ratios[b]):.3f}); widths: {shares}")
        lines.append(f"cap {cap} seed 0 moves (rows, from, to): {ev0}")
        if args.explain:
            lines += [f"  {line}" for line in ex0]
    return "\n".join(lines)


def _explain(module, ctl, lines):
    """``ab_hooks.ServedWidthExplains`` on this module's controller class,
    its lines kept (the class is patched once; later seeds log nothing)."""
    import ab_hooks

    class _Log(logging.Handler):
        def emit(self, record):
            msg = record.getMessage()
            if msg.startswith("served width test"):
                lines.append(msg)

    module.logger.addHandler(_Log())
    module.logger.setLevel(logging.INFO)
    if not getattr(module.ServedWidthController._finish_block, "_explains", False):
        ab_hooks._explain_served_width(module)


if __name__ == "__main__":
    print(main())
