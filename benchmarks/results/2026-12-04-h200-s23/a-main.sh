#!/usr/bin/env bash
# Session 23 (2026-12-04). Command A, after b1-b4 were staged (b3 carried with
# .gpu-bundles/prompts, rows, intree and wip). Code: the 50-patch series (vllm branch
# dsl at 5d4abcf, as packed in b1-b5 in session 22) with patches-wip/dsl-draft-width
# (vllm branch wip-ctx: the width per batch size, 0003 the step costs priced at the
# served context, 0004 exploration one width past the plan) laid over a copy of the
# staged package (scripts/gpu-host/wip-root.sh). Every arm runs that code; the arms
# with a batch-size schedule (@1-64:K) do not plan the width (a user schedule decides)
# but do price the stop rule at the served context.
# Steps:
#   1. b5, check; the wip root;
#   2. beside the proxies: the in-tree CUDA tests (pack-intree.sh on wip-ctx, plus the
#      width wip's test_gpu_dsl_step_costs_cuda.py) on the wip root;
#   3. the proxies in the foreground (kept rows);
#   4. the A/B started in its own process session (ab-start.sh, collected by B):
#      arms fixed in advance: dsl6 (base: DSL cap 6, the width planned per batch
#      size), dsl3@1-64:3 (cap 3, no plan), dsl2@1-64:2 (cap 2, no plan: SD K=2's
#      verify width, so dsl2 vs sd2 is DSL's own cost), sd2, sd3; c = 64, 32, 1, 16;
#      8 ABBA rounds; each request its own length (--output-lengths 32-256), 4 waves;
#      DSL engines started alone; engine options as session 22's; top and nvidia-smi
#      sample into the run's folder;
#   5. ab-collect.sh to the deadline.
# Back: a.tgz (staging, host, in-tree, proxies logs), s23.tgz (the run so far).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s23; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s23 .gpu-bundles/wip/ctx-width.tgz) || exit 1
echo "wip root $root"
(
  source "$root/env.sh"
  cd .gpu-bundles/intree && timeout 240 python3 -m pytest -q -p no:cacheprovider -rfEs \
    --rootdir . --noconftest tests > "$R/intree.log" 2>&1
  echo "intree rc=$?" >> "$R/intree.log"
) &
intree=$!
bash scripts/gpu-host/proxies-start.sh --foreground > "$R/proxies.log" 2>&1
rc=$?
cp /tmp/proxies/*.log "$R/" 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; tail -4 "$R/proxies.log"
wait "$intree"; tail -n 8 "$R/intree.log"
tar czf "$OUT/a.tgz" -C /tmp s23
(( rc == 0 )) || exit "$rc"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1700 bash scripts/gpu-host/ab-start.sh s23 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --output-lengths 32-256 --waves 4 --base-requests 8 --engine "$E" \
  --out abab.json --arms dsl6,dsl3@1-64:3,dsl2@1-64:2,sd2,sd3 --concurrency 64,32,1,16 --rounds 8 \
  --dsl-starts-alone || exit 1
setsid bash -c 'timeout 1700 top -b -d 2 -c -w 200 | awk "/^top -|^%Cpu/ {print; fflush(); next} \$9 + 0 >= 3 {print; fflush()}" > /tmp/ab/s23/top.log 2>&1' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'timeout 1700 nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 500 > /tmp/ab/s23/gpu.csv 2>&1' < /dev/null > /dev/null 2>&1 &
left=$(( T0 + 585 - $(date +%s) ))
(( left > 10 )) && bash scripts/gpu-host/ab-collect.sh s23 --wait "$left"
echo "[$(( $(date +%s) - T0 ))s] A done"
