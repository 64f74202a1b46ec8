"""Which CPUs to pin the A/B's engines to, and which the client gets, on the
GPU host: the highest CPU of each of the N highest cores (by their highest
CPU) for the engines, so no two engine CPUs share a core, and every CPU of
the other cores for the client (abab.py --pin-engines / --pin-client).

    read -r CPUS OTHERS < <(python3 scripts/gpu-host/engine_cpus.py [--cores 2])

Prints the two comma-separated lists on one line. The cores are read from
each CPU's sysfs topology (package and core id); a CPU whose topology cannot
be read counts as a core of its own. With N or fewer cores the engines get
one CPU of each and the client list is empty (the caller then pins no
client).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def pick(cpus: list[int], sysfs: Path, num_cores: int) -> tuple[list[int], list[int]]:
    """(engine CPUs, client CPUs) of ``cpus`` under the topology in ``sysfs``."""
    cores: dict[tuple[str, str], list[int]] = {}
    for cpu in sorted(cpus):
        topo = sysfs / f"cpu{cpu}" / "topology"
        try:
            core = ((topo / "physical_package_id").read_text().strip(),
                    (topo / "core_id").read_text().strip())
        except OSError:
            core = ("?", str(cpu))
        cores.setdefault(core, []).append(cpu)
    chosen = sorted(cores, key=lambda c: max(cores[c]))[-num_cores:]
    engines = [max(cores[c]) for c in chosen]
    others = [cpu for c in cores if c not in chosen for cpu in cores[c]]
    return engines, others


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2, help="engine CPUs, one per core")
    ap.add_argument("--sysfs", type=Path, default=Path("/sys/devices/system/cpu"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--cpus", help=argparse.SUPPRESS)  # tests: instead of the affinity
    args = ap.parse_args(argv)
    if args.cores < 1:
        raise SystemExit(f"engine_cpus.py: --cores {args.cores} must be at least 1")
    cpus = ([int(c) for c in args.cpus.split(",")] if args.cpus
            else sorted(os.sched_getaffinity(0)))
    engines, others = pick(cpus, args.sysfs, args.cores)
    return f"{','.join(map(str, engines))} {','.join(map(str, others))}"


if __name__ == "__main__":
    print(main())
