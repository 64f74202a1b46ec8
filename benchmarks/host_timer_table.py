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

    python benchmarks/host_timer_table.py ABAB.json[.gz] --pair BASE ARM

Per concurrency, where ARM's step time goes beyond BASE's, round by round:
the median step's difference, then each call's own time (wall, a mean a
step, less the timed calls made inside it: ``begin`` in ``propose``;
``propose``, ``record`` and ``gather`` (or ``snapshot``) in
``sample_tokens``; the clock in ``execute_model``; the hand-off in
``update_from_output``), then the mean busy step's time outside every timed
call (where the answers have it: idle gaps left out), each as the median over rounds of
ARM less BASE in the same round, with the range. A call whose range spans
zero differs by less than the host's speed did between the two arms'
segments (session 40: up to 47% between rounds). Garbage collection
(``gc0``-``gc2``) is inside whichever call triggered it: shown apart, not
added.
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


# Timed calls made inside another timed call (HostTimer's wraps).
PARENT = {"begin": "propose", "propose": "sample_tokens", "record": "sample_tokens",
          "gather": "sample_tokens", "snapshot": "sample_tokens",
          "clock": "execute_model",
          "served_width": "update_from_output"}
OUTSIDE = "outside the timed calls"


def own_times(answer: dict) -> dict[str, float]:
    """One probe answer as each call's own wall time a step (µs, a mean:
    less the timed calls inside it), the mean step's time outside every
    timed call where the answer has the mean busy step
    (``step_busy_wall_mean_ms``; older answers have only the median, which
    cannot be set against means, or a mean over every period, idle gaps
    included: 4.2-32 ms in session 41), and the garbage collector's time apart
    (``gc0``-``gc2``, inside the others)."""
    total = {k: v["wall_us"] or 0.0 for k, v in answer.items()
             if isinstance(v, dict) and v.get("wall_us") is not None}
    own = {k: t for k, t in total.items() if not k.startswith("gc")}
    for child, parent in PARENT.items():
        if child in own and parent in own:
            own[parent] -= total[child]
    if answer.get("step_busy_wall_mean_ms") is not None:
        top = sum(t for k, t in total.items()
                  if not k.startswith("gc") and PARENT.get(k) not in total)
        own[OUTSIDE] = answer["step_busy_wall_mean_ms"] * 1e3 - top
    own.update({k: t for k, t in total.items() if k.startswith("gc")})
    return own


def paired(run: dict, base: str, arm: str) -> str:
    """What ``--pair BASE ARM`` prints (see the module's doc)."""
    lines = []
    for point in run["points"]:
        probes = point.get("probes") or {}
        rounds = [(b[0], a[0]) for b, a in zip(probes.get(base, []), probes.get(arm, []))
                  if b and a and isinstance(b[0], dict) and isinstance(a[0], dict)
                  and b[0].get("step_wall_ms") and a[0].get("step_wall_ms")]
        if not rounds:
            continue
        lines.append(f"c={point['concurrency']}: {arm} less {base}, µs a step "
                     f"(median over {len(rounds)} rounds of the same round's "
                     "difference [range])")
        steps = [(a["step_wall_ms"] - b["step_wall_ms"]) * 1e3 for b, a in rounds]
        lines.append(f"  {'step (median step)':<38} {_diff(steps)}")
        owns = [(own_times(b), own_times(a)) for b, a in rounds]
        # Every call either arm has (one only the base makes counts as gone).
        names = list(dict.fromkeys(k for b, a in owns for k in (*b, *a)))
        names.sort(key=lambda k: (k.startswith("gc"), k == OUTSIDE))
        for name in names:
            diffs = [a.get(name, 0.0) - b.get(name, 0.0) for b, a in owns]
            label = name if name not in PARENT else f"{name} (in {PARENT[name]})"
            lines.append(f"  {label:<38} {_diff(diffs)}")
    if not lines:
        return f"no HostTimer probe answers of both {base} and {arm} in this run"
    return "\n".join(lines)


def _diff(values: list[float]) -> str:
    return (f"{statistics.median(values):+7.0f}  "
            f"[{min(values):+.0f}, {max(values):+.0f}]")


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("run", type=Path, help="abab.py result (.json or .json.gz)")
    ap.add_argument("--pair", nargs=2, metavar=("BASE", "ARM"),
                    help="where ARM's step time goes beyond BASE's, round by round")
    args = ap.parse_args(argv)
    run = read_json(args.run)
    print(paired(run, *args.pair) if args.pair else table(run))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
