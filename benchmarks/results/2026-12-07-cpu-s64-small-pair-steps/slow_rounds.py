"""Slowed rounds by arm over every A/B of one target under ../.

    python slow_rounds.py smollm2-135m > slow-rounds.txt

A round is slowed where its median engine-core step (``core_ms``) is over
1.10x the arm's median over that point's rounds (``round_steps.slowed``). Prints each run's point
with ``arm:slowed/rounds`` and, last, the totals by arm kind (sd, dsl,
other).
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics as st
import sys

from round_steps import slowed


def main() -> None:
    target = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    totals: dict[str, list[int]] = {}
    for path in sorted(glob.glob(os.path.join(here, "..", "*", "*abab.json.gz"))):
        try:
            with gzip.open(path) as f:
                run = json.load(f)
        except (OSError, ValueError):
            continue
        if str(run.get("target", "")) != target:
            continue
        for point in run.get("points", []):
            line = []
            for arm, rounds in (point.get("step_ms") or {}).items():
                meds = [
                    st.median(r["core_ms"])
                    for r in rounds
                    if isinstance(r, dict) and r.get("core_ms")
                ]
                if len(meds) < 3:
                    continue
                slow = sum(slowed(meds))
                kind = (
                    "dsl"
                    if arm.startswith("dsl")
                    else "sd"
                    if arm.startswith("sd")
                    else "other"
                )
                t = totals.setdefault(kind, [0, 0])
                t[0] += slow
                t[1] += len(meds)
                line.append(f"{arm}:{slow}/{len(meds)}")
            if line:
                name = os.path.relpath(path, os.path.join(here, ".."))
                print(name, f"c={point['concurrency']}", " ".join(line))
    print(
        "slowed/rounds by arm kind:",
        ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(totals.items())),
    )


if __name__ == "__main__":
    main()
