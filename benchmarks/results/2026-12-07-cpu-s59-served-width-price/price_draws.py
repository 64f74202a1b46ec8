"""The draft step's price at 8 requests, drawn from session 59's H200 steps
(``../2026-12-07-h200-s59/s59p-abab.json.gz``, dsl8 at c = 8: served width 2,
steps of 7-8 decoding requests with no arrival, by the forwards of the loop
behind them): the difference of two medians (patch 0048's price) against
its lower bound (``_median_bounds`` in ``served_width.py``, z as given), with
the newest 128 steps that drafted 2 and N that drafted 1.

    python price_draws.py [--z 1.645] [--draws 4000]
"""

import argparse
import gzip
import json
import math
import random
import statistics
from pathlib import Path

RUN = Path(__file__).resolve().parent.parent / "2026-12-07-h200-s59" / "s59p-abab.json.gz"


def bounds(values, z):
    s = sorted(values)
    n = len(s)
    r = max(1, math.floor(n / 2 - z * math.sqrt(n) / 2))
    return s[r - 1], s[n - r]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--z", type=float, default=1.645)
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args()
    data = json.load(gzip.open(RUN))
    point = next(p for p in data["points"] if p["concurrency"] == 8)
    by = {}
    for rnd in point["step_ms"]["dsl8+t"]:
        es, tr = rnd["engine_steps"], rnd["trace"]
        for i in range(1, len(tr["ms"])):
            if es["running"][i] not in (7, 8) or tr["added"][i] or tr["firsts"][i] or tr["added"][i - 1]:
                continue
            by.setdefault(es["draft_forwards"][i], []).append(tr["ms"][i])
    two, one = by[2], by[1]
    print(f"steps: {len(two)} drafted 2 (median {statistics.median(two):.2f} ms), "
          f"{len(one)} drafted 1 (median {statistics.median(one):.2f}); all of them: "
          f"difference {statistics.median(two) - statistics.median(one):.2f} ms")
    rng = random.Random(0)
    for n in (8, 16, 32, 64):
        point_est, lower = [], []
        for _ in range(args.draws):
            a, b = rng.sample(two, 128), rng.sample(one, n)
            point_est.append(statistics.median(a) - statistics.median(b))
            lower.append(max(0.0, bounds(a, args.z)[0] - bounds(b, args.z)[1]))
        point_est.sort()
        lower.sort()
        q = lambda v, f: v[int(f * (len(v) - 1))]  # noqa: E731
        print(f"N={n:3d}: difference p50 {q(point_est, .5):.2f} p97.5 {q(point_est, .975):.2f} "
              f"max {point_est[-1]:.2f}, >= 2.0 ms in {sum(e >= 2.0 for e in point_est) / args.draws:.3f}; "
              f"lower bound (z {args.z}) p50 {q(lower, .5):.2f} p97.5 {q(lower, .975):.2f} max {lower[-1]:.2f}")


if __name__ == "__main__":
    main()
