"""Does a wave of requests whose acceptance rises over their lives make vLLM's
served width rule forget its evidence at 64 requests, on CPU? (Session 65's
A/B: at cap 8 the batch sizes of 32 and 64 forgot 9 times in one minute.)

    cd vllm && ../.venv/bin/python \
        ../benchmarks/results/2026-12-07-cpu-s65-wave-forgets/wave_forgets.py

Runs on the applied series (``vllm/``): the real ``ServedWidthController``
driven by vLLM's own test harness (``tests/v1/spec_decode/
test_dsl_served_width.py``'s ``_serve_loop``: 64 requests a step, a draft loop
that goes on after each draft with ``loop``, step time 7 ms + 0.5 ms a slot +
1 ms a draft forward). Cap 3, 20 waves of 130 steps. In a "wave" every draft
is accepted with p rising from 0.45 to 0.70 over the wave (in 10 steps of
13 steps each: what a request gets a step at 3 drafts then rises 1.75 to
2.5 when the loop fills the width, as session 65's did); "flat" holds p at
0.575. Prints per seed the forgets, the final width and the widths of the
last 10 waves.
"""

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path("tests/v1/spec_decode").resolve()))
import test_dsl_served_width as t  # noqa: E402

from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController  # noqa: E402


def run(loop_p: float, flat: bool, seed: int, waves: int = 20, wave_steps: int = 130):
    forgot = []
    original = ServedWidthController._forget

    def on_forget(self, size, shift):
        forgot.append((self._steps, size.rows, size.width))
        original(self, size, shift)

    ServedWidthController._forget = on_forget
    try:
        clock = t._Clock()
        controller = ServedWidthController([64], 64, 3, clock=clock)
        placed = []
        segments = 10
        for w in range(waves):
            for k in range(segments):
                p = 0.575 if flat else 0.45 + 0.25 * (k + 0.5) / segments
                placed += t._serve_loop(
                    controller, clock, wave_steps // segments, num_reqs=64,
                    loop=t._continue(loop_p), accept=(p,) * 3, base_ms=7.0,
                    draft_ms=1.0, slot_ms=0.5, seed=seed * 1000 + w * segments + k)
    finally:
        ServedWidthController._forget = original
    return placed, forgot, controller.widths()


def main() -> None:
    for loop_p in (0.6, 0.9):
        print(f"loop goes on after a draft with {loop_p}")
        for flat in (False, True):
            for seed in range(3):
                placed, forgot, widths = run(loop_p, flat, seed)
                last = placed[-1300:]
                share = collections.Counter(last)
                print(f"  {'flat' if flat else 'wave'} seed {seed}: forgets {len(forgot)}, "
                      f"final width {widths[64]}, last 10 waves "
                      + " ".join(f"{w}:{n / len(last):.0%}" for w, n in sorted(share.items())))


if __name__ == "__main__":
    main()
