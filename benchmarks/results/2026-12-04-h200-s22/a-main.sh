#!/usr/bin/env bash
# Session 22 (2026-12-04). Session 21 planned the same commands; its A ran, and its
# results were lost with that session. Command A, after b1-b4 were staged (b3 carried with
# .gpu-bundles/prompts, rows, intree and wip). Code: the 50-patch series (vllm branch
# dsl at 5d4abcf) with two wips laid over a copy of the staged package
# (scripts/gpu-host/wip-root.sh): patches-wip/dsl-draft-width (branch wip-draft-width,
# tree 2f37975) and patches-wip/dsl-compile-once (wip-compile-once, tree a4b93f6); they
# change different files. Steps:
#   1. b5, check; the wip root;
#   2. beside the proxies: the in-tree CUDA tests (pack-intree.sh from both wips merged,
#      plus the width wip's test_gpu_dsl_step_costs_cuda.py) on the wip root;
#   3. the proxies in the foreground (kept rows);
#   4. the A/B started in its own process session (ab-start.sh, collected by B): arms
#      fixed in advance dsl4 (base; the width planned per batch size), sd3, sd2;
#      c = 64, 32, 1; 6 ABBA rounds; DSL started alone; engine options as session 20's
#      ab.sh plus "jit_monitor_verbose": true (every Triton compile while serving is
#      logged); every Python process of the A/B traces its slow collections
#      (benchmarks/gc_trace, >= 2 ms, into /tmp/gc-s22); top and nvidia-smi sample
#      into the run's folder;
#   5. ab-collect.sh to the deadline.
# Back: a.tgz (staging, host, in-tree, proxies logs), s22.tgz (the run so far), gc.tgz.
set -uo pipefail
T0=$(date +%s)
R=/tmp/s22; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s22 \
  .gpu-bundles/wip/draft-width.tgz .gpu-bundles/wip/compile-once.tgz) || exit 1
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
wait "$intree"; tail -n 6 "$R/intree.log"
tar czf "$OUT/a.tgz" -C /tmp s22
(( rc == 0 )) || exit "$rc"
mkdir -p /tmp/gctrace && cp benchmarks/gc_trace/sitecustomize.py /tmp/gctrace/
printf 'export PYTHONPATH=/tmp/gctrace:$PYTHONPATH\nexport DSL_GC_TRACE_DIR=/tmp/gc-s22 DSL_GC_TRACE_MIN_MS=2\n' >> "$root/env.sh"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 bash scripts/gpu-host/ab-start.sh s22 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" \
  --out abab.json --arms dsl4,sd3,sd2 --concurrency 64,32,1 --rounds 6 --dsl-starts-alone || exit 1
setsid bash -c 'timeout 1500 top -b -d 2 -c -w 200 | awk "/^top -|^%Cpu/ {print; fflush(); next} \$9 + 0 >= 3 {print; fflush()}" > /tmp/ab/s22/top.log 2>&1' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'timeout 1500 nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 500 > /tmp/ab/s22/gpu.csv 2>&1' < /dev/null > /dev/null 2>&1 &
left=$(( T0 + 580 - $(date +%s) ))
(( left > 10 )) && bash scripts/gpu-host/ab-collect.sh s22 --wait "$left"
tar czf "$OUT/a.tgz" -C /tmp s22
[[ -d /tmp/gc-s22 ]] && tar czf "$OUT/gc.tgz" -C /tmp gc-s22
echo "[$(( $(date +%s) - T0 ))s] A done"
