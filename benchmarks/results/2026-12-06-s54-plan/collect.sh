#!/usr/bin/env bash
# Session 54's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (WAIT, default 280 s; pass
# WAIT=<left - 50> when less device time is left): first a.tgz once the
# no-sync tests ended, then s55f.tgz (the profile), then s55p.tgz (the A/B).
# Session 45's collect.sh with this plan's folder and runs.
set -euo pipefail
PLAN_DIR=/tmp/s55 PLAN_RUNS="s55f s55p" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
