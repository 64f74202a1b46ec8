#!/usr/bin/env bash
# Session 45's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (read the files afterwards: the
# host goes back ~30 s after a call, and after calls of ~540-585 s it was gone
# 5 times in 6 by the next call, docs/gpu-host.md). Each call is short by
# default (WAIT 280 s) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s46/after.done): waits for it,
#     then returns /tmp/s46 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s46p (on an H100 then s46q) up to what is
#     left of WAIT and returns what it has (s46p.tgz, s46q.tgz; abab.json is
#     written after every point); an A/B returned once it had ended is not
#     returned again.
# Later plans run it with PLAN_DIR (default /tmp/s46) and PLAN_RUNS (the A/Bs
# in order, default "s46p s46q"), as ../2026-12-06-s47-plan/collect.sh does.
# Since session 69 it is scripts/gpu-host/plan-collect.sh (the same steps,
# with tests); this keeps the plans' commands of sessions 45-68 working.
set -euo pipefail
# shellcheck disable=SC2086  # PLAN_RUNS: the A/B names, split on purpose
exec bash scripts/gpu-host/plan-collect.sh "${PLAN_DIR:-/tmp/s46}" ${PLAN_RUNS:-s46p s46q} \
  --wait "${WAIT:-280}"
