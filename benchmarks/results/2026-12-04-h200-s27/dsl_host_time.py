"""Session 27: DSL's own host time per engine step, from profile_step.py's
cProfile dumps (``prof/prof/<arm>.prof``, ``<arm>.json``).

    python benchmarks/results/2026-12-04-h200-s27/dsl_host_time.py [PROF_DIR]

Per engine step, over the functions only a DSL engine runs, cProfile's own
time (tottime) and the inclusive time (cumtime) of the outermost of them
(those no other such function calls), which also counts the torch calls they
make: the dynamic-lookahead modules (confidence exit, served
width, stop rule), the drafted-count bookkeeping, the WHILE-loop graph's
launch and the scheduler's hand-off to the width controller. cProfile slows
Python several-fold, so these are upper bounds; the same sum for the SD arm
shows what the filter catches there (should be ~0).
"""
import json
import pstats
import sys
from pathlib import Path

DSL_ONLY = ("spec_decode/dynamic/", "drafted_token_counts.py", "conditional_graph.py")
DSL_FUNCS = ("_observe_draft_width",)

d = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "prof/prof")
for prof in sorted(d.glob("*.prof")):
    arm = prof.stem
    steps = json.loads((d / f"{arm}.json").read_text())["cprofile_steps"]
    st = pstats.Stats(str(prof))

    def dsl(key):
        return any(s in key[0] for s in DSL_ONLY) or key[2] in DSL_FUNCS

    own, inclusive, rows = 0.0, 0.0, []
    for key, (cc, nc, tt, ct, callers) in st.stats.items():
        if not dsl(key):
            continue
        own += tt
        if not any(dsl(c) for c in callers):
            inclusive += ct
            rows.append((ct, f"{Path(key[0]).name}:{key[1]}({key[2]})"))
    rows.sort(reverse=True)
    top = ", ".join(f"{n} {1e6 * t / steps:.1f}" for t, n in rows[:6])
    print(f"{arm} ({steps} steps), us a step under cProfile: own {1e6 * own / steps:.1f}, "
          f"inclusive {1e6 * inclusive / steps:.1f}; outermost: {top}")
