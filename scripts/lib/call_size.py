"""The bytes a device call sends, counted as the device counts them.

    python3 scripts/lib/call_size.py count LIMIT [CARRY_PATH...]
    python3 scripts/lib/call_size.py fit-cap LIMIT MARGIN

Run from the checkout's root. A device command carries the checkout's tracked
files that exist and its untracked files git does not ignore (a nested
repository such as vllm/ travels without its files), plus each ignored path
named in its carry, LIMIT bytes in all (64 MiB), counted as a tar archive
counts them: a 512-byte header per file and per folder, each file's bytes
padded to a multiple of 512.

``count`` prints the tree's bytes, each carry's, both ways, the total as sent
and what is left, and exits 1 over the limit (``scripts/gpu-host/call-size.sh``).
``fit-cap`` prints the largest chunk, in bytes, that fits in one call beside
the tree with MARGIN bytes to spare (``scripts/pack-offline.sh --cap fit``),
and exits 1 when the tree leaves no room.
"""

from __future__ import annotations

import os
import subprocess
import sys


def sent(size: int) -> int:
    """A file of ``size`` bytes as a tar archive counts it."""
    return 512 + -(-size // 512) * 512


def _add_parents(path: str, dirs: set[str]) -> None:
    d = os.path.dirname(path)
    while d and d not in dirs:
        dirs.add(d)
        d = os.path.dirname(d)


def tree_bytes(dirs: set[str]) -> tuple[int, int]:
    """The tree's file bytes and its bytes as sent; ``dirs`` gets its folders."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout
    tree = tree_sent = 0
    for raw in out.split(b"\0"):
        name = raw.decode()
        if name and os.path.lexists(name):
            size = os.lstat(name).st_size
            tree += size
            tree_sent += sent(size)
            _add_parents(name, dirs)
    return tree, tree_sent + 512 * len(dirs)


def carry_bytes(path: str, dirs: set[str]) -> tuple[int, int]:
    """A carried path's file bytes and its bytes as sent, with the folders
    ``dirs`` does not hold yet."""
    size = size_sent = 0
    before = len(dirs)
    _add_parents(path, dirs)
    if os.path.isdir(path) and not os.path.islink(path):
        for d, _, files in os.walk(path):
            dirs.add(d)
            for f in files:
                n = os.lstat(os.path.join(d, f)).st_size
                size += n
                size_sent += sent(n)
    else:
        size = os.lstat(path).st_size
        size_sent = sent(size)
    return size, size_sent + 512 * (len(dirs) - before)


def count(limit: int, carries: list[str]) -> int:
    dirs: set[str] = set()
    tree, total = tree_bytes(dirs)
    print(
        f"tree (tracked and untracked-not-ignored files): {tree:,} bytes "
        f"({total:,} as sent)"
    )
    for path in carries:
        size, size_sent = carry_bytes(path, dirs)
        total += size_sent
        print(f"carry {path}: {size:,} bytes ({size_sent:,} as sent)")
    print(f"total {total:,} of {limit:,} bytes as sent ({limit - total:,} left)")
    if total > limit:
        print(
            f"call-size.sh: {total - limit:,} bytes over the limit: carry less with "
            "this call or pack the chunks with a lower --cap (scripts/pack-offline.sh)",
            file=sys.stderr,
        )
        return 1
    return 0


def fit_cap(limit: int, margin: int) -> int:
    _, tree_sent = tree_bytes(set())
    cap = limit - tree_sent - margin
    if cap <= 0:
        print(
            f"--cap fit: the tree alone is {tree_sent:,} bytes as sent, which with "
            f"{margin:,} to spare leaves no room for a chunk in {limit:,}: move "
            "untracked folders out of the checkout or commit smaller results",
            file=sys.stderr,
        )
        return 1
    print(cap)
    return 0


def _int(text: str, what: str) -> int:
    if not text.isdigit():
        print(
            f"call_size.py: {what} '{text}' is not a number of bytes", file=sys.stderr
        )
        sys.exit(2)
    return int(text)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "count":
        return count(_int(argv[1], "LIMIT"), argv[2:])
    if len(argv) == 3 and argv[0] == "fit-cap":
        return fit_cap(_int(argv[1], "LIMIT"), _int(argv[2], "MARGIN"))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
