#!/usr/bin/env bash
# Session 26 (2026-12-04). Command C, on a fresh host (the first one went back
# between A and B, taking the proxies A/B with it), after b1-b4 and the rows
# were staged again (b3 with .gpu-bundles/prompts and .gpu-bundles/wip). One
# foreground command: the small pair, which 570 s can hold (the proxies' build
# alone takes ~300 s). Code: as A (the series at vllm dsl a2ad194 = 771528d's
# tree, with patches-wip/dsl-served-width 0001-0004 on a wip root).
#   1. b5, check; the wip root;
#   2. the small pair: SmolLM2-135M target (build_models.py) and its 4-layer
#      truncation distilled on the target's own continuations (distill.py
#      DATA=self NL=4, the kept rows);
#   3. ab-run.sh s26small to the deadline. Arms fixed in advance: sd3 (base),
#      target, sd2, sd4, dsl4 (served width, default config); c = 8, 1 first
#      (the two points for this pair), then 32, 2, 4, 16, 64 as the
#      deadline allows; one wave of 256-token requests, 2 warm + 10 measured
#      rounds; DSL engine started alone; cudagraph_metrics on.
# Back: c.tgz (staging, host, model logs), s26small.tgz (ab-run.sh).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s26c; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s26 .gpu-bundles/wip/served.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
cp .gpu-bundles/rows/self-rows-*.pt /tmp/gpuhost/models/
DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 || { tail "$R/build_models.log"; exit 1; }
echo "[$(( $(date +%s) - T0 ))s] build_models done"
DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1 || { tail "$R/distill-l4-self.log"; exit 1; }
echo "[$(( $(date +%s) - T0 ))s] distill done"; tail -n 3 "$R/distill-l4-self.log"
cp /tmp/gpuhost/models/smollm2-l4-self/distill.json "$R/" 2>/dev/null
tar czf "$OUT/c.tgz" -C /tmp s26c
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_END=$(( T0 + 588 )) bash scripts/gpu-host/ab-run.sh s26small -- \
  --models /tmp/gpuhost/models --target smollm2-135m --draft smollm2-l4-self \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --engine "$E" \
  --arms 'sd3,target,sd2,sd4,dsl4' --concurrency 8,1,32,2,4,16,64 \
  --rounds 10 --warm-rounds 2 --dsl-starts-alone
echo "[$(( $(date +%s) - T0 ))s] C done"
