"""One kind of engine step, timed per arm of an A/B: where an arm's TPOT gap
comes from when the arms serve the same steps.

    python3 benchmarks/full_steps.py RUN-abab.json.gz [--width 2] [--base sd2]
        [--settle 3] [--concurrency 64] [--json OUT]

``abab.py`` records every engine step of every measured round (``step_ms``:
the step's period in ``trace.ms``, its requests, drafted tokens and graph in
``engine_steps``). Read here are only the **full steps**: exactly ``C``
requests running at concurrency ``C``, no request added and no first token in
the step nor in the ``--settle`` steps before it (all decoding, past the
async pipeline's catch-up after the long prefill steps: in sessions 50-52 the
first full steps after a wave's prefills were 1-4 ms shorter or longer than
the rest, differently by arm), exactly ``C * width`` drafted tokens (every
request drafted the whole width) and, where the record has the verify's
(padded) tokens, a verify placed at that width: from ``C * (width + 1)``
tokens up to, not including, ``C * (width + 2)``. Under DSL a step placed
wider can draft exactly the width when the loop stops early: session 65's
cap-8 "width 2" steps at 64 requests were 130-146 steps verified at 3 slots
(256 tokens) where the loop drafted 2, and 0-16 at 2 slots (192), which made
them look 7.7-8% dearer than SD K=2's. Two arms whose full steps verify the same
tokens in the same captured graph (SD K=2 and DSL serving width 2) differ
there only by what each runs a step: a difference in their full steps' time
is a per-step cost, not a choice of width or a draft the loop skipped.

Printed per concurrency and arm: the full steps' count, mean, p10 / p50 / p90
(ms) and each round's mean; and per arm against ``--base``: the per-round
difference of the means (ms, and % of the base's mean) with its 95% Student
t interval over the rounds both ran (rounds are ABBA-paired in ``abab.py``).
``--json`` writes the same as a list of rows.

``--mix`` prints instead, per concurrency and arm, every full step of ``C``
requests (settled as above, whatever it drafted) by the width placed (its
verify's tokens over ``C``, less one) and the draft steps its loop ran
(drafted tokens over ``C``): each kind's share of the steps and mean period.
Under DSL it shows what a width costs when the loop fills it and when it
stops short (a verify slot placed and not drafted).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abab import ci  # noqa: E402
from run import read_json  # noqa: E402


def settled_steps(rnd: dict, concurrency: int, settle: int = 3) -> list[int]:
    """The indices of one round's steps with exactly ``concurrency`` requests
    running and no request added nor first token in the step or the
    ``settle`` steps before it (see the module docstring)."""
    trace, steps = rnd["trace"], rnd["engine_steps"]
    busy = [bool(a) or bool(f) for a, f in zip(trace["added"], trace["firsts"])]
    return [
        i
        for i in range(len(trace["ms"]))
        if steps["running"][i] == concurrency
        and not any(busy[max(0, i - settle):i + 1])
    ]


def placed_widths(rnd: dict, concurrency: int) -> list[int | None]:
    """Per step of one round, the width its verify was placed at (its padded
    tokens over ``concurrency``, less one; the verify of ``C`` requests at
    width ``w`` pads to ``C * (w + 1)`` up to, not including,
    ``C * (w + 2)``), or None where the record has no verify tokens."""
    steps = rnd["engine_steps"]
    padded = steps.get("padded_tokens") or [None] * len(rnd["trace"]["ms"])
    return [None if p is None else p // concurrency - 1 for p in padded]


def full_step_times(rnd: dict, concurrency: int, width: int,
                    settle: int = 3) -> list[float]:
    """The periods (ms) of one round's full steps (see the module docstring)."""
    drafted, ms = rnd["engine_steps"]["drafted"], rnd["trace"]["ms"]
    placed = placed_widths(rnd, concurrency)
    return [
        ms[i]
        for i in settled_steps(rnd, concurrency, settle)
        if drafted[i] == concurrency * width and placed[i] in (None, width)
    ]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rows_of(data: dict, width: int, base: str, only: int | None,
            settle: int = 3) -> list[dict]:
    """One row per concurrency and arm with full steps."""
    rows = []
    for point in data["points"]:
        c = point["concurrency"]
        if only is not None and c != only:
            continue
        by_arm = {
            arm: [full_step_times(r, c, width, settle) for r in rounds]
            for arm, rounds in point.get("step_ms", {}).items()
        }
        means = {
            arm: [statistics.fmean(r) if r else None for r in rounds]
            for arm, rounds in by_arm.items()
        }
        for arm, rounds in by_arm.items():
            steps = [ms for r in rounds for ms in r]
            if not steps:
                continue
            row = {
                "concurrency": c,
                "arm": arm,
                "width": width,
                "settle": settle,
                "steps": len(steps),
                "mean_ms": statistics.fmean(steps),
                "p10_ms": _quantile(steps, 0.1),
                "p50_ms": _quantile(steps, 0.5),
                "p90_ms": _quantile(steps, 0.9),
                "round_means_ms": means[arm],
            }
            if arm != base and base in means:
                pairs = [
                    (a, b)
                    for a, b in zip(means[arm], means[base])
                    if a is not None and b is not None
                ]
                if pairs:
                    diff, lo, hi = ci([a - b for a, b in pairs])
                    ref = statistics.fmean(b for _, b in pairs)
                    row.update(
                        base=base,
                        rounds_paired=len(pairs),
                        diff_ms=diff,
                        diff_ci95_ms=[lo, hi],
                        diff_pct=100 * diff / ref,
                    )
            rows.append(row)
    return rows


def mix_of(data: dict, only: int | None, settle: int = 3,
           least: float = 0.0) -> list[dict]:
    """Per concurrency and arm, the full steps by (width placed, draft steps
    run): ``{"concurrency", "arm", "kinds": [{"width", "drafted", "steps",
    "share", "mean_ms"}]}``, kinds under ``least`` of the steps left out.
    Steps without the verify's tokens (older records) are not counted."""
    out = []
    for point in data["points"]:
        c = point["concurrency"]
        if only is not None and c != only:
            continue
        for arm, rounds in point.get("step_ms", {}).items():
            kinds: dict[tuple[int, float], list[float]] = {}
            for rnd in rounds:
                drafted, ms = rnd["engine_steps"]["drafted"], rnd["trace"]["ms"]
                placed = placed_widths(rnd, c)
                for i in settled_steps(rnd, c, settle):
                    if placed[i] is None or drafted[i] is None:
                        continue
                    kinds.setdefault((placed[i], drafted[i] / c), []).append(ms[i])
            total = sum(len(v) for v in kinds.values())
            if not total:
                continue
            out.append({"concurrency": c, "arm": arm, "kinds": [
                {"width": w, "drafted": d, "steps": len(v), "share": len(v) / total,
                 "mean_ms": statistics.fmean(v)}
                for (w, d), v in sorted(kinds.items()) if len(v) / total >= least]})
    return out


def mix_table(rows: list[dict]) -> str:
    return "\n".join(
        f"c={row['concurrency']:<3d} {row['arm']:<16s} "
        + "; ".join(f"width {k['width']} drafted {k['drafted']:.2f}: "
                    f"{100 * k['share']:.0f}% {k['mean_ms']:.3f} ms" for k in row["kinds"])
        for row in rows)


def table(rows: list[dict]) -> str:
    out = []
    for row in rows:
        line = (
            f"c={row['concurrency']:<3d} {row['arm']:<16s} width {row['width']}: "
            f"{row['steps']:5d} full steps, mean {row['mean_ms']:.3f} ms "
            f"(p10 {row['p10_ms']:.3f}, p50 {row['p50_ms']:.3f}, "
            f"p90 {row['p90_ms']:.3f})"
        )
        if "diff_ms" in row:
            lo, hi = row["diff_ci95_ms"]
            line += (
                f"; vs {row['base']}: {row['diff_ms']:+.3f} ms "
                f"[{lo:+.3f}, {hi:+.3f}] ({row['diff_pct']:+.2f}%, "
                f"{row['rounds_paired']} rounds)"
            )
        out.append(line)
        out.append(
            "      rounds: "
            + " ".join("-" if m is None else f"{m:.2f}" for m in row["round_means_ms"])
        )
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    parser.add_argument("run", type=Path, help="an abab.py result (.json or .json.gz)")
    parser.add_argument("--width", type=int, default=2,
                        help="drafts a request in the steps read (default 2)")
    parser.add_argument("--base", default="sd2",
                        help="the arm the others are compared with (default sd2)")
    parser.add_argument("--settle", type=int, default=3,
                        help="steps after one with an arrival or a first token "
                        "left out (default 3)")
    parser.add_argument("--concurrency", type=int,
                        help="read only this concurrency (default: every point)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--mix", action="store_true",
                        help="the full steps by width placed and draft steps run, "
                        "kinds of at least 3%% of an arm's steps (see above)")
    args = parser.parse_args(argv)
    if args.width < 1:
        parser.error(f"--width must be >= 1, got {args.width}")
    if args.settle < 0:
        parser.error(f"--settle must be >= 0, got {args.settle}")
    try:
        data = read_json(args.run)
    except (OSError, ValueError) as exc:
        parser.error(f"cannot read {args.run}: {exc}")
    if not any(p.get("step_ms") for p in data.get("points", [])):
        parser.error(f"{args.run} has no per-step record (step_ms): not an abab.py "
                     "result, or one from before it recorded steps")
    arms = sorted({a for p in data["points"] for a in p.get("step_ms", {})})
    if args.base not in arms:
        parser.error(f"--base: no arm {args.base!r} in {args.run} (its arms: "
                     f"{', '.join(arms)})")
    if args.mix:
        rows = mix_of(data, args.concurrency, args.settle, least=0.03)
        render, none = mix_table, "no full steps with the verify's tokens recorded"
    else:
        rows = rows_of(data, args.width, args.base, args.concurrency, args.settle)
        render, none = table, f"no full steps at width {args.width}" + (
            f" at c={args.concurrency}" if args.concurrency else "")
    if not rows:
        print(none)
        return 1
    print(render(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
