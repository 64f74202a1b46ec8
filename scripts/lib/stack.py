"""The series as a stack of upstream PRs: patches/stack.toml.

Usage: stack.py check PATCH_DIR   exit 1 (and say why) when PATCH_DIR/stack.toml
                                  does not cover PATCH_DIR/series exactly, in order
       stack.py show PATCH_DIR    print the stack as a markdown table

`series` stays what scripts/export.sh generates (one patch file per line); the
grouping lives beside it, edited by hand:

    [[pr]]
    title = "..."                      # the PR's title
    note = "..."                       # optional: why it is cut or placed there
    follow_up = true                   # optional: not one of the PRs the design's
                                       #   review asked for, but a measured change
                                       #   on top of them (after every one of them)
    patches = ["0001-....patch", ...]  # a run of consecutive patches of series
    [pr.backports]                     # optional: patch -> the upstream release
    "0001-....patch" = "0.33.0"        #   that already carries it

Rules: the PRs' patches, concatenated, are series itself (each patch in exactly
one PR, PRs in merge order, each PR's patches consecutive); every PR has a title
and at least one patch; a backport names a patch of its own PR; follow-up PRs
come after every other PR.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def series(patch_dir: Path) -> list[str]:
    """The patch names of patch_dir/series (comments and blank lines skipped, as
    scripts/lib/common.sh's series_patches does)."""
    names = []
    for line in (patch_dir / "series").read_text().splitlines():
        line = "".join(line.split("#", 1)[0].split())
        if line:
            names.append(line)
    return names


def load(patch_dir: Path) -> list[dict]:
    with open(patch_dir / "stack.toml", "rb") as f:
        return tomllib.load(f).get("pr", [])


def validate(names: list[str], prs: list[dict]) -> list[str]:
    """Every way in which prs does not group names; empty when it does."""
    errors: list[str] = []
    if not prs:
        return ["stack.toml has no [[pr]] entries"]
    flat: list[str] = []
    follow_up_seen = None
    for i, pr in enumerate(prs, 1):
        title = pr.get("title")
        patches = pr.get("patches")
        if not isinstance(title, str) or not title.strip():
            errors.append(f"PR {i} has no title")
        follow_up = pr.get("follow_up", False)
        if not isinstance(follow_up, bool):
            errors.append(f"PR {i} ({title}): follow_up must be true or false")
        elif follow_up and follow_up_seen is None:
            follow_up_seen = i
        elif not follow_up and follow_up_seen is not None:
            errors.append(f"PR {i} ({title}) comes after follow-up PR "
                          f"{follow_up_seen}: follow-ups come last")
        if not isinstance(patches, list) or not patches:
            errors.append(f"PR {i} ({title}) lists no patches")
            continue
        flat.extend(patches)
        for name, release in (pr.get("backports") or {}).items():
            if name not in patches:
                errors.append(f"PR {i} marks {name} as a backport but does not list it")
            if not isinstance(release, str) or not release:
                errors.append(f"PR {i}: backport {name} names no release")
    seen: set[str] = set()
    for name in flat:
        if name in seen:
            errors.append(f"{name} is listed more than once")
        seen.add(name)
        if name not in names:
            errors.append(f"{name} is not in series")
    for name in names:
        if name not in seen:
            errors.append(f"{name} (series) is in no PR")
    if not errors and flat != names:
        first = next(i for i, (a, b) in enumerate(zip(flat, names)) if a != b)
        errors.append(
            f"the PRs do not follow series: position {first + 1} is {flat[first]} "
            f"in stack.toml, {names[first]} in series"
        )
    return errors


def table(prs: list[dict], notes: bool = True) -> str:
    """The stack as a markdown table; ``notes=False`` leaves out the notes
    (they speak of this series' patch numbers: not for an upstream reader)."""
    if notes:
        rows = ["| PR | title | patches | backports | note |", "| --- | --- | --- | --- | --- |"]
    else:
        rows = ["| PR | title | commits | already upstream in |", "| --- | --- | --- | --- |"]
    n = 0
    for i, pr in enumerate(prs, 1):
        first, last = n + 1, n + len(pr["patches"])
        n = last
        span = f"{first}" if first == last else f"{first}-{last}"
        backports = pr.get("backports") or {}
        title = pr["title"].replace("|", "/")
        if pr.get("follow_up"):
            title += " (follow-up)"
        if not notes:
            releases = ", ".join(sorted(set(backports.values())))
            rows.append(f"| PR {i} | {title} | {span} | {releases} |")
            continue
        back = ", ".join(f"{name[:4]} (in {release})" for name, release in backports.items())
        note = " ".join(str(pr.get("note", "")).split()).replace("|", "/")
        rows.append(f"| PR {i} | {title} | {span} | {back} | {note} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("check", "show"):
        print(__doc__.strip())
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    patch_dir = Path(argv[1])
    try:
        prs = load(patch_dir)
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"stack.toml: {e}")
        return 1
    errors = validate(series(patch_dir), prs)
    if argv[0] == "check":
        for e in errors:
            print(f"stack.toml: {e}")
        return 1 if errors else 0
    print(table(prs))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
