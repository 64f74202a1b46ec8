"""Session 27: the served width rule against the oracle schedule, per concurrency.

    python benchmarks/results/2026-12-04-h200-s27/served_vs_oracle.py [run/abab.json.gz]

Reads the A/B ``s27`` (arms sd2, dsl4 = the served rule, dsl4@1-4:4/5-64:2 =
the oracle widths at the same cap) and prints, per concurrency, the per-round
ratio served TPOT / oracle TPOT (the two runs of a round are adjacent in time:
abab.py's ABBA order), its mean and 95% t-interval over the rounds (< 1: the
served rule is faster), each DSL arm against sd2 the same way, and the served
arm's drafted slots per draft round by round (how its widths moved during the
measured rounds).
"""
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from abab import ci  # noqa: E402

path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "run/abab.json.gz")
opener = gzip.open if path.suffix == ".gz" else open
with opener(path, "rt") as f:
    d = json.load(f)
S, O, B = "dsl4", "dsl4@1-4:4/5-64:2", "sd2"
print("c   served/oracle [95% CI]     served/sd2 [95% CI]      oracle/sd2 [95% CI]      served drafted/draft by round")
for p in sorted(d["points"], key=lambda p: p["concurrency"]):
    t = p["tpot_ms"]
    cols = []
    for a, b in ((S, O), (S, B), (O, B)):
        m, lo, hi = ci([x / y for x, y in zip(t[a], t[b])])
        cols.append(f"{m:.4f} [{lo:.4f}, {hi:.4f}]")
    widths = " ".join(f"{r['num_draft_tokens'] / max(r['num_drafts'], 1):.2f}"
                      for r in p["spec_rounds"][S])
    print(f"{p['concurrency']:<3} " + "  ".join(cols) + "  " + widths)
