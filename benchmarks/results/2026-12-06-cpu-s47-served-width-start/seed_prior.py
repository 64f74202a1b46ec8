"""Session 47: would a start-up prior for the draft step's price (FACTOR x
the model's served one, set on every batch size before it has priced its
own) shorten the way down at 64 requests? ``sim.py``'s model, --loop
measured, 0044's controller (``/tmp/sw_0044.py``, as ``sim.sh`` writes it),
20 seeds, 5 waves. Prints FACTOR (0: none), cap, TPOT over SD K=2's per wave.

    python seed_prior.py
"""
import sys; sys.path.insert(0, "."); sys.argv=["x"]
import sim, statistics
from pathlib import Path
sim.LOOP = "measured"
m = sim.load(Path("/tmp/sw_0044.py"))
orig_init = m.ServedWidthController.__init__
FACTOR = 0.0
def init(self, sizes, max_num_reqs, cap, clock=None):
    orig_init(self, sizes, max_num_reqs, cap, clock=clock)
    if FACTOR > 0:
        for st in self._state:
            x = st.rows / 64
            st.last_draft_step = FACTOR * (1.22 + 0.58 * x) / 1e3
m.ServedWidthController.__init__ = init
for f in (0.0, 0.75, 1.0):
    FACTOR = f
    for cap in (4, 8):
        base = [sim.life(None, None, 2, 5, s)[0] for s in range(20)]
        rs = [[], [], [], [], []]
        for s in range(20):
            t, _, _ = sim.life(m, cap, None, 5, s)
            for w in range(5): rs[w].append(t[w] / base[s][w])
        print(f, cap, " ".join(f"{statistics.fmean(r):.3f}" for r in rs))
