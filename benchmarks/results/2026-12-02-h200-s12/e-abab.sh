#!/usr/bin/env bash
# Session 12 (2026-12-02), command E: interleaved A/B (benchmarks/abab.py, 4 ABBA rounds) on
# the ShareGPT test split, cost-scaled proxy pair built by command D (smollm2-135m-x8b
# target, smollm2-l16-self-x1b draft), prefix caching off, greedy, 256 tokens.
# Arms fixed before any measurement: SD at K=3 (base: the tune split's choice at c=1, 8
# and 32 in sessions 9/10, results/2026-12-01-h200-s10), SD K=4, target-only, and DSL with
# the cost-aware stop rule (dynamic_lookahead, no threshold) capped at K=4 and K=8.
# Concurrency points in order of importance (abab.py writes after each point). First,
# the calibration table of the drafter (benchmarks/calibration.py, tune split).
# Code: the series through 0044. Results: $OUT/e.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s12
for i in $(seq 120); do [ -f "$R/models.done" ] && break; sleep 2; done
cat "$R/logs/chain.log" 2>/dev/null
[ -d /tmp/gpuhost/models/smollm2-l16-self-x1b ] || { echo "the proxy draft is missing"; tar czf "$OUT/e.tgz" -C "$R" logs; exit 1; }
# The drafter's confidence against greedy acceptance, tune split (HF transformers).
timeout 120 python3 benchmarks/calibration.py --target /tmp/gpuhost/models/smollm2-135m \
  --draft /tmp/gpuhost/models/smollm2-l16-self --prompts .gpu-bundles/prompts \
  --dataset sharegpt-tune --out "$R/calibration.json" > "$R/logs/calibration.log" 2>&1
echo "calibration rc=$?" | tee -a "$R/logs/e.log"; tail -n 16 "$R/logs/calibration.log"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.18}'
mkdir -p "$R/abab"
T0=$(date +%s)
timeout ${ABAB_TIMEOUT:-430} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b.json" \
  --arms sd3,target,sd4,dsl4t0,dsl8t0 --concurrency 1,8,32,4,16 --rounds 4 > "$R/logs/abab.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$R/logs/e.log"
grep -h "prices each draft step" "$R/logs/abab.log" | head -4
tail -n 40 "$R/logs/abab.log"
tar czf "$OUT/e.tgz" -C "$R" logs abab $( [ -f "$R/calibration.json" ] && echo calibration.json )
