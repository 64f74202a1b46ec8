#!/usr/bin/env python3
"""Session 24: per arm and concurrency, the decode steps over 1.6x the round's
median and more than 3 steps after the round's arrivals, and the time they
took beyond the median as a share of the round's step time (median over
rounds), from an abab.py result:

    python3 long_steps.py run/abab.json.gz
"""

import gzip
import json
import statistics as st
import sys


def main(path: str) -> None:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    print("| c | arm | long steps a round | excess ms a round | excess share | TPOT ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for point in data["points"]:
        for arm in data["arms"]:
            counts, excess, share = [], [], []
            for rnd in point["step_ms"][arm]:
                ms, added = rnd["trace"]["ms"], rnd["trace"]["added"]
                median = st.median(ms)
                arrivals = [i for i, a in enumerate(added) if a]
                far = [i for i in range(len(ms))
                       if all(not 0 <= i - a <= 3 for a in arrivals)]
                long_ = [i for i in far if ms[i] > 1.6 * median]
                extra = sum(ms[i] - median for i in long_)
                counts.append(len(long_))
                excess.append(extra)
                share.append(extra / sum(ms))
            print(f"| {point['concurrency']} | {arm} | {st.median(counts):.0f} | "
                  f"{st.median(excess):.0f} | {100 * st.median(share):.1f}% | "
                  f"{st.median(point['tpot_ms'][arm]):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
