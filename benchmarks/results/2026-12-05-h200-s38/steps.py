"""Session 38: per arm and concurrency, the engine's decode-step median, the
tokens a step and their quotient (ms a token from the steps alone), from
abab.py's step records; and the per-round TPOT ratio of two arms.

    python3 steps.py s-abab.json.gz [--pair dsl4+clock dsl4+gpu]
"""
import argparse
import gzip
import json
import statistics


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="abab.py result (.json or .json.gz)")
    ap.add_argument("--pair", nargs=2, metavar=("A", "B"),
                    help="print A's per-round TPOT over B's")
    args = ap.parse_args()
    opener = gzip.open if args.run.endswith(".gz") else open
    with opener(args.run, "rt") as f:
        run = json.load(f)
    for point in run["points"]:
        print(f"c={point['concurrency']}")
        print(f"  {'arm':<11} {'step p50':>8} {'tok/step':>8} {'ms/token':>8}")
        for arm, rounds in point["step_ms"].items():
            step = statistics.median(r["decode"]["p50"] for r in rounds)
            tokens = statistics.median(point["tokens_per_step"][arm])
            print(f"  {arm:<11} {step:8.3f} {tokens:8.3f} {step / tokens:8.3f}")
        if args.pair:
            a, b = (point["tpot_ms"][arm] for arm in args.pair)
            ratios = [x / y for x, y in zip(a, b)]
            below = sum(r < 1 for r in ratios)
            print(f"  TPOT {args.pair[0]} / {args.pair[1]} per round: "
                  + " ".join(f"{r:.3f}" for r in ratios)
                  + f" (mean {statistics.fmean(ratios):.3f}, {below} of "
                  f"{len(ratios)} below 1)")


if __name__ == "__main__":
    main()
