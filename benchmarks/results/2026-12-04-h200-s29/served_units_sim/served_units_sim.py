"""Session 29, after the H200 run, on CPU: the served width controller of the
series (0053) against patches-wip/dsl-served-units 0001 (a unit spans a
turnover of the batch's requests), on simulated served requests that each
have their own acceptance and are replaced after 150 steps.

    python3 served_units_sim.py OLD_TREE NEW_TREE [sweep|loop]

OLD_TREE / NEW_TREE: vLLM trees holding vllm/v1/spec_decode/dynamic/
served_width.py (e.g. vllm/ on branch dsl, and a worktree of wip-units).
``sweep`` (the default): c = 1, 2, 4, 8, 16, 64; a request's draft j is
accepted with p * 0.85^j, p ~ U(0.2, 0.95); the loop goes on to another
draft with 0.6; a step costs 5 ms plus 1 ms a draft forward. ``loop``: the
test module's model (``_serve_loop`` with ``request_accept=_spread``) at
c = 4 and 1. Prints, per c: each fixed width's cost per token over the runs'
late half (seeds 0-5), then per controller the late half's cost per token,
how often a batch size forgot, and the late half's share of steps at 2.
"""
import importlib.util
import random
import statistics
import sys


def load(tree, name):
    spec = importlib.util.spec_from_file_location(
        name, f"{tree}/vllm/v1/spec_decode/dynamic/served_width.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.logger.info = lambda *a, **k: None
    forgets = []
    orig = mod.ServedWidthController._forget

    def forget(self, size, shift):
        forgets.append(shift)
        orig(self, size, shift)

    mod.ServedWidthController._forget = forget
    mod.FORGETS = forgets
    return mod


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


class Fixed:
    def __init__(self, width):
        self.w = width

    def width(self, n):
        return self.w

    def observe_step(self, *a, **k):
        pass


LIFE = 150


def arrivals_at(step, n):
    if step == 0:
        return n
    return sum(1 for i in range(n) if (step + (i * LIFE) // n) % LIFE == 0)


def serve(ctl, clock, steps, c, draw, accept, loop_p, base_ms, draft_ms, slot_ms,
          seed, arrivals):
    """Returns the widths placed and the late half's cost per token."""
    rng = random.Random(seed)
    factors = [draw(rng) for _ in range(c)]
    placed = [ctl.width(c)]
    drafted = None
    late_t = late_tok = 0.0
    for step in range(steps):
        placed.append(ctl.width(c))
        width = placed[step]
        verified = width if drafted is None else min(drafted, width)
        arr = arrivals_at(step, c)
        if step and arr:
            for i in range(c):
                if (step + (i * LIFE) // c) % LIFE == 0:
                    factors[i] = draw(rng)
        tokens = full = 0
        for f in factors:
            a = 0
            while a < verified and rng.random() < accept(f, a):
                a += 1
            tokens += 1 + a
            full += a == width
        behind = width if drafted is None else drafted
        dt = (base_ms + slot_ms * width + draft_ms * behind) * rng.lognormvariate(0, 0.02)
        clock.now += dt
        if step >= steps // 2:
            late_t += dt
            late_tok += tokens / c
        forwards = 1
        while forwards < width and rng.random() < loop_p:
            forwards += 1
        args = (c, True, tokens / c, drafted, full / c)
        if arrivals:
            ctl.observe_step(*args, arrivals=arr)
        else:
            ctl.observe_step(*args)
        drafted = forwards
    return placed[:steps], late_t / late_tok


def compare(old, new, c, steps, **model):
    fixed = {w: statistics.fmean(serve(Fixed(w), Clock(), steps, c, seed=s,
                                       arrivals=False, **model)[1] for s in range(6))
             for w in (1, 2, 3, 4)}
    print(f"c={c}: fixed widths, late cost per token: "
          + ", ".join(f"{w}: {v:.4f}" for w, v in fixed.items()), flush=True)
    for name, mod in (("0053", old), ("0053 + units", new)):
        mod.FORGETS.clear()
        costs, shares = [], []
        for s in range(6):
            clock = Clock()
            ctl = mod.ServedWidthController([c], c, 4, clock=clock)
            placed, cost = serve(ctl, clock, steps, c, seed=s,
                                 arrivals=mod is new, **model)
            late = placed[steps // 2:]
            costs.append(cost)
            shares.append(late.count(2) / len(late))
        print(f"  {name:<13} late cost per token {statistics.fmean(costs):.4f}, "
              f"forgot {len(mod.FORGETS)} times, late share at 2 "
              + " ".join(f"{x:.2f}" for x in shares), flush=True)


def main():
    old = load(sys.argv[1], "served_width_old")
    new = load(sys.argv[2], "served_width_new")
    what = sys.argv[3] if len(sys.argv) > 3 else "sweep"
    if what == "sweep":
        for c in (1, 2, 4, 8, 16, 64):
            compare(old, new, c, 12000, draw=lambda r: r.uniform(0.2, 0.95),
                    accept=lambda p, j: p * 0.85 ** j, loop_p=0.6, base_ms=5.0,
                    draft_ms=1.0, slot_ms=0.0)
    else:
        acc = (0.7, 0.6, 0.5, 0.4)
        for c, steps in ((4, 12000), (1, 24000)):
            compare(old, new, c, steps, draw=lambda r: r.uniform(0.3, 1.35),
                    accept=lambda f, j: f * acc[j], loop_p=0.6,
                    base_ms=5.0 + 0.05 * c, draft_ms=1.0, slot_ms=0.02 * c)


if __name__ == "__main__":
    main()
