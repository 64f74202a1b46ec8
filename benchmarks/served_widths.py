"""The draft widths a DSL engine served in an A/B, read from its CUDA graph
stats (``benchmarks/abab.py`` runs engines with ``cudagraph_metrics``).

    python3 benchmarks/served_widths.py RUN-abab.log.gz [--cap 4] [--exact] [--arm ARM]

vLLM logs, every few seconds and per engine, how many steps ran each
captured graph and with how many tokens ("CUDAGraph Stats"). A decode step of
``n`` requests at width ``w`` runs ``n * (w + 1)`` tokens, so the tables give
the widths served, which the served-width controller's log does not (it logs
moves and forgets, not the widths a batch size borrows or explores). The DSL
engine is the one whose capture sizes hold the most sizes up to 16 (its
graphs cover every width up to the cap). Each stats interval is read for the
A/B point whose summary ("c=32 (32 requests x 8 rounds) ...") comes next in
the log, as steps of ``n`` requests in ``(3/4 C, C]`` at concurrency ``C``;
a token count that two such ``(n, w)`` explain is left out, and an interval
that spans two points is read for the later one. Printed per interval: its
log time, the FULL-graph decode steps so read and their shares by width.
With ``--exact`` only steps of exactly ``C`` requests are read (``C * (w +
1)`` tokens): no step of fewer requests is read as another width (in session
50's run 3.7% of SD K=2's steps at 32 and 64 read as width 1 without it).

Two DSL engines at the same cap capture the same sizes: where more than one
engine started with the DSL engine's capture sizes, name the arm (``--arm
dsl4+once``). Since session 50 ``abab.py`` marks each arm's turn ("[abab]
turn ARM TAG"), and an engine logs its stats from its own steps, so the
intervals after an arm's mark up to the next one are that arm's; a log
without marks says so and reads nothing.
"""

import argparse
import collections
import gzip
import re
import sys

ROW = re.compile(r"\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\w+)\s*\|\s*(\d+)\s*\|")
SIZES = re.compile(r"Capture sizes: \[([0-9, ]+)")
ENGINE_SIZES = re.compile(
    r"\((?:EngineCore|EngineCore_DP\d+) pid=(\d+)\).*Initializing a V1 LLM engine"
    r".*'cudagraph_capture_sizes': \[([0-9, ]+)\]"
)
POINT = re.compile(r"^c=(\d+) \(")
TURN = re.compile(r"^\[abab\] turn (\S+) (\S+)$")


def width_of(
    tokens: int, concurrency: int, cap: int, exact: bool = False
) -> int | None:
    """The width of a step of ``tokens`` at ``concurrency``, where one
    ``(n, w)`` explains it (with ``exact``, only ``n == concurrency``)."""
    if exact:
        w = tokens // concurrency - 1
        return w if tokens % concurrency == 0 and 1 <= w <= cap else None
    found = [
        w
        for w in range(1, cap + 1)
        if tokens % (w + 1) == 0
        and 3 * concurrency < 4 * (tokens // (w + 1)) <= 4 * concurrency
    ]
    return found[0] if len(found) == 1 else None


def intervals(lines: list[str], signature: str | None, arm: str | None = None):
    """(time, {tokens: FULL steps}) per stats interval of the engine whose
    capture sizes are ``signature`` (or, with ``arm``, of the intervals
    logged in that arm's turns), and ("point", C, line) per summary."""
    i = 0
    turn = None
    while i < len(lines):
        line = lines[i]
        if POINT.match(line):
            yield "point", int(POINT.match(line).group(1)), line
        if t := TURN.match(line):
            turn = t.group(1)
        m = SIZES.search(line)
        i += 1
        if not m or (turn != arm if arm is not None else m.group(1) != signature):
            continue
        steps: collections.Counter[int] = collections.Counter()
        while i < len(lines) and "cuda_graph.py" in lines[i] and not SIZES.search(lines[i]):
            row = ROW.search(lines[i])
            if row and row.group(4) == "FULL":
                steps[int(row.group(1))] += int(row.group(5))
            i += 1
        yield "stats", line.split("INFO ")[1][:14], steps


def engines_by_sizes(lines: list[str]) -> dict[str, set[str]]:
    """The engine cores' pids by the capture sizes they started with."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for line in lines:
        if m := ENGINE_SIZES.search(line):
            out[m.group(2)].add(m.group(1))
    return dict(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--cap", type=int, default=4, help="the DSL arm's cap (default 4)")
    ap.add_argument("--exact", action="store_true",
                    help="read only steps of exactly C requests at concurrency C")
    ap.add_argument("--arm", help="the arm whose turns to read (abab.py's turn marks), "
                                  "instead of the engine with the DSL capture sizes")
    args = ap.parse_args(argv)
    opener = gzip.open if args.log.endswith(".gz") else open
    with opener(args.log, "rt") as f:
        lines = f.read().splitlines()
    signatures = {m.group(1) for line in lines if (m := SIZES.search(line))}
    if not signatures:
        sys.exit(f"{args.log}: no 'Capture sizes' lines: run the A/B with cudagraph_metrics on")
    dsl = max(signatures, key=lambda s: sum(int(x) <= 16 for x in s.split(",")))
    turns = {t.group(1) for line in lines if (t := TURN.match(line))}
    if args.arm is not None:
        if not turns:
            sys.exit(f"{args.log}: no '[abab] turn' marks (abab.py before session 50): "
                     f"leave out --arm to read the engine with the DSL capture sizes")
        if args.arm not in turns:
            sys.exit(f"{args.log}: --arm {args.arm!r} had no turn; arms: "
                     f"{', '.join(sorted(turns))}")
        dsl = None
    elif len(engines := engines_by_sizes(lines).get(dsl, set())) > 1:
        sys.exit(f"{args.log}: {len(engines)} engines started with the DSL engine's capture "
                 f"sizes (two DSL arms at one cap?): "
                 + (f"name one with --arm ({', '.join(sorted(turns))})" if turns else
                    "the log has no turn marks to tell their intervals apart"))
    pending = []
    for kind, a, b in intervals(lines, dsl, args.arm):
        if kind == "stats":
            pending.append((a, b))
            continue
        print(b[:72])
        for when, steps in pending:
            by_width: collections.Counter[int] = collections.Counter()
            for tokens, n in steps.items():
                w = width_of(tokens, a, args.cap, args.exact)
                if w is not None:
                    by_width[w] += n
            total = sum(by_width.values())
            shares = " ".join(f"{w}:{100 * by_width[w] / total:.0f}%" for w in sorted(by_width))
            print(f"  {when}  {total:4d} steps  {shares}")
        pending = []
    if pending:
        print(f"({len(pending)} stats intervals after the last point, not read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
