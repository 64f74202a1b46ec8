#!/usr/bin/env bash
# Session 10, command D. The host went cold between command A and the tune (B), and the
# device time left allowed re-staging plus one A/B, not a tune as well. So the arms are
# fixed before any measurement (not tuned on the test split): SD at K = 3, 4, 5 (the
# best of them is read off the test split, which favours SD), target-only, and DSL at
# (K=8, tau=0.5), session 7's tuned choice, alone and with K=4 from 17 requests on. Test split, c = 1, 8, 32,
# all six engines up at once, ABBA turns. $OUT/d.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s9; mkdir -p "$R/logs" "$R/abab"
DRAFT=$(cat "$R/draft.txt")-x1b
ARMS="sd4,sd3,sd5,target,dsl8t0.5,dsl8t0.5@1-16:8/17-64:4"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
nvidia-smi --query-gpu=name,memory.used,utilization.gpu --format=csv > "$R/logs/host-d.txt"
T0=$(date +%s)
timeout ${ABAB_TIMEOUT:-540} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft "$DRAFT" --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b.json" \
  --arms "$ARMS" --concurrency 1,8,32 --rounds 4 > "$R/logs/abab.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s arms $ARMS" | tee -a "$R/logs/d.log"
tar czf "$OUT/d.tgz" -C "$R" logs abab
