#!/usr/bin/env bash
# Session 26 (2026-12-04). Command A, after b1-b4 and the rows were staged (b3
# carried with .gpu-bundles/prompts and .gpu-bundles/wip). Code: the 52-patch
# series (vllm branch dsl at 771528d, packed this session) with
# patches-wip/dsl-served-width 0001-0004 (vllm wip-served, served.tgz) laid
# over it by wip-root.sh: both the GPU suite and the A/B run on that wip root.
# Steps:
#   1. b5, check; the wip root;
#   2. the proxies chain started (waits for the suite's 16-layer truncation);
#   3. the GPU suite on the wip root (0004 changes the scheduler every DSL
#      engine of the suite runs), SUITE_DRAFT_LAYERS=4,16;
#   4. the A/B on the wip root, started in its own process session once the
#      proxies are built (ab-start.sh, collected by B, C...). Arms fixed in
#      advance:
#        sd2 (base)          SD at K=2 (SD's best K at every c in sessions 24-25)
#        dsl4                DSL at cap 4, default config: the served width
#                            rule with 0004's counterfactual narrowing
#        dsl4@1-4:4/5-64:2   the oracle widths at the same cap as a schedule
#      c = 64, 16, 4, 2 (not measured on 0052 yet), then 8, 32, 1; one wave of
#      256-token requests, 2 warm + 10 measured ABBA rounds per point; DSL
#      engines started alone; cudagraph_metrics on;
#   5. ab-collect.sh to the deadline.
# Back: a.tgz (staging, host, proxies logs), gpu-suite.tgz, s26.tgz (the run so far).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s26; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s26 .gpu-bundles/wip/served.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
echo "wip root $root"
bash scripts/gpu-host/proxies-start.sh > "$R/proxies-start.log" 2>&1 || { cat "$R/proxies-start.log"; exit 1; }
GPU_HOST_ROOT=$root DSL_GPU_PARALLEL=15 SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=440 bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1
src=$?
echo "[$(( $(date +%s) - T0 ))s] suite rc=$src"; tail -n 8 "$R/suite.out"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1700 AB_WAIT_FILE=/tmp/proxies/done AB_WAIT_S=600 bash scripts/gpu-host/ab-start.sh s26 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --engine "$E" \
  --out abab.json --arms 'sd2,dsl4,dsl4@1-4:4/5-64:2' --concurrency 64,16,4,2,8,32,1 \
  --rounds 10 --warm-rounds 2 --dsl-starts-alone || exit 1
setsid bash -c 'timeout 1700 top -b -d 2 -c -w 200 | awk "/^top -|^%Cpu/ {print; fflush(); next} \$9 + 0 >= 3 {print; fflush()}" > /tmp/ab/s26/top.log 2>&1' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'timeout 1700 nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 500 > /tmp/ab/s26/gpu.csv 2>&1' < /dev/null > /dev/null 2>&1 &
for _ in $(seq 1 60); do [[ -f /tmp/proxies/done ]] && break; sleep 5; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null; echo "proxies: $(cat /tmp/proxies/done 2>/dev/null || echo 'not done')"
tar czf "$OUT/a.tgz" -C /tmp s26
left=$(( T0 + 585 - $(date +%s) ))
(( left > 10 )) && bash scripts/gpu-host/ab-collect.sh s26 --wait "$left"
echo "[$(( $(date +%s) - T0 ))s] A done"
