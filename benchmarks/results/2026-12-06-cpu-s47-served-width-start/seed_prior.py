"""Session 47: would a start-up prior for the draft step's price (FACTOR x
the model's served one, set on every batch size before it has priced its
own) shorten the way down at 64 requests? ``sim.py``'s model, --loop
measured, 0044's controller (``/tmp/sw_0044.py``, as ``sim.sh`` writes it),
20 seeds, 5 waves. Prints FACTOR (0: none), cap, TPOT over SD K=2's per wave.

    python seed_prior.py
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sim  # noqa: E402

sim.LOOP = "measured"
module = sim.load(Path("/tmp/sw_0044.py"))
init = module.ServedWidthController.__init__
factor = 0.0


def init_with_prior(self, sizes, max_num_reqs, cap, clock=None):
    init(self, sizes, max_num_reqs, cap, clock=clock)
    if factor > 0:
        for size in self._state:
            size.last_draft_step = factor * (1.22 + 0.58 * size.rows / sim.N) / 1e3


module.ServedWidthController.__init__ = init_with_prior
for factor in (0.0, 0.75, 1.0):
    for cap in (4, 8):
        ratios, _ = sim.ratios_by_wave(module, cap, 5, 20)
        print(factor, cap, " ".join(f"{statistics.fmean(r):.3f}" for r in ratios))
