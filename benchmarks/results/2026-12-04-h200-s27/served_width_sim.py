"""Session 27, after the run: the served width controller at one request in a
simulation of the MRV2 runner's order, on CPU.

    git -C vllm checkout wip-served   # patches-wip/dsl-served-width applied
    PYTHONPATH=vllm python benchmarks/results/2026-12-04-h200-s27/served_width_sim.py

One request; a step's verify takes BASE ms and each draft step DRAFT ms; the
draft loop drafts its first token and goes on with P_GO; draft ``j`` is
accepted with ACCEPT[j] after the ones before it. The runner hands a step's
output to the host before the step's draft loop runs, so the time between two
outputs holds the earlier step's loop and the later step's verify, and each
output reports the forwards of the loop behind the drafts it verified (what
``Scheduler._observe_draft_width`` hands the controller). Prints each fixed
width's time per token, then, per seed, where the controller started at the
cap settles and the share of the last steps at each width, and its moves.
Run it on the wip branch at 0005 (``git -C vllm checkout <0005 commit>``) and
at 0007 to compare.
"""
import random
import sys

from vllm.v1.spec_decode.dynamic import served_width
from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController

P_GO = 0.6
ACCEPT = (0.7, 0.6, 0.5, 0.4)
BASE, DRAFT = 5.0, 1.0
CAP, STEPS, SEEDS = 4, 6000, 10


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def serve(controller, clock, steps, seed):
    rng = random.Random(seed)
    placed = [controller.width(1)]
    drafted = None
    total_ms = total_tokens = 0.0
    for step in range(steps):
        placed.append(controller.width(1))
        width = placed[step]
        verify = placed[step - 1] if step else width
        verified = verify if drafted is None else min(drafted, verify)
        accepted = 0
        while accepted < verified and rng.random() < ACCEPT[accepted]:
            accepted += 1
        forwards = 1
        while forwards < width and rng.random() < P_GO:
            forwards += 1
        ms = (BASE + DRAFT * (width if drafted is None else drafted)) * (
            rng.lognormvariate(0.0, 0.02))
        clock.now += ms / 1e3
        total_ms += ms
        total_tokens += 1 + accepted
        controller.observe_step(1, True, 1.0 + accepted, drafted,
                                float(accepted == verify))
        drafted = forwards
    return placed[:steps], total_ms / total_tokens


def main() -> int:
    for width in range(1, CAP + 1):
        clock = Clock()
        controller = ServedWidthController([1], 1, width, clock=clock)
        controller._move = lambda *args, **kwargs: None  # pinned
        _, ms_per_token = serve(controller, clock, 20000, seed=1)
        print(f"fixed width {width}: {ms_per_token:.4f} ms a token")
    lines: list[str] = []
    served_width.logger.info = lambda msg, *args: lines.append(msg % args)
    for seed in range(SEEDS):
        lines.clear()
        clock = Clock()
        controller = ServedWidthController([1], 1, CAP, clock=clock)
        placed, ms_per_token = serve(controller, clock, STEPS, seed)
        tail = placed[-2000:]
        shares = {w: round(tail.count(w) / len(tail), 2) for w in sorted(set(tail))}
        moves = [line.split("(")[1].split(" less")[0] for line in lines]
        print(f"seed {seed}: settles at {controller.widths()[1]}, last 2000 steps "
              f"{shares}, {ms_per_token:.4f} ms a token; moves {moves}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
