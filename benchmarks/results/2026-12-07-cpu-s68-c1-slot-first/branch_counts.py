# Counts, at cap 8 and one request (10 seeds of 56, as c1.py), the block starts where the
# narrower window has units, by what the wip's _start_block sees: the slot priced (both
# rules count one narrower as compared), never filled (both do), or neither (only the
# series does). From the checkout's root: .venv/bin/python benchmarks/results/2026-12-07-cpu-s68-c1-slot-first/branch_counts.py
# (reads /tmp/sw_wip.py: git -C vllm show wip/slot-first:vllm/v1/spec_decode/dynamic/served_width.py).
import sys, collections
sys.path.insert(0, 'benchmarks/results/2026-12-07-cpu-s66-cap8-life')
from life_cap import batch, life, load, ts
rows = ts.load_trace(batch.TRACES / "trace-l16-self-test.json.gz")
m = load(__import__('pathlib').Path('/tmp/sw_wip.py'))
cls = m.ServedWidthController
orig = cls._start_block
cnt = collections.Counter()
def sb(self, size):
    n = size.narrower
    if n.ratios and size.width > 1:
        key = ('slot priced' if size.last_slot is not None else ('never filled' if n.widest < size.width else 'WIP BRANCH (slot unpriced, filled)'))
        cnt[(size.rows, size.width, key)] += 1
    return orig(self, size)
cls._start_block = sb
for s in range(10):
    life(m, 8, rows, [1]*56, s)
for k, v in sorted(cnt.items()): print(k, v)
