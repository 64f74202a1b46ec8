"""Session 28, after the run: the served width controller when the requests a
batch size serves change (0009), in the test module's simulation of the MRV2
runner's order, on CPU.

    git -C vllm checkout wip-served   # patches-wip/dsl-served-width applied
    (cd vllm && PYTHONPATH=$PWD:../tests/upstream python \
        ../benchmarks/results/2026-12-04-h200-s28/served_width_shift_sim.py)

1. The change: one request at a time; 3000 steps of requests that accept
   little (the first draft 0.15, never the second: the last request of a wave,
   as the batch size of one saw in session 28's 64-request waves), then 3000
   steps of requests whose first four drafts are accepted with 0.7, 0.6, 0.5,
   0.4 (width 2 cheapest, 1 4% dearer). Prints the second phase's time per
   token for the controller (started at the cap 4, through the first phase)
   and for each fixed width, per seed and their mean. Run at 0008
   (``git -C vllm checkout <0008 commit>``) and 0009 to compare.
2. Steady requests (the second kind) at 1, 4, 16, 64 requests, ten seeds:
   how often a batch size forgets (0009 only; with ``_SHIFT = 0.1`` 19 times
   in these 40 runs).
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd() / "tests/v1/spec_decode"))
import test_dsl_served_width as T  # noqa: E402

from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController  # noqa: E402

LOW, TYPICAL = (0.15, 0.0, 0.0, 0.0), (0.7, 0.6, 0.5, 0.4)


class Fixed:
    def __init__(self, width):
        self.w = width

    def width(self, num_reqs):
        return self.w

    def observe_step(self, *args):
        pass


def ms_per_token(controller, clock, steps, seed, accept, num_reqs=1):
    tokens = [0.0]
    observe = controller.observe_step

    def counting(n, decode_only, per_request, *rest):
        tokens[0] += per_request
        observe(n, decode_only, per_request, *rest)

    controller.observe_step = counting
    start = clock.now
    T._serve_loop(controller, clock, steps, num_reqs=num_reqs, loop=T._continue(0.6),
                  accept=accept, base_ms=5.0, draft_ms=1.0, seed=seed)
    controller.observe_step = observe
    return (clock.now - start) / tokens[0]


costs = {}
for seed in range(6):
    clock = T._Clock()
    controller = ServedWidthController([1], 1, 4, clock=clock)
    ms_per_token(controller, clock, 3000, seed, LOW)
    costs.setdefault("served", []).append(
        ms_per_token(controller, clock, 3000, seed + 100, TYPICAL))
    for w in (1, 2, 3, 4):
        costs.setdefault(f"fixed {w}", []).append(
            ms_per_token(Fixed(w), T._Clock(), 3000, seed + 100, TYPICAL))
print("after the change, ms a token (mean; six seeds)")
for name, values in costs.items():
    print(f"  {name:8s} {statistics.fmean(values):.3f}  "
          + " ".join(f"{v:.3f}" for v in values))

if hasattr(ServedWidthController, "_forget"):
    forgot = []
    ServedWidthController._forget_orig = ServedWidthController._forget

    def counting_forget(self, size, shift):
        forgot.append((size.rows, round(shift, 3)))
        self._forget_orig(size, shift)

    ServedWidthController._forget = counting_forget
    runs = 0
    for seed in range(10):
        for n in (1, 4, 16, 64):
            clock = T._Clock()
            controller = ServedWidthController([n], n, 4, clock=clock)
            T._serve_loop(controller, clock, 20000 if n < 16 else 6000, num_reqs=n,
                          loop=T._continue(0.6), accept=TYPICAL, base_ms=5.0 + 0.05 * n,
                          draft_ms=1.0, slot_ms=0.02 * n, seed=seed)
            runs += 1
    print(f"steady requests: {len(forgot)} forgets in {runs} runs {forgot}")
