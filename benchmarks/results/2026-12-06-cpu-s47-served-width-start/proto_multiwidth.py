"""Session 47: would pricing every narrower width at once (not only one
narrower) bring 64 requests down faster? A prototype of the controller,
``proto-multiwidth.diff`` over 0044's ``served_width.py`` (``/tmp/sw_0044.py``,
as ``sim.sh`` writes it): each step also reports the share of its requests by
accepted drafts, a block prices every width ``t`` below its own (its time less
the loop's draft steps past ``t`` and ``w - t`` slots a step, its tokens less
``max(0, accepted - t)`` a request), and where the one-narrower test moves a
batch, it moves to the passing width with the lowest mean cost ratio.
``sim.py``'s model, 30 seeds, 6 waves; prints loop, version, cap, TPOT over
SD K=2's per wave, and seed 29's moves at 64 (cap 4).

    patch -o /tmp/sw_proto.py /tmp/sw_0044.py proto-multiwidth.diff
    python proto_multiwidth.py
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sim  # noqa: E402

for loop in ("measured", "rule"):
    sim.LOOP = loop
    for name, shares in (("0044", False), ("proto", True)):
        sim.SHARES = shares
        m = sim.load(Path(f"/tmp/sw_{name}.py"))
        for cap in (4, 8):
            ratios, lives = sim.ratios_by_wave(m, cap, 6, 30)
            print(loop, name, cap, " ".join(f"{statistics.fmean(r):.3f}" for r in ratios),
                  lives[-1][0] if cap == 4 else "")
