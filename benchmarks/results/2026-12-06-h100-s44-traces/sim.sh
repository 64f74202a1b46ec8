#!/usr/bin/env bash
# Session 44: benchmarks/trace_stop_sim.py on this folder's traces (CPU, seconds).
# Default costs (session 15's H200 start-up table of the proxies: V 4.69 ms, D
# 1.09 ms at one request) at cap 4 and 8 for both drafts -> sim-l<NL>-cap<K>.{txt,json};
# then the 16-layer draft at four other cost pairs (D 0.8 and 1.5 ms, V 6.2 ms,
# and session 34's DSL engine's own start-up table at one row, 4.832/1.085)
# -> sim-l16-costs.txt, and at caps 2-16 -> sim-l16-caps.txt (the test
# split's rows).
set -euo pipefail
cd "$(dirname "$0")"
sim() { python3 ../../trace_stop_sim.py --tune "trace-l$1-self-tune.json.gz" --test "trace-l$1-self-test.json.gz" "${@:2}"; }
for nl in 16 4; do
  for cap in 4 8; do
    sim "$nl" --cap "$cap" --out "sim-l$nl-cap$cap.json" > "sim-l$nl-cap$cap.txt"
  done
done
for costs in 1:4.69/0.8 1:4.69/1.5 1:6.2/1.09 1:4.832/1.085; do
  for cap in 4 8; do
    echo "== costs $costs, cap $cap"
    sim 16 --cap "$cap" --costs "$costs" | sed -n '/^test/,/^tune/p' | sed '$d'
  done
done > sim-l16-costs.txt
for cap in 2 3 5 6 12 16; do
  echo "== cap $cap"
  sim 16 --cap "$cap" | sed -n '/^test/,/^tune/p' | sed '$d'
done > sim-l16-caps.txt
