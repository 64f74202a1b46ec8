#!/usr/bin/env python3
# Session 24: per arm and c, the decode steps more than 1.6x the round median and
# more than 3 steps after an arrival (run/abab.json.gz): python3 long_steps.py run/abab.json.gz
"""Per arm and c: steps longer than 1.6x the round's median, more than 3 steps
after the round's prompts arrived, and the time they took beyond the median
(a round's "excess"), as a share of the round's total step time."""
import gzip, json, statistics as st, sys
opener = gzip.open if sys.argv[1].endswith(".gz") else open
d = json.load(opener(sys.argv[1], "rt"))
print("| c | arm | long steps a round | excess ms a round | excess share | TPOT ms |")
print("| --- | --- | --- | --- | --- | --- |")
for p in d["points"]:
    c = p["concurrency"]
    for arm in d["arms"]:
        cnt=[]; exc=[]; share=[]
        for r in p["step_ms"][arm]:
            ms = r["trace"]["ms"]; ad = r["trace"]["added"]
            med = st.median(ms)
            arr = [i for i, a in enumerate(ad) if a]
            far = [i for i in range(len(ms)) if all(not (0 <= i - a <= 3) for a in arr)]
            long_ = [i for i in far if ms[i] > 1.6 * med]
            e = sum(ms[i] - med for i in long_)
            cnt.append(len(long_)); exc.append(e); share.append(e / sum(ms))
        print(f"| {c} | {arm} | {st.median(cnt):.0f} | {st.median(exc):.0f} | {100*st.median(share):.1f}% | {st.median(p['tpot_ms'][arm]):.3f} |")
