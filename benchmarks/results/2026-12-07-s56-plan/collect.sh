#!/usr/bin/env bash
# Session 56's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (WAIT, default 280 s; pass
# WAIT=<left - 50> when less device time is left): first a.tgz (at once: no
# suite runs), then s57p.tgz (the A/B; abab.json is written after every
# point). Session 45's collect.sh with this plan's folder and run.
set -euo pipefail
PLAN_DIR=/tmp/s57 PLAN_RUNS="s57p" \
  exec bash benchmarks/results/2026-12-06-s45-plan/collect.sh "$@"
