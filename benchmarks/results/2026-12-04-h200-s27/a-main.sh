#!/usr/bin/env bash
# Session 27 (2026-12-04). Command A, after b1-b4 and the rows were staged (b3
# carried with .gpu-bundles/prompts and .gpu-bundles/wip). Code: the 52-patch
# series (vllm dsl a2ad194, bundles packed in session 26) with
# patches-wip/dsl-served-width 0001-0004 (vllm wip-served d156192, served.tgz)
# laid over it by wip-root.sh; every engine here runs on that wip root.
# Everything long runs in its own process session, and this command returns
# after ~290 s with short output: in sessions 20, 25 and 26 the call after a
# ~585 s command found a fresh host 4 times in 5, the short calls never.
#   1. b5, check; the wip root; the target and both truncations (4 and 16
#      layers) built here, in the foreground;
#   2. the proxies chain (distill l16 on the kept rows, then build_scaled) in
#      the background (proxies-start.sh, which finds the truncation built);
#   3. the A/B s27 started, waiting for the proxies (docs/dsl-at-batch-size.md
#      Next 0): sd2 (base, SD's best K on this pair in sessions 24-25), dsl4
#      (the served width rule with 0004's counterfactual narrowing, default
#      config), dsl4@1-4:4/5-64:2 (the oracle widths at the same cap);
#      c = 64, 16, 4, 2, then 8, 32, 1; one wave of 256-token requests, 2 warm
#      + 10 measured ABBA rounds per point; DSL engines started alone;
#      cudagraph_metrics on;
#   4. beside the proxies' build, the small pair (SmolLM2-135M and its 4-layer
#      truncation distilled on the target's continuations) and its step
#      profile s27prof (Next 0b): profile_step.py --arms sd1,dsl1,sd2,dsl2 at
#      one request, cut at 420 s. It shares the GPU with the distillation, so
#      its TPOTs are not numbers to quote; what it is for is cProfile's host
#      time per function, DSL arm against the SD arm of the same K.
# Back: a.tgz (staging, host, model logs). Collected by collect.sh.
set -uo pipefail
T0=$(date +%s)
R=/tmp/s27; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail -n 5 "$R/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s27 .gpu-bundles/wip/served.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
cp .gpu-bundles/rows/self-rows-*.pt /tmp/gpuhost/models/
DRAFT_LAYERS=4,16 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 \
  || { tail -n 5 "$R/build_models.log"; exit 1; }
touch /tmp/gpuhost/models/smollm2-135m/.built /tmp/gpuhost/models/smollm2-l16/.built
echo "[$(( $(date +%s) - T0 ))s] target and truncations built"
bash scripts/gpu-host/proxies-start.sh > "$R/proxies-start.log" 2>&1 || { cat "$R/proxies-start.log"; exit 1; }
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1300 AB_WAIT_FILE=/tmp/proxies/done AB_WAIT_S=700 bash scripts/gpu-host/ab-start.sh s27 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --engine "$E" \
  --out abab.json --arms 'sd2,dsl4,dsl4@1-4:4/5-64:2' --concurrency 64,16,4,2,8,32,1 \
  --rounds 10 --warm-rounds 2 --dsl-starts-alone > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
if DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1; then
  echo "[$(( $(date +%s) - T0 ))s] small draft distilled"
  cp /tmp/gpuhost/models/smollm2-l4-self/distill.json "$R/" 2>/dev/null
  GPU_HOST_ROOT=$root AB_SCRIPT=profile_step.py AB_TIMEOUT_S=420 bash scripts/gpu-host/ab-start.sh s27prof -- \
    --models /tmp/gpuhost/models --target smollm2-135m --draft smollm2-l4-self \
    --prompts .gpu-bundles/prompts --out prof --arms sd1,dsl1,sd2,dsl2 --concurrency 1 \
    --requests 8 --max-tokens 128 --engine "$E" --top 40 >> "$R/ab-start.log" 2>&1
  # timeout ends profile_step.py's parent only; its arm child must not outlive it.
  setsid bash -c 'sleep 430; pkill -f "benchmarks/profile_step.py" || true' < /dev/null > /dev/null 2>&1 &
else
  echo "small draft: distill failed (no profile)"; tail -n 3 "$R/distill-l4-self.log"
fi
while (( $(date +%s) < T0 + 285 )) && [[ ! -f /tmp/proxies/done || ! -f /tmp/ab/s27prof/rc ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s27
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(cat /tmp/proxies/chain.log 2>/dev/null | tr '\n' ' ')"
