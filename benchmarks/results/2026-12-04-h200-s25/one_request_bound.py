#!/usr/bin/env python3
"""Session 25: at one request, how fast could any stop rule be on this pair?
From an abab.py run with arms sd2, sd3 and a DSL arm at c = 1:

    python3 one_request_bound.py run/abab.json.gz

- V and D (the rest of an engine step, one draft step) from SD's median
  decode-step periods: sd2's step is V + 2D, sd3's V + 3D;
- P(a >= j), a request's run of accepted drafts had it drafted on: j = 1 from
  the DSL arm (its first draft is always made: drafted / accepted at position
  1), j = 2 from sd2 (accepted per draft = P(a >= 1) + P(a >= 2)), j = 3 from
  sd3, beyond 3 extrapolated with sd3's last conditional rate (a bound of the
  tail, not a measurement).

Then a step of SD at K costs V + K D for 1 + E[min(a, K)] tokens, and an
oracle that drafts exactly the run that will be accepted (never a rejected
draft) V + a D for 1 + a tokens: the most any stop rule can give. The rule
measured in the same run is printed beside them.
"""

import gzip
import json
import statistics as st
import sys


def main(path: str) -> None:
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        data = json.load(f)
    point = next(p for p in data["points"] if p["concurrency"] == 1)
    spec = point["spec"]
    # The per-position counters (Prometheus) came back for one DSL arm only
    # in session 25's run: the first with any.
    for dsl in (a for a in data["arms"] if a.startswith("dsl")):
        counters: dict[str, list[int]] = {}
        for rnd in point["counters"][dsl]:
            for key, value in rnd.items():
                if isinstance(value, list):
                    old = counters.get(key, [0] * len(value))
                    counters[key] = [a + b for a, b in zip(old, value)]
        drafted = counters["vllm:spec_decode_num_drafted_tokens_per_pos"]
        accepted = counters["vllm:spec_decode_num_accepted_tokens_per_pos"]
        if drafted[0]:
            break
    # Median over rounds of each round's median decode-only step.
    step = {
        arm: st.median(rnd["decode"]["p50"] for rnd in point["step_ms"][arm])
        for arm in ("sd2", "sd3")
    }
    d = step["sd3"] - step["sd2"]
    v = step["sd2"] - 2 * d
    p1 = accepted[0] / drafted[0]
    p2 = spec["sd2"]["accepted_per_draft"] - p1
    p3 = spec["sd3"]["accepted_per_draft"] - spec["sd2"]["accepted_per_draft"]
    tail = [p1, p2, p3]
    while tail[-1] > 1e-4:
        tail.append(tail[-1] * p3 / p2)
    mean_run = sum(tail)
    tpot = {f"sd{k}": (v + k * d) / (1 + sum(tail[:k])) for k in (1, 2, 3, 4)}
    oracle = (v + mean_run * d) / (1 + mean_run)
    best = min(tpot, key=tpot.get)
    print(f"V {v:.3f} ms, D {d:.3f} ms (from sd2/sd3 steps {step['sd2']:.3f}/{step['sd3']:.3f})")
    print("P(a >= j), j = 1..: " + ", ".join(f"{x:.3f}" for x in tail[:6]))
    for arm, value in tpot.items():
        print(f"{arm}: modelled TPOT {value:.3f} ms"
              + (f" (measured {st.median(point['tpot_ms'][arm]):.3f})" if arm in point["tpot_ms"] else ""))
    print(f"oracle stop: {oracle:.3f} ms = {tpot[best] / oracle:.3f}x SD at its best K ({best})")
    print(f"{dsl} measured: {st.median(point['tpot_ms'][dsl]):.3f} ms = "
          f"{st.median(point['tpot_ms'][best]) / st.median(point['tpot_ms'][dsl]):.3f}x")


if __name__ == "__main__":
    main(sys.argv[1])
