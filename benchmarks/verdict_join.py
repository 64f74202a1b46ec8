"""Issue 29's verdict rows from several runs, in one list.

    python benchmarks/verdict_join.py --out DIR/verdict.json \\
        RESULTS/verdict-s62p-dsl4.json RESULTS/verdict-s61n-dsl4.json ...

Each input is one ``verdict.py`` output that ``ab-read.sh`` wrote into a
results folder as ``verdict-<run>-<arm>.json``, beside that run's
``<run>-abab.json.gz``. The points of issue 29 are spread over runs (each
session measures some concurrencies), so this puts their rows in one list,
every row as ``verdict.py`` wrote it plus where it came from:

- ``run``: the results folder and run (``2026-12-07-h100-s62/s62p``);
- ``prompts``: ``"same"`` where every round served the same requests,
  ``"rotated"`` where each round served others (``abab.py
  --rotate-prompts``): the base arm's ``noise`` is the host's in the first,
  mostly the prompts' in the second;
- ``requests`` (a round's, per arm) and ``rounds`` (measured).

Every row is kept: where two runs measured one pair and concurrency, both
rows are in the list (sorted by pair, concurrency, run), and the reader
sees both. Exit status 2, naming the file, where an input is not a
``verdict-<run>-<arm>.json`` or its run's ``abab.json.gz`` is not beside it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import NoReturn

NAME = re.compile(r"^verdict-(?P<run>[A-Za-z0-9_]+)-dsl[0-9][A-Za-z0-9-]*\.json$")


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"verdict_join: {message}\n")
    raise SystemExit(2)


def _run_of(path: Path) -> tuple[str, dict]:
    m = NAME.match(path.name)
    if not m:
        _fail(f"{path} is not a verdict-<run>-dslN.json "
              "(ab-read.sh's name for a run's verdict)")
    abab = path.parent / f"{m['run']}-abab.json.gz"
    if not abab.is_file():
        _fail(f"{abab} is missing: the run's abab.json.gz "
              f"must be beside {path.name} (ab-read.sh copies it)")
    with gzip.open(abab, "rt") as f:
        return m["run"], json.load(f)


def rows_from(path: Path) -> list[dict]:
    """The rows of one verdict file, each with its run, prompt schedule,
    requests a round and measured rounds."""
    run, data = _run_of(path)
    points = {p["concurrency"]: p for p in data["points"]}
    out = []
    for row in json.loads(path.read_text()):
        point = points.get(row["concurrency"])
        if point is None:
            _fail(f"{path} has c={row['concurrency']}, "
                  f"which {run}-abab.json.gz never measured")
        rounds = len(point["tpot_ms"].get(data["arms"][0]) or [])
        out.append({**row, "run": f"{path.parent.name}/{run}",
                    "prompts": "rotated" if data.get("rotate_prompts") else "same",
                    "requests": point["requests"], "rounds": rounds})
    return out


def _num(x: float | str | None, scale: float = 1, fmt: str = ".3f") -> str:
    """A row's number for the table, ``-`` where the run had none."""
    return "-" if x is None or isinstance(x, str) else format(scale * x, fmt)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("verdicts", nargs="+", type=Path,
                    help="verdict-<run>-dslN.json files, each beside its run's abab.json.gz")
    ap.add_argument("--out", type=Path, required=True, help="the joined rows (a JSON list)")
    args = ap.parse_args(argv)
    rows = [r for p in args.verdicts for r in rows_from(p)]
    rows.sort(key=lambda r: (r["pair"], r["concurrency"], r["run"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    for r in rows:
        print(f"{r['pair']:8} c={r['concurrency']:<3d} K={r['best_sd_k']} "
              f"{_num(r['ratio_dsl_vs_best_sd'])} [{', '.join(map(_num, r['ci95'] or ['-', '-']))}] "
              f"noise {_num(r['noise'], 100, '.1f')}% {r['prompts']:7} {r['rounds']:2d} rounds  "
              f"{r['run']}")
    print(f"wrote {args.out} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
