"""The DSL served width (``vllm/v1/spec_decode/dynamic/served_width.py``) on a
host-bound engine, simulated on CPU: how often it leaves the cap where no
width is cheaper, and what that costs in tokens a step.

    python benchmarks/sim_served_width.py --module PATH/served_width.py \
        [--seeds 40] [--p-lo 0.15] [--p-hi 0.6]

The module's real ``ServedWidthController`` (loaded from ``--module``, so two
versions can be set side by side) serves one engine's life as the A/B
``abab.py`` gives it: first one request at a time (``--requests-1``), then 8
in flight in waves of 48 (``--requests-8``), one controller throughout.
Each request has its own acceptance ``p`` (uniform in ``[p-lo, p-hi]``: a
draft position is accepted with ``p`` if every one before it was), 256
tokens, and a first step with its prompt. The step is the host's: 4.3 ms
(1.5x with a prompt), times a speed drawn afresh every 1000 steps from
``[0.9, 1.1]`` and 3% noise a step, whatever the width (session 41's H100:
the GPU's ~1.9 ms hidden under the host's ~4.3 ms). The draft loop drafts to
the width placed. So no width is cheaper than the cap, and every step below
it loses tokens.

Per phase it prints the mean width placed, the share of steps below the cap,
and what the widths placed cost in tokens: over the steps without prompts,
the expected tokens a request gets a step at the width placed
(``1 + p + ... + p**width``) against the same requests at the cap (expected
values, so the sampled tokens' noise, which the controller sees, does not
enter the comparison); then the moves (batch size, from, to, which test) and
forgets over all seeds.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import logging
import random
import sys
import types
from pathlib import Path

CAP = 4
SIZES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16)
MAX_TOKENS = 256
STEP_S = 4.3e-3


def load(path: Path):
    """The controller module at ``path``; where vLLM is not importable, with
    its logger stood in by the standard one (the module needs nothing else
    of vLLM)."""
    try:
        import vllm.logger  # noqa: F401
    except ImportError:
        stub = types.ModuleType("vllm.logger")
        stub.init_logger = logging.getLogger  # type: ignore[attr-defined]
        sys.modules["vllm"] = types.ModuleType("vllm")
        sys.modules["vllm.logger"] = stub
    spec = importlib.util.spec_from_file_location(f"served_width_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"sim_served_width: cannot load --module {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def expected_tokens(p: float, width: int) -> float:
    """A step's expected tokens for a request drafting ``width``."""
    return 1 + sum(p**j for j in range(1, width + 1))


def serve(module, seed: int, p_lo: float, p_hi: float, requests_1: int,
          requests_8: int) -> dict:
    """One engine's life under the module's controller."""
    rng = random.Random(seed)
    clock = _Clock()
    moves: list[tuple] = []
    forgets: list[tuple] = []
    controller = module.ServedWidthController(list(SIZES), 64, CAP, clock=clock)
    move, forget = controller._move, controller._forget

    def on_move(size, width, *args, **kwargs):
        moves.append((size.rows, size.width, width, args[2]))
        return move(size, width, *args, **kwargs)

    def on_forget(size, shift):
        forgets.append((size.rows, size.width))
        return forget(size, shift)

    controller._move, controller._forget = on_move, on_forget
    steps = 0
    speed = 1.0
    out = {}
    for phase, in_flight, total, wave in (("c=1", 1, requests_1, 1),
                                          ("c=8", 8, requests_8, 48)):
        widths, placed, capped = [], 0.0, 0.0
        waiting, active, wave_left = total, [], 0
        while waiting or active:
            if not active:  # the next wave
                wave_left = min(wave, waiting)
            while len(active) < in_flight and wave_left:
                active.append({"p": rng.uniform(p_lo, p_hi), "left": MAX_TOKENS,
                               "prompt": True})
                waiting -= 1
                wave_left -= 1
            n = len(active)
            width = controller.width(n)
            if steps % 1000 == 0:
                speed = rng.uniform(0.9, 1.1)
            steps += 1
            decode_only = not any(r["prompt"] for r in active)
            got_total = all_accepted = 0
            for r in active:
                got = 1
                if r["prompt"]:
                    r["prompt"] = False
                else:
                    accepted = 0
                    while accepted < width and rng.random() < r["p"]:
                        accepted += 1
                    got += accepted
                    all_accepted += accepted == width
                got = min(got, r["left"])
                r["left"] -= got
                got_total += got
            clock.now += STEP_S * speed * (1 + rng.gauss(0, 0.03)) * (
                1.0 if decode_only else 1.5)
            controller.observe_step(
                n, decode_only, got_total / n, width if decode_only else None,
                all_accepted / n if decode_only else None)
            widths.append(width)
            if decode_only:
                placed += sum(expected_tokens(r["p"], width) for r in active) / n
                capped += sum(expected_tokens(r["p"], CAP) for r in active) / n
            active = [r for r in active if r["left"] > 0]
        out[phase] = {"widths": widths, "tokens": placed / capped}
    out["moves"], out["forgets"] = moves, forgets
    return out


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, required=True,
                    help="a served_width.py, e.g. vllm/vllm/v1/spec_decode/"
                         "dynamic/served_width.py")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--p-lo", type=float, default=0.15)
    ap.add_argument("--p-hi", type=float, default=0.6)
    ap.add_argument("--requests-1", type=int, default=64,
                    help="requests served one at a time (default 64: 8 rounds of 8)")
    ap.add_argument("--requests-8", type=int, default=384,
                    help="requests served 8 in flight (default 384: 8 rounds of 48)")
    args = ap.parse_args(argv)
    if not args.module.is_file():
        raise SystemExit(f"sim_served_width: --module {args.module} is not a file")
    if not 0 <= args.p_lo <= args.p_hi < 1:
        raise SystemExit("sim_served_width: need 0 <= --p-lo <= --p-hi < 1")
    module = load(args.module)
    sums = collections.defaultdict(list)
    moves, forgets = collections.Counter(), collections.Counter()
    for seed in range(args.seeds):
        served = serve(module, seed, args.p_lo, args.p_hi, args.requests_1,
                       args.requests_8)
        for phase in ("c=1", "c=8"):
            w = served[phase]["widths"]
            sums[phase, "width"].append(sum(w) / len(w))
            sums[phase, "below"].append(sum(x < CAP for x in w) / len(w))
            sums[phase, "tokens"].append(served[phase]["tokens"])
        moves.update(served["moves"])
        forgets.update(served["forgets"])

    def mean(values):
        return sum(values) / len(values)

    lines = [f"{args.module}: {args.seeds} seeds, p in [{args.p_lo}, {args.p_hi}]"]
    for phase in ("c=1", "c=8"):
        tokens = sums[phase, "tokens"]
        lines.append(
            f"  {phase}: mean width {mean(sums[phase, 'width']):.3f}, steps below "
            f"the cap {100 * mean(sums[phase, 'below']):.1f}%, expected tokens a "
            f"step against the cap's {100 * (mean(tokens) - 1):+.2f}% "
            f"(worst seed {100 * (min(tokens) - 1):+.2f}%)")
    lines.append("  moves (batch size, from, to, test): " + (", ".join(
        f"{k}: {v}" for k, v in sorted(moves.items())) or "none"))
    lines.append(f"  forgets: {sum(forgets.values())}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
