#!/usr/bin/env bash
# Session 56's plan, first long command (see README.md): the proxies chain
# alone, then the A/B s57p queued on it. Session 57 ran exactly this through
# scripts/gpu-host/proxies-ab.sh, which replaced this file's own copy of it.
set -euo pipefail
exec bash scripts/gpu-host/proxies-ab.sh "${RUN_P:-s57p}" "${PLAN_DIR:-/tmp/s57}" \
  --arms "${PLAN_AB_ARMS:-sd2+t,sd3+t,target+t,dsl4+t,dsl8+t}" \
  --arms-small "${PLAN_AB_ARMS:-sd2+t,dsl4+t,dsl8+t}" \
  --concurrency "${CONC:-1,64,8,32,16,2,4}" --rounds 10
