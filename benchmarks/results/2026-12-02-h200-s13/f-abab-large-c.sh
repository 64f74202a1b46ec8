#!/usr/bin/env bash
# Session 13 (2026-12-02), command F: as command E at c = 32 and 64 (six engines, 4 GiB
# KV cache each: 64 requests of this split need ~3.5 GB), arms fixed before any
# measurement: SD K=2 (base), 3, target-only, DSL default (dsl4), SD K=4 with upstream's
# adaptive verification (sd4av), which narrows the verify per step where its cost tables
# say it pays, and DSL with it (dsl4av): does narrowing the verify pay at large c.
# Then the small pair (SmolLM2-135M + the 4-layer draft distilled by command D) at
# c = 1 and 8, arms SD K=1, 2 (base), 3, target, DSL default, until the limit.
# Results: $OUT/f.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s13; mkdir -p "$R/abab" "$R/logs"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
T0=$(date +%s)
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
timeout ${ABAB_TIMEOUT:-390} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b-large-c.json" \
  --arms sd2,target,sd3,dsl4,sd4av,dsl4av --concurrency 32,64 --rounds 6 \
  > "$R/logs/abab-large-c.log" 2>&1
echo "abab large c rc=$? $(( $(date +%s) - T0 ))s"
grep -A6 "^c=" "$R/logs/abab-large-c.log" | grep -v "INFO\|WARN"
left=$(( ${LIMIT_S:-585} - ($(date +%s) - T0) ))
if [ -d /tmp/gpuhost/models/smollm2-l4-kd ] && [ $left -gt 90 ]; then
  timeout $left python3 benchmarks/abab.py --models /tmp/gpuhost/models \
    --target smollm2-135m --draft smollm2-l4-kd --prompts .gpu-bundles/prompts \
    --max-tokens 256 --base-requests 8 --out "$R/abab/abab-small-pair.json" \
    --arms sd2,target,sd1,sd3,dsl4 --concurrency 1,8 --rounds 4 > "$R/logs/abab-small-pair.log" 2>&1
  echo "abab small pair rc=$? $(( $(date +%s) - T0 ))s"
  grep -A6 "^c=" "$R/logs/abab-small-pair.log" | grep -v "INFO\|WARN"
fi
tar czf "$OUT/f.tgz" -C "$R" logs abab
