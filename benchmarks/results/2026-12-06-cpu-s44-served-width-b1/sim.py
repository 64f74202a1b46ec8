"""Session 44 (issue 29): the served width at one request, driven by a real
draft trace, on CPU (README.md: what it found).

vLLM's own ``ServedWidthController`` (the series' ``served_width.py``, as
applied in ``vllm/``) chooses the width of every step of a one-request load;
the series' stop rule (raw confidence, ``trace_stop_sim.Rule``) drafts within
it on the proxies' 16-layer draft trace (``../2026-12-06-h100-s44-traces``,
test split, prompts in order, wrapped); a step takes ``V + n * D + w * S`` ms
(n draft steps, w slots; session 34's DSL engine at one row: V 4.832, D 1.085,
and ``--slot`` S, default 0.057, the slot its served width measured at up
to 4 requests) times a lognormal jitter of
``--jitter`` (default 1%); the first step of a request carries its prompt.
Against fixed widths (the rule alone within w: ``dsl<cap>@1-64:<cap>``) and SD
at K = 2, on the same requests, in tokens per ms.

    python benchmarks/results/2026-12-06-cpu-s44-served-width-b1/sim.py [--requests 512]
"""
from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from trace_stop_sim import Predictor, Rule, accepted_run, drafts, load_trace  # noqa: E402

from vllm.v1.spec_decode.dynamic import served_width  # noqa: E402
from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController  # noqa: E402

FORGETS = [0]
_info = served_width.logger.info


def _count(msg, *args):
    if "choosing again" in msg:
        FORGETS[0] += 1
    _info(msg, *args)


served_width.logger.info = _count

V, D = 4.832, 1.085
SIZES = [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]


def run(rows, n_requests, cap, mode, jitter, seed, S, start_width=None):
    """``mode``: "served" (the controller), "fixed" (every step at ``cap``
    slots, the rule within), or an int K (SD: K drafts, K slots)."""
    rng = random.Random(seed)
    clock = [0.0]
    ctl = None
    if mode == "served":
        ctl = ServedWidthController(SIZES, 64, cap, clock=lambda: clock[0] / 1e3)
        if start_width is not None:
            # Batch size 4 settled at start_width (session 34: the c = 4
            # point before c = 1): batch size 1 borrows it.
            ctl._state[2].restart(start_width)
            ctl._state[2].settled = True
    rule = Rule(Predictor("raw"), V, D)
    FORGETS[0] = 0
    tokens = steps = 0
    widths: Counter = Counter()
    for i in range(n_requests):
        r = rows[i % len(rows)]
        acc, t, n = r["accepted"], 0, len(r["p"])
        first = True
        while t < n:
            w = ctl.width(1) if ctl else (mode if isinstance(mode, int) else cap)
            widths[w] += 1
            room = min(w, n - t)
            drafted = drafts(room if isinstance(mode, int) else rule, r, t, room, 0.0)
            run_ = accepted_run(acc, t, drafted)
            got = min(run_ + 1, n - t)
            ms = (V + drafted * D + w * S) * math.exp(rng.gauss(0, jitter))
            clock[0] += ms
            if ctl:
                ctl.observe_step(1, not first, float(got), forwards=drafted,
                                 all_accepted=1.0 if run_ == w else 0.0)
            tokens += got
            steps += 1
            t += run_ + 1
            first = False
    return tokens / clock[0], steps, widths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=str(HERE.parent / "2026-12-06-h100-s44-traces"
                                           / "trace-l16-self-test.json.gz"))
    ap.add_argument("--requests", type=int, default=512)
    ap.add_argument("--jitter", type=float, default=0.01)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--slot", type=float, default=0.057,
                    help="ms a verify slot adds to a step at one request")
    a = ap.parse_args()
    rows = load_trace(Path(a.trace))
    print(f"{a.requests} requests of {len(rows)} prompts in order, jitter {a.jitter:.1%}, "
          f"V {V} D {D} slot {a.slot} ms; x SD K=2, per seed")
    for seed in range(a.seeds):
        base, _, _ = run(rows, a.requests, 2, 2, a.jitter, seed, a.slot)
        out = [f"seed {seed}:"]
        for label, cap, mode, start in (("fixed 4", 4, "fixed", None),
                                        ("served 4", 4, "served", None),
                                        ("served 4, 4 reqs at 3", 4, "served", 3),
                                        ("served 4, 4 reqs at 2", 4, "served", 2),
                                        ("served 4, 4 reqs at 1", 4, "served", 1),
                                        ("fixed 8", 8, "fixed", None),
                                        ("served 8", 8, "served", None),
                                        ("served 8, 4 reqs at 2", 8, "served", 2)):
            rate, steps, widths = run(rows, a.requests, cap, mode, a.jitter, seed, a.slot, start)
            share = " ".join(f"{w}:{c / steps:.2f}" for w, c in sorted(widths.items()))
            out.append(f"  {label:22s} {rate / base:.3f}  forgot {FORGETS[0]}  widths {share}")
        print("\n".join(out))


if __name__ == "__main__":
    main()
