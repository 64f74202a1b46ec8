#!/usr/bin/env python3
"""Session 25: per DSL arm at c requests, the engine steps with every request
in flight, by draft width (the target's padded tokens / c - 1) and draft
forwards, with their median period, from an abab.py result recorded with the
engine option "cudagraph_metrics": true:

    python3 width_steps.py run/abab.json.gz [C]   (default C = 32)

A round's core output periods (``core_ms``) start 3 engine steps after its
first recorded engine step: of offsets 0-3 that one correlates best with the
steps' draft forwards (0.88 for dsl4 at 32, against 0.67-0.71).
"""

import collections
import gzip
import json
import statistics as st
import sys

OFFSET = 3


def main(path: str, c: int) -> None:
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        data = json.load(f)
    point = next(p for p in data["points"] if p["concurrency"] == c)
    print(f"| arm | width | draft forwards | steps | median period ms |")
    print("| --- | --- | --- | --- | --- |")
    for arm in data["arms"]:
        if not arm.startswith("dsl"):
            continue
        by = collections.defaultdict(list)
        for rnd in point["step_ms"][arm]:
            es, periods = rnd["engine_steps"], rnd["core_ms"]
            for i, ms in enumerate(periods):
                j = i + OFFSET
                if j >= len(es["running"]):
                    break
                if es["running"][j] == c and es["graph_mode"][j] == "FULL":
                    width = es["padded_tokens"][j] // c - 1
                    by[(width, es["draft_forwards"][j])].append(ms)
        for (width, fwd), ms in sorted(by.items()):
            print(f"| {arm} | {width} | {fwd} | {len(ms)} | {st.median(ms):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32)
