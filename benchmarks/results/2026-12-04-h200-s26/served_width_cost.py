"""Host time of the served draft-width rule per engine step, on CPU (session 26).

Runs ``ServedWidthController`` (``patches-wip/dsl-served-width`` 0001-0004,
vllm ``wip-served``) for 200,000 steps of one request with the engine's
captured batch sizes up to 64, cap 4, a simulated clock (2.5-3.0 ms periods)
and random drafted counts and accepted shares; prints the mean wall time of one
``width()`` + ``observe_step()`` pair. Needs vllm/ on branch wip-served:

    cd vllm && git checkout wip-served && python ../benchmarks/results/2026-12-04-h200-s26/served_width_cost.py

Session 26, this dev machine (2 shared cores): 23-30 us a step (two runs).
"""

import random
import time

from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController

SIZES = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 56, 64]
STEPS = 200_000

now = [0.0]
controller = ServedWidthController(SIZES, 64, 4, clock=lambda: now[0])
random.seed(0)
t0 = time.perf_counter()
for _ in range(STEPS):
    width = controller.width(1)
    now[0] += 0.0025 + random.random() * 0.0005
    controller.observe_step(
        1, True, 1 + random.random(), random.randint(1, width), random.random()
    )
per_step_us = (time.perf_counter() - t0) / STEPS * 1e6
print(
    f"{per_step_us:.1f} us a step (width() + observe_step()), widths {controller.widths()}"
)
