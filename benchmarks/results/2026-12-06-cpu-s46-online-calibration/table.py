"""The rule's replays in this folder side by side (x SD at its best K on tune):
raw p, session 44's offline calibration, the online per-bin bias, vLLM's
OnlineAcceptanceEstimator replayed; test and tune splits; test Brier scores."""
import glob
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLS = ("raw", "calibrated", "online", "logistic")
print(f"{'run':30} {'K':>2} | test: rule on " + " ".join(f"{c:>10}" for c in COLS)
      + " | tune: rule on " + " ".join(f"{c:>10}" for c in COLS)
      + " | Brier (test) " + " ".join(f"{c:>10}" for c in COLS))
for f in sorted(glob.glob(str(HERE / "sim-*.json"))):
    d = json.loads(Path(f).read_text())
    parts = []
    for split in ("test", "tune"):
        r = d["splits"][split]["vs_best_sd"]
        parts.append(" ".join(f"{r['rule-' + c]:10.3f}" for c in COLS))
    brier = " ".join(f"{d['predictors'][c]['test']['brier']:10.4f}" for c in COLS)
    print(f"{Path(f).stem:30} {d['best_sd_k_on_tune']:>2} | {'':13} {parts[0]} | "
          f"{'':13} {parts[1]} | {'':13} {brier}")
