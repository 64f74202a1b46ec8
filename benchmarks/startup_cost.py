"""What an engine's start-up costs, per engine of an A/B's log: the CUDA
graphs it captured (how many of each kind, in how many seconds), the memory
they took, and the draft-step price table DSL times after them.

    python3 benchmarks/startup_cost.py RUN-abab.log.gz [RUN-abab.log.gz ...]

DSL captures the verify and the draft's first pass at every width up to its
cap (the served width serves any of them), where SD captures them at its K
alone; then it times a draft forward and the rest of a step at each captured
batch size (the start-up price table). Read from vLLM's own log lines:

- per engine (its ``EngineCore pid``): the speculative config (``sdK``,
  ``dslK`` where ``dynamic_lookahead=True``, ``target`` without one) and the
  ``ab_hooks`` class injected, if any; "Graph capturing finished in N secs,
  took X GiB"; "init engine (...) took T s (compilation: C s)"; for DSL, the
  seconds from "device-side loops" to "prices each draft step" (the table);
  and from "JIT kernel warmup finished" to the capture's start (the V2
  runner's ``warmup_kernels``: eager prefill and decode steps);
- the capture progress bars ("Capturing CUDA graphs (PIECEWISE)", "(FULL)",
  "Capturing draft first-pass ...", "draft decode ..."), which carry no pid:
  their final counts and seconds (tqdm draws a 100% twice: read once) go to
  the engines in the order the engines captured, where no two engines'
  capture windows overlap and there is one group of bars an engine (else
  "-").

Printed per engine: label, hook, graphs and seconds of each kind, the table's
seconds, capture seconds and GiB, the warmup's seconds, init seconds and the
compilation's (log stamps are whole seconds: ±1 s).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import re
import sys
from dataclasses import dataclass, field

_LINE = re.compile(r"\((?:EngineCore|EngineCore_DP\d+) pid=(\d+)\) \w+ (\d\d-\d\d \d\d:\d\d:\d\d) ")
_SPEC = re.compile(r"speculative_config=(None|SpeculativeConfig\(.*?num_spec_tokens=(\d+))")
_HOOK = re.compile(r"Injected <class 'ab_hooks\.(\w+)'>")
_CAPTURED = re.compile(r"Graph capturing finished in (\d+) secs, took ([\d.]+) GiB")
_INIT = re.compile(r"init engine \(.*?\) took ([\d.]+) s \(compilation: ([\d.]+) s\)")
KINDS = {
    "CUDA graphs (PIECEWISE)": "piecewise",
    "CUDA graphs (FULL)": "full",
    "draft first-pass CUDA graphs (FULL)": "draft first",
    "draft decode CUDA graphs (FULL)": "draft decode",
}
# A capture bar at 100%: its kind (a key of KINDS), graphs, minutes, seconds.
_BAR = re.compile(r"Capturing (" + "|".join(map(re.escape, KINDS))
                  + r"): +100%\|[^|]*\| (\d+)/\d+ \[(\d+):(\d+)<")


@dataclass
class Engine:
    pid: str
    label: str = "?"
    hook: str = "-"
    capture_s: int | None = None
    capture_gib: float | None = None
    captured_at: dt.datetime | None = None
    init_s: float | None = None
    compile_s: float | None = None
    loops_at: dt.datetime | None = None
    warmed_at: dt.datetime | None = None
    table_s: float | None = None
    graphs: dict = field(default_factory=dict)  # kind -> (count, seconds)

    @property
    def capture_started(self) -> dt.datetime | None:
        if self.captured_at is None:
            return None
        return self.captured_at - dt.timedelta(seconds=self.capture_s or 0)

    @property
    def warmup_s(self) -> float | None:
        """Seconds from "JIT kernel warmup finished" (``kernel_warmup``) to the
        capture's start: the V2 runner's ``warmup_kernels`` (prefill and
        decode steps run eagerly so that kernels compile before capture)."""
        if self.warmed_at is None or self.capture_started is None:
            return None
        return (self.capture_started - self.warmed_at).total_seconds()


def _time(stamp: str) -> dt.datetime:
    return dt.datetime.strptime("2026-" + stamp, "%Y-%m-%d %H:%M:%S")


def read(lines) -> list[Engine]:
    """The engines of one log, in the order they started, with the capture
    bars' counts given to them where their capture windows do not overlap."""
    engines: dict[str, Engine] = {}
    bars: list[list[tuple[str, int, int]]] = []  # one list per PIECEWISE bar onwards
    for line in lines:
        for seg in re.split(r"(?=Capturing )", line):
            bar = _BAR.match(seg)
            if bar:
                entry = (KINDS[bar.group(1)], int(bar.group(2)),
                         int(bar.group(3)) * 60 + int(bar.group(4)))
                if bars and bars[-1] and bars[-1][-1] == entry:
                    continue  # tqdm draws a bar's 100% twice (last update, close)
                if entry[0] == "piecewise" or not bars:
                    bars.append([])
                bars[-1].append(entry)
        m = _LINE.match(line)
        if not m:
            continue
        pid, at = m.group(1), _time(m.group(2))
        eng = engines.setdefault(pid, Engine(pid))
        if "Initializing a V1 LLM engine" in line:
            spec = _SPEC.search(line)
            if spec and spec.group(1) != "None":
                kind = "dsl" if "dynamic_lookahead=True" in line else "sd"
                eng.label = f"{kind}{spec.group(2)}"
            elif spec:
                eng.label = "target"
        elif hook := _HOOK.search(line):
            eng.hook = hook.group(1)
        elif cap := _CAPTURED.search(line):
            eng.capture_s, eng.capture_gib = int(cap.group(1)), float(cap.group(2))
            eng.captured_at = at
        elif init := _INIT.search(line):
            eng.init_s, eng.compile_s = float(init.group(1)), float(init.group(2))
        elif "JIT kernel warmup finished" in line:
            eng.warmed_at = at
        elif "Draft decode steps run as device-side loops" in line:
            eng.loops_at = at
        elif "Dynamic speculation lookahead prices each draft step" in line:
            if eng.loops_at is not None:
                eng.table_s = (at - eng.loops_at).total_seconds()
    order = [e for e in engines.values() if e.captured_at is not None]
    order.sort(key=lambda e: e.captured_at)
    windows = [(e.capture_started, e.captured_at) for e in order]
    apart = all(windows[i][1] <= windows[i + 1][0] for i in range(len(windows) - 1))
    if apart and len(bars) == len(order):
        for eng, group in zip(order, bars):
            eng.graphs = {kind: (n, s) for kind, n, s in group}
    return list(engines.values())


def _open(path: str):
    return gzip.open(path, "rt", errors="replace") if path.endswith(".gz") else open(
        path, errors="replace")


def table(path: str) -> str:
    with _open(path) as f:
        engines = read(f)
    head = (f"{'pid':>6} {'engine':7} {'hook':38} " + " ".join(
        f"{k:>13}" for k in KINDS.values()) + f" {'table s':>7} {'capture':>13} {'warmup s':>8} {'init s':>13}")
    out = [path, head]
    for e in engines:
        cells = []
        for kind in KINDS.values():
            n, s = e.graphs.get(kind, (None, None))
            cells.append(f"{'-' if n is None else f'{n} in {s} s':>13}")
        table_s = "-" if e.table_s is None else f"{e.table_s:.0f}"
        capture = "-" if e.capture_s is None else f"{e.capture_s} s {e.capture_gib:.2f} GiB"
        init = "-" if e.init_s is None else f"{e.init_s:.0f} ({e.compile_s:.0f} comp)"
        warmup = "-" if e.warmup_s is None else f"{e.warmup_s:.0f}"
        out.append(f"{e.pid:>6} {e.label:7} {e.hook[:38]:38} " + " ".join(cells)
                   + f" {table_s:>7} {capture:>13} {warmup:>8} {init:>13}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", help="RUN-abab.log(.gz) files")
    args = ap.parse_args(argv)
    print("\n\n".join(table(p) for p in args.logs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
