"""Which branch of the wip's ``_start_block`` one request's blocks take, at
cap 8 (10 seeds of 56 requests, as ``c1.py`` serves them):

    python3 branch_counts.py --variant VARIANT_MODULE

Counted are the block starts where the narrower width already has units
priced from served steps, by what the wip sees there: the slot one narrower
priced (both rules count one narrower as compared), the loop never filled
the width (both do), or neither (only the series does: the wip's branch).
Printed per (batch size, width, branch): the count.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "2026-12-07-cpu-s66-cap8-life"))
from life_cap import batch, life, load, ts  # noqa: E402


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", type=Path, required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--requests", type=int, default=56)
    args = ap.parse_args(argv)
    rows = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
    module = load(args.variant)
    cls = module.ServedWidthController
    start_block = cls._start_block
    counts: collections.Counter = collections.Counter()

    def counted(controller, size):
        narrower = size.narrower
        if narrower.ratios and size.width > 1:
            if size.last_slot is not None:
                branch = "slot priced"
            elif narrower.widest < size.width:
                branch = "never filled"
            else:
                branch = "the wip's (slot not priced, filled)"
            counts[(size.rows, size.width, branch)] += 1
        return start_block(controller, size)

    cls._start_block = counted
    for seed in range(args.seeds):
        life(module, 8, rows, [1] * args.requests, seed)
    return "\n".join(f"batch size {r}, width {w}, {b}: {n}"
                     for (r, w, b), n in sorted(counts.items()))


if __name__ == "__main__":
    print(main())
