"""DSL's host bookkeeping a steady engine step adds over SD, timed on CPU:
the scheduler's ``width()`` (in ``schedule``), its hand-off to the served
width (``Scheduler._observe_draft_width`` with ``observe_step``, in
``update_from_output``), and the worker's host clock
(``HostStepClock.step_started``, in ``execute_model``): the calls session 42's
A/B found DSL's step to cost beyond SD K=4's on the small pair
(``../2026-12-05-h100-s42/``: +34/+31 us and +17/+14 us on that host).

    python bench.py [--reps N]   # from a vLLM checkout's root (the one timed)

Prints one JSON line: per call and batch size (c = 1, 8, 64), the median over
``--reps`` repetitions of the mean time a call takes in a loop of 20,000
steps (us). The stand-ins for the scheduler's and the runner's outputs carry
what those calls read: every request decoding with 4 draft slots, 2 tokens
sampled, the loop at 4 drafts.
"""

import argparse
import json
import statistics
import time
from types import SimpleNamespace as NS

from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController
from vllm.v1.worker.gpu.spec_decode.host_step_clock import HostStepClock

SIZES = [1, 2, 4, 8, 16, 32, 64]
STEPS = 20_000


def hand_off(c: int) -> tuple[float, float]:
    """Mean us a step of width() and of the hand-off, alternating as the
    scheduler calls them."""
    ctl = ServedWidthController(SIZES, 64, 4)
    ids = [f"req-{i}" for i in range(c)]
    so = NS(num_scheduled_tokens={r: 5 for r in ids},
            scheduled_spec_decode_tokens={r: [1, 2, 3, 4] for r in ids},
            total_num_scheduled_tokens=5 * c)
    mro = NS(sampled_token_ids=[[1, 2]] * c, num_spec_tokens_drafted=[4] * c,
             req_id_to_index={r: i for i, r in enumerate(ids)})
    sched = NS(draft_width_controller=ctl)
    observe = Scheduler._observe_draft_width
    clock = time.perf_counter_ns
    t_width = t_obs = 0
    for _ in range(STEPS):
        t0 = clock()
        ctl.width(c)
        t1 = clock()
        observe(sched, so, mro)
        t2 = clock()
        t_width += t1 - t0
        t_obs += t2 - t1
    return t_width / STEPS / 1e3, t_obs / STEPS / 1e3


def host_clock() -> float:
    clk = HostStepClock()
    t0 = time.perf_counter_ns()
    for _ in range(STEPS):
        clk.step_started()
    return (time.perf_counter_ns() - t0) / STEPS / 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    runs: dict[str, list[float]] = {}
    for _ in range(args.reps):
        for c in (1, 8, 64):
            w, o = hand_off(c)
            runs.setdefault(f"width c={c}", []).append(w)
            runs.setdefault(f"hand-off c={c}", []).append(o)
        runs.setdefault("clock", []).append(host_clock())
    print(json.dumps({k: round(statistics.median(v), 3) for k, v in runs.items()}))


if __name__ == "__main__":
    main()
