#!/usr/bin/env bash
# Session 48's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (the host goes back ~30 s after a
# call). Each call is short by default (WAIT 280 s) and returns as soon as
# there is something new:
#   - until the suite's part has ended (/tmp/s49/after.done): waits for it,
#     then returns /tmp/s49 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s49p (on an H100 then s49q) up to what is
#     left of WAIT and returns what it has (s49p.tgz, s49q.tgz; abab.json is
#     written after every point); an A/B returned once it had ended is not
#     returned again.
# Session 45's collect.sh with this plan's folder and A/Bs (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s49 PLAN_RUNS="s49p s49q" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
