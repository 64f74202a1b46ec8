"""Slot-first against the series at one request, on the drafter's traces:
does exploring one narrower until its slot is priced cost cap 8 its win at
one request (what session 67's device run did not reach)?

    python3 c1.py --series SERIES_MODULE --variant VARIANT_MODULE [--seeds 10] [--requests 56]

Session 66's ``life_cap.life`` (``../2026-12-07-cpu-s66-cap8-life/``), one
controller a seed serving ``--requests`` requests one at a time (a wave of
one each), at cap 8 and cap 4, with each module's ``ServedWidthController``;
SD K=2 serves the same requests at 2. Printed per cap and module: SD K=2's
TPOT over DSL's (mean over requests 9 on, then over seeds; the first 8 are
the A/B's warm round), and the widths placed.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "2026-12-07-cpu-s66-cap8-life"))
from life_cap import batch, life, load, ts  # noqa: E402

WARM = 8


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", type=Path, required=True)
    ap.add_argument("--variant", type=Path, required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--requests", type=int, default=56)
    args = ap.parse_args(argv)
    rows = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
    plan = [1] * args.requests
    base = [life(None, 4, rows, plan, s, fixed=2)[0] for s in range(args.seeds)]
    lines = [f"{args.seeds} seeds, {args.requests} requests one at a time (the first "
             f"{WARM} not counted); SD K=2's TPOT over DSL's (> 1: DSL faster)"]
    for cap in (4, 8):
        for name, path in (("series", args.series), ("slot first", args.variant)):
            module = load(path)
            per_seed, widths = [], collections.Counter()
            for s in range(args.seeds):
                t, w, _ = life(module, cap, rows, plan, s)
                sd = sum(base[s][WARM:])
                per_seed.append(sd / sum(t[WARM:]))
                for c in w[WARM:]:
                    widths.update(c)
            tot = sum(widths.values())
            shares = " ".join(f"{k}: {100 * v / tot:.0f}%" for k, v in sorted(widths.items()))
            lines.append(f"cap {cap} {name:10s}: {statistics.fmean(per_seed):.4f} "
                         f"(seeds {min(per_seed):.4f}-{max(per_seed):.4f}); widths: {shares}")
            lines.append("    per seed: " + " ".join(f"{r:.4f}" for r in per_seed))
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
