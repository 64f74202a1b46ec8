#!/usr/bin/env bash
# Session 13 (2026-12-02), command F: as command E at c = 32 and 64 (six engines, 4 GiB
# KV cache each: 64 requests of this split need ~3.5 GB), arms fixed before any
# measurement: SD K=2 (base), 3, target-only, DSL default (dsl4), SD K=4 with upstream's
# adaptive verification (sd4av), which narrows the verify per step where its cost tables
# say it pays (dsl4av, slower than sd4av at c = 8 and 16 in command E, was dropped before
# this run to leave time for c = 64): does narrowing the verify pay at large c.
# 5 ABBA rounds (6 arms at c=64 take ~30 s a round).
# Results: $OUT/f.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s13; mkdir -p "$R/abab" "$R/logs"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
T0=$(date +%s)
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
timeout ${ABAB_TIMEOUT:-470} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b-large-c.json" \
  --arms sd2,target,sd3,dsl4,sd4av --concurrency 32,64 --rounds 5 \
  > "$R/logs/abab-large-c.log" 2>&1
echo "abab large c rc=$? $(( $(date +%s) - T0 ))s"
grep -A6 "^c=" "$R/logs/abab-large-c.log" | grep -v "INFO\|WARN"
tar czf "$OUT/f.tgz" -C "$R" logs abab
