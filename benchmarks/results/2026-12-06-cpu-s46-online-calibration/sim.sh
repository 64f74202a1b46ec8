#!/usr/bin/env bash
# Session 46 (CPU): the online per-bin bias predictor (`online` in
# benchmarks/trace_stop_sim.py) against the raw confidence and session 44's
# offline calibration, on session 44's traces (../2026-12-06-h100-s44-traces/:
# the proxies' 16-layer draft and the small pair's 4-layer draft, ShareGPT tune
# and test splits), at session 15's H200 proxy costs (V 4.69, D 1.09 ms) and at
# session 34's DSL engine's start-up row (4.832 / 1.085), caps 4 and 8, the
# online predictor's forgetting at 1 (never), 0.999 and 0.99 a draft of its bin.
# -> sim-l<NL>-cap<K>-d<decay>[-costs].{txt,json}
set -euo pipefail
cd "$(dirname "$0")"
T=../2026-12-06-h100-s44-traces
sim() { python3 ../../trace_stop_sim.py --tune "$T/trace-l$1-self-tune.json.gz" --test "$T/trace-l$1-self-test.json.gz" "${@:2}"; }
for nl in 16 4; do
  for cap in 4 8; do
    for decay in 1 0.999 0.99; do
      sim "$nl" --cap "$cap" --online-decay "$decay" --out "sim-l$nl-cap$cap-d$decay.json" \
        > "sim-l$nl-cap$cap-d$decay.txt" &
    done
    wait
  done
done
for cap in 4 8; do
  sim 16 --cap "$cap" --costs 1:4.832/1.085 --out "sim-l16-cap$cap-d1-s34costs.json" \
    > "sim-l16-cap$cap-d1-s34costs.txt"
done
