#!/usr/bin/env bash
# Session 47's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (read the files afterwards: the
# host goes back ~30 s after a call, and after calls of ~540-585 s it was gone
# 5 times in 6 by the next call, docs/gpu-host.md). Each call is short by
# default (WAIT 280 s) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s48/after.done): waits for it,
#     then returns /tmp/s48 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s48p (on an H100 then s48q) up to what is
#     left of WAIT and returns what it has (s48p.tgz, s48q.tgz; abab.json is
#     written after every point); an A/B returned once it had ended is not
#     returned again.
# Session 45's collect.sh with this plan's folder and A/Bs (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s48 PLAN_RUNS="s48p s48q" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
