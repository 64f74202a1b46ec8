"""What the served width's exploration costs in session 49's traces-driven
simulation, read as session 50 read the H100: steps of exactly B requests,
after the warm round.

    python3 explore.py --module A.py [--module B.py ...] [--batch 32] [--waves 13] [--seeds 20]

Each ``--module`` is a ``served_width.py`` (as ``life.py`` of
``../2026-12-06-cpu-s49-served-width-traces/`` loads it); each life is that
script's (the proxies' 16-layer draft's traces, the H100's served costs, the
loop's batch rule), ``--waves`` waves of B requests, the first the warm
round, as the A/B's 1 warm + 12 rounds. Printed per module and B: SD K=2's
TPOT over DSL's over waves 2 on (> 1: DSL faster; mean over seeds), the
share of steps of exactly B requests by width placed in those waves, and
the cost a step off width 2 would have to carry to explain the whole loss
((1 - ratio) / off-width share); then, for the steps of exactly B requests
("full") and of fewer ("tail", the waves' ends), prompt steps left out:
their share of DSL's decode time and SD K=2's time a token over DSL's.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "2026-12-06-cpu-s49-served-width-traces"))
import life as lf  # noqa: E402


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, action="append", required=True)
    ap.add_argument("--batch", type=int, action="append")
    ap.add_argument("--waves", type=int, default=13)
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args(argv)
    rows = lf.ts.load_trace(lf.batch.TRACES / "trace-l16-self-test.json.gz")
    lines = [f"{args.seeds} seeds x {args.waves} waves (the first the warm round); "
             "waves 2 on: SD K=2's TPOT over DSL's, steps of exactly B requests by width"]
    for b in args.batch or [32, 64]:
        base, sd_phases = [], {}
        for s in range(args.seeds):
            base.append(lf.life(None, rows, b, args.waves, s, fixed=2, count_from=1,
                                phases=sd_phases)[0])
        for path in args.module:
            module = lf.load(path)
            ratios, widths, phases = [], collections.Counter(), {}
            for s in range(args.seeds):
                t, _, w = lf.life(module, rows, b, args.waves, s, count_from=1, exact=True,
                                  phases=phases)
                ratios += [base[s][k] / t[k] for k in range(1, args.waves)]
                widths.update(w)
            ratio = statistics.fmean(ratios)
            tot = sum(widths.values())
            off = 1 - widths[2] / tot
            shares = " ".join(f"{k}: {100 * v / tot:.1f}%" for k, v in sorted(widths.items()))
            per_step = f"{100 * (1 - ratio) / off:.1f}%" if off else "-"
            lines.append(f"B={b:2d} {path.name:14s} {ratio:.4f}  widths {shares}  "
                         f"off 2: {100 * off:.1f}% -> {per_step} a step off 2")
            for phase in ("full", "tail"):
                sd_ms, sd_tok = sd_phases[phase]
                ms, tok = phases[phase]
                lines.append(f"      {phase}: {100 * ms / (ms + phases['tail' if phase == 'full' else 'full'][0]):.0f}% "
                             f"of DSL's decode time; SD K=2's time a token over DSL's "
                             f"{(sd_ms / sd_tok) / (ms / tok):.4f}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
