#!/usr/bin/env bash
# Session 13 (2026-12-02), command E: interleaved A/B (benchmarks/abab.py, 6 ABBA rounds)
# on the ShareGPT test split, cost-scaled proxy pair built by command D
# (smollm2-135m-x8b target, smollm2-l16-self-x1b draft), prefix caching off, greedy,
# 256 tokens, async scheduling, FULL CUDA graphs. Arms fixed before any measurement:
# SD at K=3 (base), 4, target-only, DSL in its default configuration (dsl4:
# "dynamic_lookahead": true, num_speculative_tokens 4 as the cap, no threshold), and
# upstream's adaptive verification on SD K=4 (sd4av: each step verifies the draft
# budget its start-up cost tables and online acceptance estimate pick), an anchor, and
# DSL with it (dsl4av: the positions a request did not draft are never verified).
# Six engines side by side: 4 GiB KV cache and gpu_memory_utilization 0.155 each (as
# session 10's six-engine run).
# (K=2 is left out here: it was never SD's best at c <= 32 in sessions 9-12.)
# Concurrency in order of importance: 8 (noise 5.3% in session 12), 16, 4, 2, then 1
# (measured in session 12) if time is left; abab.py writes after each point.
# Results: $OUT/e.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s13
for i in $(seq 150); do [ -f "$R/models.done" ] && break; sleep 2; done
cat "$R/logs/chain.log" 2>/dev/null
[ -d /tmp/gpuhost/models/smollm2-l16-self-x1b ] || { echo "the proxy draft is missing"; exit 1; }
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
mkdir -p "$R/abab"
T0=$(date +%s)
timeout ${ABAB_TIMEOUT:-480} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b-small-c.json" \
  --arms sd3,target,sd4,dsl4,sd4av,dsl4av --concurrency 8,16,4,2,1 --rounds 6 > "$R/logs/abab-small-c.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s"
grep -h "prices each draft step" "$R/logs/abab-small-c.log" | cut -c1-400 | head -2
grep -A6 "^c=" "$R/logs/abab-small-c.log" | grep -v "INFO\|WARN"
tar czf "$OUT/e.tgz" -C "$R" logs abab
