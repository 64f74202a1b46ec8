#!/usr/bin/env bash
# Session 52's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (the host goes back ~30 s after a
# call). Each call is short by default (WAIT 280 s; pass WAIT=... when less
# device time is left) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s53/after.done): waits for it,
#     then returns /tmp/s53 (a.tgz: host, chain logs, the no-sync tests);
#   - then the profile s53f (s53f.tgz: prof/report.txt and each arm's JSON),
#     then the A/B s53p (s53p.tgz; abab.json is written after every point).
# Session 45's collect.sh with this plan's folder and runs (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s53 PLAN_RUNS="s53f s53p" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
