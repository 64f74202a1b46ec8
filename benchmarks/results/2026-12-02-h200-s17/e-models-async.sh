#!/usr/bin/env bash
# Session 17 (2026-12-02), command E on a fresh host (the host that ran D went back while
# idle before its queued A/Bs could be collected: they were lost with it). After b1-b5 and
# the prompts were staged again: build the target and the 16-layer truncation
# (build_models.py), the cost-scaled proxies (proxies-start.sh), and queue "async2"
# (async2.sh) behind them. Code: the 48-patch series + both wip patches (gpu-wip).
set -uo pipefail
bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
M=/tmp/gpuhost/models
T0=$(date +%s)
DRAFT_LAYERS=16 python3 scripts/gpu-host/build_models.py > /tmp/build_models.log 2>&1 || { tail -20 /tmp/build_models.log; exit 1; }
touch "$M/smollm2-135m/.built" "$M/smollm2-l16/.built"
echo "build_models $(( $(date +%s) - T0 ))s"
bash scripts/gpu-host/proxies-start.sh
AB_WAIT_FILE=/tmp/proxies/done AB_WAIT_S=900 bash benchmarks/results/2026-12-02-h200-s17/async2.sh
