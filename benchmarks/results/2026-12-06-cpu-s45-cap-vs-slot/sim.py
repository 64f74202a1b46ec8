"""Session 45 (issue 29, CPU): which cap the series' stop rule wants at one request
as a function of what a verify slot costs, on the proxies' 16-layer draft trace.

Session 44's served-width simulation (``../2026-12-06-cpu-s44-served-width-b1/sim.py``,
whose ``run`` this calls unchanged) found cap 8 ahead of cap 4 with a free slot (1.092 vs
1.072x SD K=2) and behind it at 0.057 ms a slot (1.041 vs 1.054x). Under async scheduling
a request's slots are placed before its drafts exist, so every step pays its width's slots
whether the rule drafts into them or not. This tabulates the rule alone within a fixed
width (``dsl<cap>@1-64:<cap>``) for caps 2-8 and slot costs 0-0.057 ms, against SD at
K = 2 and the best SD K on the same requests, and the served width (the controller) at the
best cap and at 8.

    python benchmarks/results/2026-12-06-cpu-s45-cap-vs-slot/sim.py [--requests 256]
"""
from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location(
    "s44sim", HERE.parent / "2026-12-06-cpu-s44-served-width-b1" / "sim.py")
s44 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(s44)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=str(HERE.parent / "2026-12-06-h100-s44-traces"
                                           / "trace-l16-self-test.json.gz"))
    ap.add_argument("--requests", type=int, default=256)
    ap.add_argument("--slots", default="0,0.01,0.02,0.03,0.04,0.057")
    ap.add_argument("--caps", default="2,3,4,5,6,8")
    a = ap.parse_args()
    rows = s44.load_trace(Path(a.trace))
    caps = [int(c) for c in a.caps.split(",")]
    print(f"{a.requests} requests of {len(rows)} prompts in order, jitter 0, "
          f"V {s44.V} D {s44.D} ms a step plus S a slot; tokens per ms x SD K=2")
    print("S (ms) | SD K=3 | SD K=4 | " + " | ".join(f"rule, cap {c}" for c in caps)
          + " | best cap | served at best cap | served at 8")
    for S in (float(x) for x in a.slots.split(",")):
        base, _, _ = s44.run(rows, a.requests, 2, 2, 0.0, 0, S)
        sd = [s44.run(rows, a.requests, k, k, 0.0, 0, S)[0] / base for k in (3, 4)]
        fixed = {c: s44.run(rows, a.requests, c, "fixed", 0.0, 0, S)[0] / base for c in caps}
        best = max(fixed, key=fixed.get)
        served = s44.run(rows, a.requests, best, "served", 0.0, 0, S)[0] / base
        served8 = s44.run(rows, a.requests, 8, "served", 0.0, 0, S)[0] / base
        print(f"{S} | " + " | ".join(f"{x:.3f}" for x in sd) + " | "
              + " | ".join(f"{fixed[c]:.3f}" for c in caps)
              + f" | {best} | {served:.3f} | {served8:.3f}", flush=True)


if __name__ == "__main__":
    main()
