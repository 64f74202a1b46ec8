"""The draft step's price in every priced narrowing of the committed A/B logs
against the engine's start-up time for it (patch 0050's evidence).

Each engine logs its start-up table once ("prices each draft step ... rows:
draft step/rest of step ms {rows: draft/rest, ...}") and each narrowing the
served steps priced ("N drafts for up to R requests (from W: ... draft step
X ms ..."). Pairs them by engine process and rows (exact rows: the controller's
batch sizes and the drafter's timed sizes are the same captured sizes) and
prints the served price over the start-up time.

    python prices.py [LOG.gz ...]   (default: every ../*/*-abab.log.gz)
"""

import gzip
import re
import sys
from pathlib import Path

TABLE = re.compile(
    r"pid=(\d+).*prices each draft step.*rows: draft step/rest of step ms \{([^}]*)\}"
)
MOVE = re.compile(
    r"pid=(\d+).*lookahead: (\d+) drafts for up to (\d+) requests \(from (\d+)"
    r".*?draft step ([0-9.]+) ms"
)


def main() -> None:
    here = Path(__file__).resolve().parent
    logs = [Path(a) for a in sys.argv[1:]] or sorted(here.parent.glob("*/*-abab.log.gz"))
    ratios = []
    for path in logs:
        tables: dict[str, dict[int, float]] = {}
        rows_out = []
        for line in gzip.open(path, "rt", errors="replace"):
            if m := TABLE.search(line):
                tables[m.group(1)] = {
                    int(k): float(v.split("/")[0])
                    for k, v in (x.split(":") for x in m.group(2).split(","))
                }
            elif m := MOVE.search(line):
                pid, width, rows, frm, served = m.groups()
                timed = tables.get(pid, {}).get(int(rows))
                ratio = None if timed is None else float(served) / timed
                if ratio is not None:
                    ratios.append(ratio)
                rows_out.append(
                    f"  {rows:>3} requests {frm}->{width}: served {float(served):.3f} ms, "
                    f"start-up {'-' if timed is None else f'{timed:.3f} ms'}"
                    + ("" if ratio is None else f", ratio {ratio:.2f}")
                )
        if rows_out:
            print(path.parent.name + "/" + path.name)
            print("\n".join(rows_out))
    ratios.sort()
    print(f"\n{len(ratios)} priced narrowings with a start-up time; served / start-up:")
    print(" ".join(f"{r:.2f}" for r in ratios))
    print(f"at most 0.99: {sum(r <= 0.99 for r in ratios)}; above 1: {sum(r > 1 for r in ratios)}")


if __name__ == "__main__":
    main()
