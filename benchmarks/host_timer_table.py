"""Per arm and concurrency, the host's time per engine step that
``ab_hooks.HostTimer`` read after each measured round (an ``abab.py`` run
with ``"probe": "host_timer_read"``): the median over rounds of each field.

    python benchmarks/host_timer_table.py ABAB.json[.gz]

Columns: the step's wall and the stepping thread's CPU time from one step's
start to the next (ms; their difference is time the thread did not run: a
sleeping wait, or a host short of CPU), then per timed call its wall / CPU
time a step (µs; a call a step makes less than once a step counts
proportionally). ``wait_output`` is the wait for a step's output copy and
its conversion to lists (tens of µs when nothing is waited for): a long one
whose CPU time is close to its wall time is a wait that spins.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import read_json  # noqa: E402

STEP_FIELDS = ("step_wall_ms", "step_cpu_ms")


def arm_medians(rounds: list[list]) -> dict:
    """The first worker's answers, one per round, as medians over the rounds
    of each field (None where no round had a value)."""
    answers = [r[0] for r in rounds if r and isinstance(r[0], dict)]
    out: dict = {}
    for field in STEP_FIELDS:
        values = [a[field] for a in answers if a.get(field) is not None]
        out[field] = statistics.median(values) if values else None
    calls = [k for k in (answers[0] if answers else {}) if isinstance(answers[0][k], dict)]
    for call in calls:
        out[call] = {}
        for key in ("wall_us", "cpu_us"):
            values = [a[call][key] for a in answers
                      if isinstance(a.get(call), dict) and a[call].get(key) is not None]
            out[call][key] = statistics.median(values) if values else None
    return out


def table(run: dict) -> str:
    lines = []
    for point in run["points"]:
        probes = point.get("probes") or {}
        if not probes:
            continue
        lines.append(f"c={point['concurrency']}")
        for arm, rounds in probes.items():
            med = arm_medians(rounds)
            head = " ".join(f"{f.split('_')[1]} {_ms(med[f])}" for f in STEP_FIELDS)
            calls = ", ".join(f"{call} {_us(v['wall_us'])}/{_us(v['cpu_us'])}"
                              for call, v in med.items() if isinstance(v, dict))
            lines.append(f"  {arm:<11} step {head} ms; µs a step wall/cpu: {calls}")
    return "\n".join(lines) if lines else "no HostTimer probe answers in this run"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("run", type=Path, help="abab.py result (.json or .json.gz)")
    args = ap.parse_args(argv)
    print(table(read_json(args.run)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
