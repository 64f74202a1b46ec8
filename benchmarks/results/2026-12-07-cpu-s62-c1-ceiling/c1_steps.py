"""The engine's steps at one request in flight, by verified width and draft
forwards (session 62).

    python3 c1_steps.py RUN-abab.json.gz [...]

For each arm at c = 1: the settled steps (one request running, no arrival or
first token in the step nor the 3 before it; ``full_steps.settled_steps``)
grouped by the step's padded tokens (1 + the verified slots) and its draft
loop's forwards (SD's record has none: its K forwards always run), each
group's count, share and median period. Groups under 1% of an arm's steps
are left out. What a forward and a verify slot cost as served is read off
the differences of the medians, to set beside the start-up table the
replays price with.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from full_steps import settled_steps  # noqa: E402


def groups(rounds: list[dict]) -> dict[tuple[int, int], list[float]]:
    out: dict[tuple[int, int], list[float]] = {}
    for rnd in rounds:
        ms, steps = rnd["trace"]["ms"], rnd["engine_steps"]
        for i in settled_steps(rnd, 1, 3):
            key = (steps["padded_tokens"][i], steps["draft_forwards"][i] or 0)
            out.setdefault(key, []).append(ms[i])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    for path in args.runs:
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        for point in data["points"]:
            if point["concurrency"] != 1:
                continue
            print(f"{Path(path).parent.name}/{Path(path).name} c=1: "
                  "padded tokens, forwards: steps (share) median ms")
            for arm, rounds in point["step_ms"].items():
                g = groups(rounds)
                total = sum(len(v) for v in g.values())
                print(f"  {arm}")
                for (padded, fwd), v in sorted(g.items()):
                    if len(v) >= 0.01 * total:
                        print(f"    {padded:2d} tokens, {fwd} fwd: {len(v):5d} "
                              f"({len(v) / total:4.0%}) {statistics.median(v):.3f}")


if __name__ == "__main__":
    main()
