#!/usr/bin/env bash
# Session 22 (2026-12-04), command C, on a fresh host after b1-b4 were staged again
# (b3 carried with .gpu-bundles/prompts and rows). Code: the 50-patch series as
# packed (vllm branch dsl at 5d4abcf, no wip). Question: do the long steps of
# sessions 20-22 (the next wave's prefills arriving as one burst, since every request
# generated exactly 256 tokens) go, and the round-to-round spread with them, when
# each request generates its own length (--output-lengths 32-256, seeded, the same
# for every arm and round) and a point has 4 waves of requests; and then where does
# DSL at cap 3 stand against SD K=3 and K=2 at 64, 32, 16.
# Steps: b5, check; the proxies in the foreground (kept rows); the A/B started in its
# own process session (arms fixed in advance: dsl3 base, sd3, sd2; c = 64, 32, 16;
# 8 ABBA rounds; DSL started alone; engine options as A's); ab-collect.sh to the
# deadline. Back: c.tgz (staging, host, proxies logs), c-ab.tgz (the run so far).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s22c; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
bash scripts/gpu-host/proxies-start.sh --foreground > "$R/proxies.log" 2>&1
rc=$?
cp /tmp/proxies/*.log "$R/" 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; tail -4 "$R/proxies.log"
tar czf "$OUT/c.tgz" -C /tmp s22c
(( rc == 0 )) || exit "$rc"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true}'
AB_TIMEOUT_S=1500 bash scripts/gpu-host/ab-start.sh c-ab -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --output-lengths 32-256 --waves 4 --base-requests 8 --engine "$E" \
  --out abab.json --arms dsl3,sd3,sd2 --concurrency 64,32,16 --rounds 8 --dsl-starts-alone || exit 1
setsid bash -c 'timeout 1500 top -b -d 2 -c -w 200 | awk "/^top -|^%Cpu/ {print; fflush(); next} \$9 + 0 >= 3 {print; fflush()}" > /tmp/ab/c-ab/top.log 2>&1' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'timeout 1500 nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 500 > /tmp/ab/c-ab/gpu.csv 2>&1' < /dev/null > /dev/null 2>&1 &
left=$(( T0 + 585 - $(date +%s) ))
(( left > 10 )) && bash scripts/gpu-host/ab-collect.sh c-ab --wait "$left"
echo "[$(( $(date +%s) - T0 ))s] C done"
