# SPDX-License-Identifier: Apache-2.0
"""Which processes were collecting during an A/B's long steps.

    python3 benchmarks/gc_trace/gc_report.py ABAB_JSON GC_DIR [--json OUT]

Reads ``benchmarks/abab.py``'s JSON (each round's ``step_ms`` with ``longest``,
each as ``[start ms, duration ms, first tokens, client gc ms]``, and
``start_monotonic_s``, the round's clock origin) and the ``gc-<pid>.tsv`` files
that ``benchmarks/gc_trace/sitecustomize.py`` wrote during it. Prints, per
process, its slow collections (count, total, longest) and per-generation totals,
and per arm and concurrency how many of the rounds' longest steps overlap a slow
collection of some process, with the time collected inside them. Steps and
collections are on one clock (``time.monotonic``), so the overlap is exact up to
the client's step boundaries.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from dataclasses import dataclass, field


@dataclass
class Process:
    pid: int
    argv: str = ""
    slow: list[tuple[float, float, int]] = field(default_factory=list)
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])
    ms: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])


def read_trace(path: str) -> Process:
    """One ``gc-<pid>.tsv``: its slow collections ``(start s, ms, generation)``
    and the last per-generation totals."""
    name = os.path.basename(path)
    try:
        pid = int(name[len("gc-"):-len(".tsv")])
    except ValueError:
        raise ValueError(f"{path}: not a gc-<pid>.tsv trace") from None
    proc = Process(pid)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            try:
                if parts[0] == "#proc":
                    proc.argv = parts[2] if len(parts) > 2 else ""
                elif parts[0] == "#sum":
                    proc.counts = [int(x) for x in parts[2].split()]
                    proc.ms = [float(x) for x in parts[3].split()]
                elif parts[0]:
                    proc.slow.append((float(parts[0]), float(parts[1]), int(parts[2])))
            except (IndexError, ValueError):
                raise ValueError(f"{path}:{n}: not a trace line: {line.strip()!r}") from None
    return proc


def read_traces(directory: str) -> list[Process]:
    names = sorted(n for n in os.listdir(directory)
                   if n.startswith("gc-") and n.endswith(".tsv"))
    return [read_trace(os.path.join(directory, n)) for n in names]


def overlap_ms(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def long_steps_against(abab: dict, procs: list[Process]) -> list[dict]:
    """Per arm and concurrency: the rounds' longest steps, how many overlap a
    slow collection of any process, and the collected ms inside them, by
    process."""
    rows = []
    for point in abab.get("points", []):
        for arm, rounds in (point.get("step_ms") or {}).items():
            steps = hits = 0
            step_total = 0.0
            inside: dict[int, float] = {}
            for rec in rounds:
                if not rec or "start_monotonic_s" not in rec:
                    continue
                origin = rec["start_monotonic_s"]
                for at_ms, ms, *_ in rec.get("longest", []):
                    s0 = origin + at_ms / 1e3
                    s1 = s0 + ms / 1e3
                    steps += 1
                    step_total += ms
                    hit = False
                    for p in procs:
                        for g0, gms, _gen in p.slow:
                            o = overlap_ms(s0, s1, g0, g0 + gms / 1e3)
                            if o > 0:
                                hit = True
                                inside[p.pid] = inside.get(p.pid, 0.0) + 1e3 * o
                    hits += hit
            if steps:
                rows.append({"arm": arm, "concurrency": point["concurrency"],
                             "long_steps": steps, "long_ms": step_total,
                             "with_gc": hits, "gc_ms_inside": inside})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("abab_json")
    ap.add_argument("gc_dir")
    ap.add_argument("--json", help="also write the report here")
    a = ap.parse_args(argv)
    # As abab.py wrote it, or gzipped as committed.
    with (gzip.open if a.abab_json.endswith(".gz") else open)(a.abab_json, "rt") as f:
        abab = json.load(f)
    if not os.path.isdir(a.gc_dir):
        print(f"gc_report.py: gc_dir '{a.gc_dir}' is not a folder of gc-<pid>.tsv traces",
              file=sys.stderr)
        return 2
    procs = read_traces(a.gc_dir)
    names = {p.pid: p.argv[:60] for p in procs}
    for p in procs:
        longest = max((ms for _, ms, _ in p.slow), default=0.0)
        print(f"pid {p.pid} ({p.argv[:60]}): {len(p.slow)} slow collections, "
              f"{sum(ms for _, ms, _ in p.slow):.0f} ms, longest {longest:.1f} ms; "
              f"all: {p.counts} collections, {[round(x) for x in p.ms]} ms by generation")
    rows = long_steps_against(abab, procs)
    for r in rows:
        inside = ", ".join(f"{pid} {ms:.0f} ms" for pid, ms in r["gc_ms_inside"].items())
        print(f"{r['arm']} c={r['concurrency']}: {r['with_gc']} of {r['long_steps']} "
              f"longest steps ({r['long_ms']:.0f} ms) overlap a slow collection"
              + (f" ({inside})" if inside else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"processes": {p.pid: {"argv": names[p.pid], "slow": p.slow,
                                             "counts": p.counts, "ms": p.ms}
                                     for p in procs},
                       "long_steps": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
