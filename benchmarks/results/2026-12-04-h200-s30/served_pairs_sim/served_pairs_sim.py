"""Session 30, after the H200 run, on CPU: does a drift in what requests
accept over their lives bias the served width controller's paired
comparison (a block at the current width, then the neighbour block just
after it)? On the H200 the pairs moved 8 and 16 requests from 2 to 3 drafts
on 4.8-5.5% less time a token that the A/B did not see (../README.md).

    python3 served_pairs_sim.py TREE [TREE ...]

Each TREE holds vllm/v1/spec_decode/dynamic/served_width.py (e.g. vllm/ on
branch dsl). Served as the A/B serves: waves of ``c`` requests that start
together and each run ``LIFE`` steps (then the next wave), one batch size.
A request's draft j is accepted with ``p * 0.85^j * drift(age)``, p ~ U(0.3,
0.9), ``drift(age) = 1 + slope * (age / LIFE - 0.5)``; the loop goes on to
another draft with 0.6; a step costs ``5 + 0.05 c`` ms plus 1 ms a draft
forward plus ``0.02 c`` ms a slot. Per c and slope: each fixed width's cost
per token over the runs' late half (seeds 0-7), then per tree the late
half's cost per token over the best fixed width's, and its share of late
steps at each width. Reuses session 29's simulator's loader and clock.
"""
import importlib.util
import pathlib
import random
import statistics
import sys

_S29 = (pathlib.Path(__file__).resolve().parents[2]
        / "2026-12-04-h200-s29" / "served_units_sim" / "served_units_sim.py")
_spec = importlib.util.spec_from_file_location("served_units_sim", _S29)
s29 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s29)

LIFE = 120
SEEDS = range(8)


def serve(ctl, clock, steps, c, slope, seed):
    """Returns the widths placed and the late half's cost per token."""
    rng = random.Random(seed)
    ps = [rng.uniform(0.3, 0.9) for _ in range(c)]
    placed = [ctl.width(c)]
    drafted = None
    late_t = late_tok = 0.0
    for step in range(steps):
        placed.append(ctl.width(c))
        width = placed[step]
        verified = width if drafted is None else min(drafted, width)
        age = step % LIFE
        arrivals = c if age == 0 else 0
        if step and age == 0:
            ps = [rng.uniform(0.3, 0.9) for _ in range(c)]
        drift = 1 + slope * (age / LIFE - 0.5)
        tokens = full = 0
        for p in ps:
            a = 0
            while a < verified and rng.random() < min(1.0, p * 0.85 ** a * drift):
                a += 1
            tokens += 1 + a
            full += a == width
        behind = width if drafted is None else drafted
        dt = ((5.0 + 0.05 * c) + 0.02 * c * width + 1.0 * behind) * rng.lognormvariate(0, 0.02)
        clock.now += dt
        if step >= steps // 2:
            late_t += dt
            late_tok += tokens / c
        forwards = 1
        while forwards < width and rng.random() < 0.6:
            forwards += 1
        try:
            ctl.observe_step(c, True, tokens / c, drafted, full / c, arrivals=arrivals)
        except TypeError:  # a controller without arrivals (the series' 0053)
            ctl.observe_step(c, True, tokens / c, drafted, full / c)
        drafted = forwards
    return placed[:steps], late_t / late_tok


def main():
    mods = [(tree, s29.load(tree, f"served_width_{i}"))
            for i, tree in enumerate(sys.argv[1:])]
    steps = 12000
    for c in (4, 8, 16):
        for slope in (0.0, 0.4):
            fixed = {w: statistics.fmean(serve(s29.Fixed(w), s29.Clock(), steps, c, slope, s)[1]
                                         for s in SEEDS) for w in (1, 2, 3, 4)}
            best = min(fixed.values())
            print(f"c={c} slope={slope}: fixed " + ", ".join(
                f"{w}: {v:.4f}" for w, v in fixed.items()), flush=True)
            for tree, mod in mods:
                costs, shares = [], {w: 0 for w in (1, 2, 3, 4)}
                for s in SEEDS:
                    clock = s29.Clock()
                    ctl = mod.ServedWidthController([c], c, 4, clock=clock)
                    placed, cost = serve(ctl, clock, steps, c, slope, s)
                    costs.append(cost)
                    for w in placed[steps // 2:]:
                        shares[w] += 1
                n = sum(shares.values())
                print(f"  {tree:<28} {statistics.fmean(costs) / best:.4f} of the best fixed; "
                      "late share " + " ".join(f"{w}:{v / n:.2f}" for w, v in shares.items()),
                      flush=True)


if __name__ == "__main__":
    main()
