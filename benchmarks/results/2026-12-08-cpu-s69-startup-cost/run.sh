#!/usr/bin/env bash
# Regenerates startup.txt (a few seconds, no GPU): benchmarks/startup_cost.py
# over the committed A/B logs of sessions 59 (H200, 48 patches) and 60-67
# (H100; 61-67 the 50-patch series of session 61's GPU suite).
# Usage: bash benchmarks/results/2026-12-08-cpu-s69-startup-cost/run.sh [--help]
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
handle_help "$@"
here=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT/benchmarks/results"
"${PYTHON:-python3}" "$ROOT/benchmarks/startup_cost.py" \
  2026-12-07-h200-s59/s59p-abab.log.gz 2026-12-07-h100-s6[0-7]/*-abab.log.gz > "$here/startup.txt"
