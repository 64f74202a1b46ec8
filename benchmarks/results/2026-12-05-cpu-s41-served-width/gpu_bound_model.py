"""The served width where the step's time grows with the width and the draft
loop (the session 41 review's model), for the step gate's cost: per engine
life, one batch size of N requests, each draft accepted with p, a step of
V0 + S * width * N + D * (the longest request's draft steps) with log-normal
noise, tokens a step that vary; the width every life ends at, out of 100.
With --report-forwards each step also reports what the engine's MRV2 DSL
worker does: the loop's draft steps and the share of requests with every
draft accepted (which the counterfactual narrowing prices); without, only
the tokens (the paired test alone).

    python gpu_bound_model.py [--report-forwards] DSL_SERVED_WIDTH.py GATE_SERVED_WIDTH.py

The modules as in README.md (/tmp/sw_dsl.py, /tmp/sw_gate.py)."""

import logging
import random
import sys

logging.disable(logging.CRITICAL)
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from sim_served_width import load  # noqa: E402


class _Clock:
    now = 0.0

    def __call__(self):
        return self.now


def life(module, seed, p, v0, s, d, noise, n, steps=3000, report=False):
    clock = _Clock()
    controller = module.ServedWidthController([n], n, 4, clock=clock)
    rng = random.Random(seed)
    placed = [controller.width(n)]
    for _ in range(steps):
        placed.append(controller.width(n))
        width = placed[-2]
        tokens = forwards = full = 0
        for _ in range(n):
            accepted = 0
            while accepted < width and rng.random() < p:
                accepted += 1
            tokens += 1 + accepted
            full += accepted == width
            forwards = max(forwards, min(accepted + 1, width))
        clock.now += (v0 + s * width * n + d * forwards) * rng.lognormvariate(0, noise)
        if report:
            controller.observe_step(n, True, tokens / n, forwards, full / n)
        else:
            controller.observe_step(n, True, tokens / n)
    return controller.widths()[n]


def cost_per_token(width, p, v0, s, d, n, steps=20000):
    """The mean step over the mean tokens a request gets, at a fixed width."""
    rng = random.Random(1)
    time = tokens = 0.0
    for _ in range(steps):
        got = forwards = 0
        for _ in range(n):
            accepted = 0
            while accepted < width and rng.random() < p:
                accepted += 1
            got += 1 + accepted
            forwards = max(forwards, min(accepted + 1, width))
        time += v0 + s * width * n + d * forwards
        tokens += got / n
    return time / tokens


if __name__ == "__main__":
    args = sys.argv[1:]
    report = args[:1] == ["--report-forwards"]
    args = args[1:] if report else args
    modules = {"dsl": load(__import__("pathlib").Path(args[0])),
               "gate": load(__import__("pathlib").Path(args[1]))}
    print("forwards and acceptance reported" if report else "tokens only")
    for p, v0, s, d, noise, n in [(0.25, 1.0, 0.02, 0.8, 0.05, 8),
                                  (0.3, 1.0, 0.1, 1.0, 0.03, 1),
                                  (0.5, 1.0, 0.05, 0.6, 0.05, 8),
                                  (0.3, 1.0, 0.3, 0.3, 0.03, 1)]:
        costs = [cost_per_token(w, p, v0, s, d, n) for w in range(1, 5)]
        print(f"p={p} V0={v0} S={s} D={d} noise={noise} N={n}: cost a token at "
              f"width 1-4 {[round(c, 3) for c in costs]}")
        for name, module in modules.items():
            ends = [life(module, seed, p, v0, s, d, noise, n, report=report)
                    for seed in range(100)]
            print(f"  {name}: lives ending at width 1-4: "
                  f"{[ends.count(w) for w in range(1, 5)]}")
