"""The lines the series adds to vLLM name nothing of this project.

    python3 scripts/lib/series_refs.py PATCH_DIR

Upstream code, tests and docs cannot point at this project's result folders,
scripts or name: a reviewer cannot follow them, and they outlive the project.
Reads each patch of PATCH_DIR/series (its diff, not its message: the PR
descriptions made from the messages are checked by pr_doc.py) and prints one
line per added line that matches, naming the patch, the file and what it
points at. Exit status 1 where any does. The patterns are pr_doc.py's paths
and names of this project (its issue and patch numbers are left out: in code
they are indistinguishable from ordinary numbers).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pr_doc import PRIVATE_REFERENCES  # noqa: E402

CHECKED = ("a path of this project", "this project")
PATTERNS = [(re.compile(p), what) for p, what in PRIVATE_REFERENCES if what in CHECKED]


def added_lines(patch: str):
    """(file, line) for each line a ``git format-patch`` diff adds."""
    current = None
    in_diff = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_diff = True
            current = None
        elif not in_diff:
            continue
        elif line.startswith("+++ "):
            current = line[4:].removeprefix("b/")
        elif line.startswith("+") and current is not None:
            yield current, line[1:]


def problems(patch_dir: Path) -> list[str]:
    out = []
    series = (patch_dir / "series").read_text().split()
    for name in series:
        for path, line in added_lines((patch_dir / name).read_text()):
            for pattern, what in PATTERNS:
                if pattern.search(line):
                    out.append(f"{name}: {path}: {what}: {line.strip()[:100]}")
    return out


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if len(argv) != 1:
        print("series_refs.py: one argument, PATCH_DIR (see --help)", file=sys.stderr)
        return 2
    found = problems(Path(argv[0]))
    for problem in found:
        print(problem)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
