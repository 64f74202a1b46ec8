"""before.jsonl / after.jsonl (run.sh) as one table: per call, the median
over rounds of each side (us a call) and the after / before ratio's median
and range over rounds (each round's two processes ran back to back)."""
import json
import statistics
from pathlib import Path

here = Path(__file__).resolve().parent
before = [json.loads(x) for x in (here / "before.jsonl").read_text().splitlines()]
after = [json.loads(x) for x in (here / "after.jsonl").read_text().splitlines()]
print(f"{len(before)} rounds; us a call (median over rounds); after/before per round")
print(f"{'call':>16} {'before':>8} {'after':>8} {'ratio':>6} {'range':>14}")
for key in before[0]:
    b = [r[key] for r in before]
    a = [r[key] for r in after]
    ratios = [y / x for x, y in zip(b, a)]
    print(f"{key:>16} {statistics.median(b):8.3f} {statistics.median(a):8.3f} "
          f"{statistics.median(ratios):6.3f} [{min(ratios):.3f}, {max(ratios):.3f}]")
