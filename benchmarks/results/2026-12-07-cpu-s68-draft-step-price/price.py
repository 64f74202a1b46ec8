"""What a draft step cost in an A/B's served steps, against what the
engine's served width rule priced it at and what start-up timed:

    python3 price.py RUN-abab.json.gz RUN-abab.log.gz [--width 3]

From the A/B's trace (``abab.py``'s ``engine_steps`` beside each step's
period): the full steps of each DSL arm (``benchmarks/full_steps.py``'s:
exactly ``C`` requests, no request added and no first token in the step nor
the 3 before it) placed at ``--width`` (its ``placed_widths``), split by the
draft forwards their loop ran; the difference of the periods' medians and of
their means between ``width`` forwards and ``width - 1``, and, as a check of
the alignment, the median difference with the forwards taken from the step
before (-1) and after (+1). From the log: the start-up table's draft step
at ``C`` rows (``speculator.py``'s line, per engine pid, read with session
60's ``prices.TABLE``) and the draft step
of the served width rule's window tests at batch size ``C``
(``ab_hooks.ServedWidthExplains``' lines: min, median, max).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "2026-12-07-cpu-s60-draft-step-ceiling"))
from full_steps import placed_widths, settled_steps  # noqa: E402
from prices import TABLE  # noqa: E402  (session 60's start-up table pattern)


def full_steps(rnd: dict, concurrency: int, width: int, shift: int = 0) -> dict[int, list[float]]:
    """A round's full steps at ``width`` (``full_steps.settled_steps`` and
    ``placed_widths``, whatever the loop drafted): periods by draft forwards
    (those of the step ``shift`` away)."""
    forwards, ms = rnd["engine_steps"]["draft_forwards"], rnd["trace"]["ms"]
    placed = placed_widths(rnd, concurrency)
    by: dict[int, list[float]] = defaultdict(list)
    for i in settled_steps(rnd, concurrency):
        if placed[i] != width or not 0 <= i + shift < len(ms):
            continue
        fw = forwards[i + shift]
        if fw is not None:
            by[fw].append(ms[i])
    return by


def log_prices(log_lines: list[str]) -> tuple[dict[str, dict[int, float]], dict[str, dict[int, list[float]]], list[str]]:
    """Per engine pid: the start-up table's draft step by rows, the window
    tests' draft step by batch size, and the pids in order of start."""
    table: dict[str, dict[int, float]] = {}
    tests: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    order: list[str] = []
    for line in log_lines:
        if m := TABLE.search(line):
            table[m[1]] = {int(k): float(v.split("/")[0])
                           for k, v in (x.split(":") for x in m[2].split(","))}
            order.append(m[1])
            continue
        pid = re.search(r"EngineCore pid=(\d+)", line)
        if not pid:
            continue
        pid = pid[1]
        m = re.search(r"served width test: batch size (\d+) at \d+ vs \d+, .*draft step ([\d.]+) ms", line)
        if m:
            tests[pid][int(m[1])].append(float(m[2]))
    return table, tests, order


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("abab")
    ap.add_argument("log")
    ap.add_argument("--width", type=int, default=3)
    args = ap.parse_args(argv)
    with gzip.open(args.abab) as f:
        data = json.load(f)
    with gzip.open(args.log, "rt", errors="replace") as f:
        table, tests, order = log_prices(f.readlines())
    dsl = [a for a in data["arms"] if a.startswith("dsl")]
    pids = dict(zip(dsl, order))  # the DSL engines start in the arms' order
    w = args.width
    out = [f"full steps placed at width {w}: period (ms) with {w} draft forwards less with {w - 1}"]
    for point in data["points"]:
        c = point["concurrency"]
        for arm in dsl:
            rounds = point["step_ms"].get(arm) or []
            gaps = {}
            for shift in (0, -1, 1):
                by: dict[int, list[float]] = defaultdict(list)
                for rnd in rounds:
                    for k, v in full_steps(rnd, c, w, shift).items():
                        by[k] += v
                if len(by.get(w, [])) < 8 or len(by.get(w - 1, [])) < 8:
                    break
                gaps[shift] = (statistics.median(by[w]) - statistics.median(by[w - 1]),
                               statistics.fmean(by[w]) - statistics.fmean(by[w - 1]),
                               len(by[w - 1]), len(by[w]))
            if 0 not in gaps:
                continue
            pid = pids.get(arm)
            start = table.get(pid, {})
            timed = next((t for r, t in sorted(start.items()) if r >= c), None)
            priced = sorted(tests.get(pid, {}).get(c, []))
            med, mean, n1, n2 = gaps[0]
            line = (f"c={c:<3} {arm:8s} steps {n1}+{n2}: median gap {med:.3f}, mean gap {mean:.3f}"
                    f" (forwards of the step before {gaps.get(-1, (float('nan'),))[0]:.3f},"
                    f" after {gaps.get(1, (float('nan'),))[0]:.3f}); start-up "
                    + (f"{timed:.3f}" if timed is not None else "-")
                    + "; window tests " + (f"{priced[0]:.3f} / {statistics.median(priced):.3f} / "
                                           f"{priced[-1]:.3f} ({len(priced)})" if priced else "-"))
            out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    print(main())
