#!/usr/bin/env bash
# Session 9, command B: tune (K, tau) on the tune split for the proxy pair built by
# command A, select, report (recommend.json, recommend-one.json). Results: $OUT/b.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s9; B=$R/x8b; mkdir -p "$B"
DRAFT=$(cat "$R/draft.txt")-x1b
export VLLM_WORKER_MULTIPROC_METHOD=spawn
A=(--models /tmp/gpuhost/models --target smollm2-135m-x8b --draft "$DRAFT"
   --prompts .gpu-bundles/prompts --out "$B" --datasets sharegpt --concurrency 1,8,32
   --sd-k 2-5 --dsl-k 5,8 --dsl-tau 0.5,0.7 --overhead-k 0 --max-tokens 256
   --base-requests 8 --reps 1 --parallel 6)
T0=$(date +%s)
timeout ${TUNE_TIMEOUT:-540} python3 benchmarks/run.py "${A[@]}" --phase tune \
  --engine '{"kv_cache_memory_bytes": 2147483648, "gpu_memory_utilization": 0.16}' \
  > "$R/logs/tune.log" 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$R/logs/b.log"
python3 benchmarks/run.py "${A[@]}" --phase select > "$R/logs/select.log" 2>&1
python3 benchmarks/report.py "$B" --title "Proxy pair, tune split (session 10)" \
  > "$R/logs/report.log" 2>&1
echo "select/report rc=$?" | tee -a "$R/logs/b.log"
cat "$B/recommend-one.json" 2>/dev/null | tee -a "$R/logs/b.log"
tar czf "$OUT/b.tgz" -C "$R" logs x8b
