#!/usr/bin/env bash
# Session 51's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (the host goes back ~30 s after a
# call). Each call is short by default (WAIT 280 s; pass WAIT=... when less
# device time is left) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s52/after.done): waits for it,
#     then returns /tmp/s52 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s52p up to what is left of WAIT and
#     returns what it has (s52p.tgz; abab.json is written after every point).
# Session 45's collect.sh with this plan's folder and A/B (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s52 PLAN_RUNS="s52p" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
