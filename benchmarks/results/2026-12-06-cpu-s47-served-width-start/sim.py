"""The served width's first rounds at 64 requests, simulated on CPU against
session 47's H100 A/B (``../2026-12-06-h100-s47/``): how many waves a
controller takes from its cap to the width SD is best at, and what those
waves cost a token against SD K=2.

    python sim.py --module A.py [--module B.py ...] [--caps 4,8] [--waves 9] [--seeds 20]

Each ``--module`` is a ``served_width.py`` whose real ``ServedWidthController``
serves one engine's life (loaded as ``benchmarks/sim_served_width.py``
does). The life is the A/B's at ``c = 64``: waves of 64 requests of 256
tokens (``--rotate-prompts``, one wave a round), the first step of a wave
carrying the prompts. A request's draft ``i`` is accepted with ``p`` if every
draft before it was, ``p`` growing over the request's life from ``U(0.3,
0.6)`` by 0.25 at its last token (session 47's SD K=2 got 1.75 tokens a step
in a request's first tenth and 2.20 in its last). DSL's loop drafts for the
whole batch while the mean chance that a request's drafts so far were all
accepted is at least 0.2 (one decision for the batch), at most the width
placed (``--loop rule``, the default), or as many steps as the H100's
engine drafted at cap 8 and 64 requests, drawn from their shares
(``--loop measured``: 1-5 steps, 1%, 37%, 38%, 22%, 2%), at most the width
placed; SD K drafts K. A step's time, as the engine's outputs are timed
(under async scheduling the loop that drafted what a step verifies runs
within that step's period): ``V0(B) + S(B) * width + D(B) * forwards`` with
3% log-normal noise, ``B`` requests, fitted to the H100's served steps:
``D`` 1.22 ms at one request and 1.80 at 64 (the engine's log), ``S`` 0.10
and 0.53 ms (the same), ``V0 + 2 S + 2 D`` 8.76 and 11.82 ms (SD K=2's median
steps at ``c = 1`` and 64), linear in ``B`` between.

Printed per module and cap: TPOT against SD K=2's in the same life's
arrival pattern per wave (mean over seeds; the A/B's first wave is its
warm round), the waves until the batch size of 64 first places 2, and its
moves.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sim_served_width import load  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
# --loop measured: the loop's draft steps drawn from what the H100's cap-8
# engine drafted at 64 requests in its first two rounds (s46q, s47r: positions
# 1-5 drafted by 99%, 62%, 24% and 1.8% of the drafts, none further).
MEASURED = (0.01, 0.37, 0.38, 0.222, 0.018)
LOOP = "rule"
SHARES = False
N = 64
MAX_TOKENS = 256
# A request's acceptance: U(P_LO, P_HI) at its first token, GROWTH more at its last.
P_LO, P_HI, GROWTH = 0.3, 0.6, 0.25


def step_ms(b: int, width: int, forwards: int) -> float:
    x = b / N
    d = 1.22 + 0.58 * x
    s = 0.10 + 0.43 * x
    v0 = 6.1 + 1.04 * x
    return v0 + s * width + d * forwards


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now / 1e3  # the controller reads seconds


def life(module, cap: int | None, fixed: int | None, waves: int, seed: int):
    """One engine's life; ``fixed``: SD at that K (no controller). Returns
    per wave the mean TPOT (ms) and the moves of the batch size of ``N``."""
    rng = random.Random(seed)
    clock = _Clock()
    ctl = None
    moves: list[tuple[int, int, int]] = []
    if fixed is None:
        ctl = module.ServedWidthController(list(SIZES), N, cap, clock=clock)
        move = ctl._move

        def on_move(size, width, *a, **k):
            moves.append((size.rows, size.width, width))
            return move(size, width, *a, **k)

        ctl._move = on_move
        forget = ctl._forget

        def on_forget(size, shift):
            moves.append((size.rows, size.width, "forget"))
            return forget(size, shift)

        ctl._forget = on_forget
    out = []
    first_two = None
    for wave in range(waves):
        wrng = random.Random(1000 * seed + wave)  # the same requests for every arm
        reqs = [{"b": wrng.uniform(P_LO, P_HI), "n": 0, "t0": None, "t1": None,
                 "prompt": True} for _ in range(N)]
        active = list(reqs)
        drafted = None  # forwards of the loop whose drafts the next step verifies
        width_next = ctl.width(len(active)) if ctl else fixed
        while active:
            b = len(active)
            width = width_next
            # b requests are padded to 64 (the batch size of 64's steps).
            if ctl and b > SIZES[-2] and width == 2 and first_two is None:
                first_two = wave
            verified = width if drafted is None else min(drafted, width)
            tokens = full = 0
            accs = []
            decode_only = not any(r["prompt"] for r in active)
            for r in active:
                got = 1
                if r["prompt"]:
                    r["prompt"] = False
                else:
                    p = min(0.95, r["b"] + GROWTH * r["n"] / MAX_TOKENS)
                    acc = 0
                    while acc < verified and rng.random() < p:
                        acc += 1
                    got += acc
                    accs.append(acc)
                    full += acc == width
                got = min(got, MAX_TOKENS - r["n"])
                r["n"] += got
                tokens += got
            behind = width if drafted is None else drafted
            clock.now += step_ms(b, width, behind) * rng.lognormvariate(0, 0.03)
            for r in active:
                if r["t0"] is None:
                    r["t0"] = clock.now
                if r["n"] >= MAX_TOKENS:
                    r["t1"] = clock.now
            still = [r for r in active if r["n"] < MAX_TOKENS]
            # The loop drafting for the next step (SD drafts K). It runs
            # before the next step's width is placed, up to the cap here; the
            # width placed cuts it below.
            if fixed is not None:
                forwards = fixed
            elif LOOP == "measured":
                forwards = min(rng.choices(range(1, 6), weights=MEASURED)[0], cap)
            else:
                forwards = _rule_forwards(rng, still, cap)
            if still and ctl:
                width_next = ctl.width(len(still))
                forwards = min(forwards, width_next)
            elif still:
                width_next = fixed
            if ctl:
                kwargs = {}
                if SHARES and decode_only:
                    hist = [0] * (ctl.num_spec_tokens + 1)
                    for a in accs:
                        hist[a] += 1
                    kwargs["accepted_shares"] = [h / b for h in hist]
                ctl.observe_step(b, decode_only, tokens / b,
                                 drafted if decode_only else None,
                                 full / b if decode_only else None, **kwargs)
            drafted = forwards
            active = still
        tp = [(r["t1"] - r["t0"]) / (MAX_TOKENS - 1) for r in reqs]
        out.append(statistics.fmean(tp))
    return out, [m for m in moves if m[0] == N], first_two


def _rule_forwards(rng, requests, cap: int) -> int:
    """The batch rule: on while the mean chance that a request's drafts so
    far were all accepted is at least 0.2, at most ``cap`` steps."""
    forwards = 1
    ps = [min(0.95, r["b"] + GROWTH * r["n"] / MAX_TOKENS) * rng.uniform(0.85, 1.15)
          for r in requests] or [0.0]
    chance = list(ps)
    while forwards < cap:
        chance = [c * q for c, q in zip(chance, ps)]
        if statistics.fmean(chance) < 0.2:
            break
        forwards += 1
    return forwards


def ratios_by_wave(module, cap: int, waves: int, seeds: int, base=None):
    """TPOT over SD K=2's on the same requests, a list per wave (one ratio a
    life), and each life's moves at 64 and first wave at 2. ``base``: SD
    K=2's TPOTs per life (``life(None, None, 2, ...)``), computed if not given."""
    if base is None:
        base = [life(None, None, 2, waves, s)[0] for s in range(seeds)]
    ratios: list[list[float]] = [[] for _ in range(waves)]
    lives = []
    for s in range(seeds):
        t, moves, first_two = life(module, cap, None, waves, s)
        for w in range(waves):
            ratios[w].append(t[w] / base[s][w])
        lives.append((moves, first_two))
    return ratios, lives


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, action="append", required=True)
    ap.add_argument("--caps", default="4,8")
    ap.add_argument("--waves", type=int, default=9)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--loop", choices=("rule", "measured"), default="rule")
    args = ap.parse_args(argv)
    caps = [int(c) for c in args.caps.split(",")]
    global LOOP
    LOOP = args.loop
    base = [life(None, None, 2, args.waves, s)[0] for s in range(args.seeds)]
    lines = [f"--loop {args.loop}: {args.seeds} seeds, {args.waves} waves of {N}; TPOT / SD K=2's per wave (> 1: slower), "
             "wave 1 is the A/B's warm round"]
    for path in args.module:
        module = load(path)
        for cap in caps:
            ratios, lives = ratios_by_wave(module, cap, args.waves, args.seeds, base)
            firsts = [first_two for _, first_two in lives]
            per_wave = " ".join(f"{statistics.fmean(r):.3f}" for r in ratios)
            measured = statistics.fmean(statistics.fmean(r) for r in ratios[1:])
            reached = [f for f in firsts if f is not None]
            lines.append(
                f"{path.name} cap {cap}: {per_wave} | waves 2-{args.waves} {measured:.3f}; "
                f"64 first at 2 in wave {statistics.median(reached) + 1 if reached else '-'} "
                f"({len(reached)}/{args.seeds} lives); seed 0's moves and forgets at 64: {lives[0][0]}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
