"""Where DSL's TPOT goes at 2-64 requests, from an A/B's own records (session 61).

    python3 exit_steps.py RUN-abab.json.gz [...] [--base sd2+t] [--width 2]

For each concurrency and DSL arm of each run:

1. **Tokens and step time against the base arm** (SD K=2): tokens a request
   gets per engine step it drafts for (1 + accepted / drafts, from the run's
   spec counters), and the TPOT ratio base / arm. Their quotient is what the
   arm's steps cost against the base's: TPOT = step time / tokens per step.
2. **What an early exit saves:** the settled steps (exactly C requests
   running, no arrival or first token in the step nor the 3 before it) that
   verified the served width (``padded_tokens == C * (width + 1)``), grouped
   by the draft loop's forward count recorded with the same step. A step
   whose loop stopped after one forward is shorter by one draft step; the
   difference of the groups' mean periods is that step's price as served,
   to set beside the start-up table's draft step (the engine's log); and
   the share of those steps that stopped, by fifth of the round.

The per-step record carries no accepted count, so what an exit lost in
tokens is read only in total (1.), not per step.
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


def load(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def tokens_per_request_step(spec: dict) -> float:
    return 1 + spec["num_accepted_tokens"] / spec["num_drafts"]


def periods_by_forwards(rounds: list[dict], c: int, width: int,
                        settle: int = 3) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for rnd in rounds:
        ms, steps = rnd["trace"]["ms"], rnd["engine_steps"]
        for i in settled_steps(rnd, c, settle):
            forwards = steps["draft_forwards"][i]
            if steps["padded_tokens"][i] == c * (width + 1) and forwards is not None:
                out.setdefault(forwards, []).append(ms[i])
    return out


def stops_by_fifth(rounds: list[dict], c: int, width: int) -> list[float | None]:
    """Per fifth of each round's full-batch steps at the served width (the
    first to the last step with C requests running), the share whose loop
    stopped after one forward: in a one-wave round every request starts
    together, so the first fifth holds every request's first steps."""
    counts = [[0, 0] for _ in range(5)]
    for rnd in rounds:
        steps = rnd["engine_steps"]
        idx = [i for i, n in enumerate(steps["running"])
               if n == c and steps["padded_tokens"][i] == c * (width + 1)
               and steps["draft_forwards"][i] is not None]
        if not idx:
            continue
        first, span = idx[0], idx[-1] - idx[0] + 1
        for i in idx:
            fifth = min(4, 5 * (i - first) // span)
            counts[fifth][0] += 1
            counts[fifth][1] += steps["draft_forwards"][i] == 1
    return [stopped / n if n else None for n, stopped in counts]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--base", default="sd2+t")
    ap.add_argument("--width", type=int, default=2)
    args = ap.parse_args()
    for path in args.runs:
        data = load(path)
        print(path.rsplit("/", 1)[-1])
        for point in data["points"]:
            c = point["concurrency"]
            base_tok = tokens_per_request_step(point["spec"][args.base])
            base_tpot = statistics.median(point["tpot_ms"][args.base])
            for arm, spec in point["spec"].items():
                if not arm.startswith("dsl"):
                    continue
                tok = tokens_per_request_step(spec) / base_tok
                tpot = base_tpot / statistics.median(point["tpot_ms"][arm])
                exits = spec["num_early_exits"] / spec["num_drafts"]
                print(f"  c={c:<3d} {arm:8s} tokens/request-step x{tok:.3f}, "
                      f"TPOT ratio {tpot:.3f} -> step time x{tok / tpot:.3f} of "
                      f"{args.base}'s; drafted {spec['drafted_per_draft']:.2f}, "
                      f"exits {exits:.2f} a draft")
                groups = periods_by_forwards(point["step_ms"][arm], c, args.width)
                if not groups:
                    continue
                total = sum(len(v) for v in groups.values())
                desc = ", ".join(
                    f"{k} fwd: {len(v)} ({len(v) / total:.0%}) mean {statistics.fmean(v):.3f} ms"
                    for k, v in sorted(groups.items()))
                line = f"           width {args.width}, settled steps: {desc}"
                if 1 in groups and args.width in groups:
                    saved = statistics.fmean(groups[args.width]) - statistics.fmean(groups[1])
                    line += (f"; stopping after 1 forward saved {saved:.3f} ms "
                             f"({saved / (args.width - 1):.3f} a draft step)")
                print(line)
                fifths = stops_by_fifth(point["step_ms"][arm], c, args.width)
                print("           stopped after 1 forward, by fifth of the round: "
                      + " ".join("-" if f is None else f"{f:.2f}" for f in fifths))


if __name__ == "__main__":
    main()
