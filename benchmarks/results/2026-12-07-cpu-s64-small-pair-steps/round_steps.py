"""Where an A/B's round-to-round noise comes from, step by step.

    python round_steps.py RUN-abab.json.gz [...] [--slow 1.10]

For each run, concurrency and arm: every round's median engine-core step
(``step_ms[arm][round]["core_ms"]``, the engine's own step durations), the
medians of its tenths in time order, and the round's TPOT. A round is
"slowed" where its median step is over ``--slow`` times the arm's median
over rounds. Then, per DSL arm against each SD arm, the round's ratio at
the steps' median pace: (SD's median step / its tokens a step) / (DSL's
median step / its tokens a step). With the same prompts every round and
greedy decoding, tokens a step are the same every round, so TPOT moves only
with the pace of the steps; the median-pace ratio is what a round gives
once a stretch of slow steps (under half the round) is left out. It is a
reading of the noise, not issue 29's verdict, which stays TPOT.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics as st


def tenths(xs: list[float]) -> list[float]:
    n = len(xs)
    return [st.median(xs[i * n // 10 : (i + 1) * n // 10]) for i in range(10)]


SLOW = 1.10


def slowed(medians: list[float], slow: float = SLOW) -> list[bool]:
    """Per round: whether its median step is over ``slow`` times the
    median of the rounds' medians (the arm's median step)."""
    m = st.median(medians)
    return [x > slow * m for x in medians]


def read(path: str, slow: float) -> None:
    with gzip.open(path) as f:
        run = json.load(f)
    print(
        f"== {path}: {run.get('target')} + {run.get('draft')}, "
        f"{run.get('rounds')} rounds, {run.get('waves')} wave(s) a round"
    )
    for point in run["points"]:
        c = point["concurrency"]
        med: dict[str, list[float]] = {}
        for arm, rounds in point["step_ms"].items():
            med[arm] = [st.median(r["core_ms"]) for r in rounds]
            m = st.median(med[arm])
            tpot = point["tpot_ms"][arm]
            print(
                f"c={c} {arm}: median step {m:.3f} ms; TPOT range "
                f"{100 * (max(tpot) - min(tpot)) / st.median(tpot):.1f}%, "
                f"median-step range "
                f"{100 * (max(med[arm]) - min(med[arm])) / m:.1f}%"
            )
            flags = slowed(med[arm], slow)
            for i, r in enumerate(rounds):
                flag = " slowed" if flags[i] else ""
                print(
                    f"  r{i} median {med[arm][i]:.3f} tenths "
                    + " ".join(f"{x:.2f}" for x in tenths(r["core_ms"]))
                    + f"  TPOT {tpot[i]:.3f}{flag}"
                )
        tps = {a: point["tokens_per_step"][a] for a in med}
        sd = [a for a in med if a.startswith("sd")]
        dsl = [a for a in med if a.startswith("dsl")]
        for d in dsl:
            for b in sd:
                per = [
                    (mb / tb) / (md / td)
                    for mb, tb, md, td in zip(med[b], tps[b], med[d], tps[d])
                ]
                tp = [x / y for x, y in zip(point["tpot_ms"][b], point["tpot_ms"][d])]
                print(
                    f"c={c} {b} / {d} per round at median pace: "
                    + " ".join(f"{x:.3f}" for x in per)
                    + f"; median {st.median(per):.3f}"
                    + f" (TPOT's: median {st.median(tp):.3f}, mean {st.mean(tp):.3f})"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="abab.json.gz files")
    ap.add_argument(
        "--slow",
        type=float,
        default=SLOW,
        help="a round is slowed above this times the arm's median",
    )
    args = ap.parse_args()
    for path in args.runs:
        read(path, args.slow)


if __name__ == "__main__":
    main()
