#!/usr/bin/env bash
# Session 24 (2026-12-04). Command A, after b1-b4 and the rows were staged (b3
# carried with .gpu-bundles/prompts and .gpu-bundles/wip). Code: the 50-patch
# series (vllm branch dsl at 5d4abcf, as packed in b1-b5 in session 23) with two
# wips laid over it (scripts/gpu-host/wip-root.sh; they change different files):
#   served.tgz  patches-wip/dsl-served-width (vllm wip-served at 63accfb): the
#               DSL draft width per captured batch size chosen from served steps
#   compile.tgz patches-wip/dsl-compile-once (vllm wip-compile-once at 2f925c5):
#               DSL's row kernels compiled once for every batch size
# Steps:
#   1. b5, check; the wip root (its models/ is the staged root's);
#   2. the proxies chain started (waits for the suite's 16-layer truncation);
#   3. the GPU suite (tests/gpu) on the wip root, SUITE_DRAFT_LAYERS=4,16;
#   4. the A/B started in its own process session once the proxies are built
#      (ab-start.sh, collected by B): arms fixed in advance:
#        dsl4                DSL at cap 4, default config: the served width per
#                            batch size (base arm)
#        dsl6@1-4:6/5-64:2   DSL at cap 6, the oracle widths as a user schedule
#                            (the cap up to 4 requests, SD's best K=2 above)
#        sd2, sd3            SD at K = 2, 3
#      c = 64, 32, 1, 8, 16; one wave of fixed-length requests (every request
#      256 tokens, --waves 1, --base-requests 4: c requests decoding together, 4
#      one after the other at c=1), 2 warm rounds then 10 measured ABBA rounds
#      per point; DSL engines started alone; engine options as session 23's;
#      top and nvidia-smi sample into the run's folder;
#   5. ab-collect.sh to the deadline.
# Back: a.tgz (staging, host, proxies logs), gpu-suite.tgz, s24.tgz (the run so far).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s24; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s24 .gpu-bundles/wip/served.tgz .gpu-bundles/wip/compile.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
echo "wip root $root"
bash scripts/gpu-host/proxies-start.sh > "$R/proxies-start.log" 2>&1 || { cat "$R/proxies-start.log"; exit 1; }
GPU_HOST_ROOT=$root SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=420 bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1
src=$?
echo "[$(( $(date +%s) - T0 ))s] suite rc=$src"; tail -n 6 "$R/suite.out"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=/tmp/proxies/done AB_WAIT_S=600 bash scripts/gpu-host/ab-start.sh s24 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --engine "$E" \
  --out abab.json --arms 'dsl4,dsl6@1-4:6/5-64:2,sd2,sd3' --concurrency 64,32,1,8,16 \
  --rounds 10 --warm-rounds 2 --dsl-starts-alone || exit 1
setsid bash -c 'timeout 1500 top -b -d 2 -c -w 200 | awk "/^top -|^%Cpu/ {print; fflush(); next} \$9 + 0 >= 3 {print; fflush()}" > /tmp/ab/s24/top.log 2>&1' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'timeout 1500 nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 500 > /tmp/ab/s24/gpu.csv 2>&1' < /dev/null > /dev/null 2>&1 &
# The proxies' logs once they are done (the A/B waits for them anyway).
for _ in $(seq 1 60); do [[ -f /tmp/proxies/done ]] && break; sleep 5; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null; echo "proxies: $(cat /tmp/proxies/done 2>/dev/null || echo 'not done')"
tar czf "$OUT/a.tgz" -C /tmp s24
left=$(( T0 + 585 - $(date +%s) ))
(( left > 10 )) && bash scripts/gpu-host/ab-collect.sh s24 --wait "$left"
echo "[$(( $(date +%s) - T0 ))s] A done"
