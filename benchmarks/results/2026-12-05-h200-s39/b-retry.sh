#!/usr/bin/env bash
# Session 39's second try (the host of a-main.sh went back between two
# collect calls, before any round). Cut to fit the ~900 s left: the small
# pair with a 300-step draft (SMALL_STEPS), then the A/B s39r with two arms
# under ab_hooks.HostTimer, sd4+t and dsl4+t (the c = 1 pair of session 38's
# 0.45 ms gap: same tokens a step), c = 1 and 8, 1 warm + 3 rounds, engines
# pinned to the two highest allowed CPUs. Code: vllm c4dc72a (the bundle).
set -uo pipefail
R=/tmp/s39; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source "$root/env.sh"
GPU_HOST_ROOT=$root SMALL_DIR=$R/small SMALL_STEPS=300 bash scripts/gpu-host/small-start.sh || exit 1
CPUS=$(python3 -c 'import os; a = sorted(os.sched_getaffinity(0)); print(f"{a[-2]},{a[-1]}")')
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=$R/small/done AB_WAIT_S=600 \
  bash scripts/gpu-host/ab-start.sh s39r -- --models "$root/models" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'sd4+t,dsl4+t' --arm-options "$O" \
  --rounds 3 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 5
tar czf "$OUT/b.tgz" -C /tmp s39
