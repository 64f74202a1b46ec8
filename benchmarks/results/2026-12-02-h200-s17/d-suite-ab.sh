#!/usr/bin/env bash
# Session 17 (2026-12-02), command D, after b1-b4 and the prompts + in-tree tests were
# staged: stage b5, then
# - the GPU suite (scripts/gpu-host/suite.sh) and the in-tree CUDA tests on the 48-patch
#   series (vllm dsl 9b414ffe) with the two wip patches applied on top
#   (patches-wip/dsl-sync-no-hand-off, patches-wip/dsl-price-first-pass: branch gpu-wip);
# - beside them, the cost-scaled proxies (scripts/gpu-host/proxies-start.sh);
# - then two runs queued on the GPU (scripts/gpu-host/ab-start.sh), collected by the next
#   commands with ab-collect.sh: "sync" (sync.sh), then "async" (async.sh).
# Results: $OUT/gpu-suite.tgz (suite.sh), $OUT/d.tgz (host, intree, proxies logs).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b5 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
HERE=benchmarks/results/2026-12-02-h200-s17
R=/tmp/s17; mkdir -p "$R/logs"
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv > "$R/logs/host.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" >> "$R/logs/host.txt" 2>&1
bash scripts/gpu-host/proxies-start.sh
(
  cd .gpu-bundles/intree && timeout 300 python3 -m pytest -q -p no:cacheprovider -rfEs \
    --rootdir . --noconftest tests > "$R/logs/intree.log" 2>&1
  echo "intree rc=$?" >> "$R/logs/intree.log"
) &
intree=$!
SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-480} DSL_GPU_PARALLEL=16 bash scripts/gpu-host/suite.sh
echo "suite rc=$? $(( $(date +%s) - T0 ))s"
wait $intree
tail -n 8 "$R/logs/intree.log"
AB_WAIT_FILE=/tmp/proxies/done bash "$HERE/sync.sh"
AB_WAIT_FILE=/tmp/ab/sync/rc AB_WAIT_S=1500 bash "$HERE/async.sh"
cat /tmp/proxies/chain.log 2>/dev/null
cp /tmp/proxies/*.log "$R/logs/" 2>/dev/null
tar czf "$OUT/d.tgz" -C "$R" logs
echo "D done $(( $(date +%s) - T0 ))s"
