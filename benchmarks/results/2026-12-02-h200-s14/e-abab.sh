#!/usr/bin/env bash
# Session 14 (2026-12-02), command E: interleaved A/B (benchmarks/abab.py, 4 ABBA rounds)
# at c = 64, 1, 8 then 32 (in that order of importance: a run cut by the time limit keeps
# the points it finished) on the ShareGPT test split, cost-scaled proxy pair built by command D
# (smollm2-135m-x8b target, smollm2-l16-self-x1b draft), prefix caching off, greedy,
# 256 tokens, async scheduling, FULL CUDA graphs. Measures: does DSL with the draft width
# per batch size k(B) reach >= 0.99x of the best of SD and target-only at c = 64 (s13:
# 0.894x of best-K SD, target-only as fast as the best SD) without losing c = 1 (s12:
# 1.150x with cap 8), and keep the ties at 8 and 32. One command instead of two (E, F)
# after two refused machine starts cost 180 s of device time: one engine start-up.
# Arms fixed before any measurement: SD K=3 (base; s13's best K at c = 8 to 32), SD K=2
# (best at c = 64), SD K=4, target-only, DSL in its default configuration (dsl4: "dynamic_lookahead":
# true, num_speculative_tokens 4 as the cap, nothing else; with the V2 runner and a draft
# model this now includes k(B), chosen by the scheduler from the start-up step costs,
# target step timed at every width 1..5, and the acceptance it observes).
# --dsl-starts-alone: the DSL engine starts after the other four are up, so its cost
# table is timed on an otherwise idle GPU. Five engines, each as in s13 (4 GiB KV cache:
# 64 requests of this split need ~3.5 GB; gpu_memory_utilization 0.155, which with a
# fixed KV cache only sets the free memory each engine needs at start-up).
# The DSL engine's "Dynamic speculation lookahead" log lines (cost table, draft widths)
# go to logs/dsl-lines.txt. The whole command stays within LIMIT_S (560 s): the
# A/B gets what is left after waiting for command D's models.
# Code: the series through 0049 (draft width per batch size).
# Results: $OUT/e.tgz (logs, abab/abab-x8b.json).
set -uo pipefail
T_START=$(date +%s)
source /tmp/gpuhost/env.sh
R=/tmp/s14; mkdir -p "$R/abab" "$R/logs"
for i in $(seq 150); do [ -f "$R/models.done" ] && break; sleep 2; done
cat "$R/logs/chain.log" 2>/dev/null
[ -d /tmp/gpuhost/models/smollm2-l16-self-x1b ] || { echo "the proxy draft is missing"; tar czf "$OUT/e.tgz" -C "$R" logs; exit 1; }
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
T0=$(date +%s)
LEFT=$(( ${LIMIT_S:-560} - 20 - (T0 - T_START) ))
echo "abab limit ${ABAB_TIMEOUT:-$LEFT}s"
timeout ${ABAB_TIMEOUT:-$LEFT} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b.json" \
  --arms sd3,sd2,sd4,target,dsl4 --dsl-starts-alone --concurrency 64,1,8,32 --rounds 4 \
  > "$R/logs/abab.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s"
grep -h "Dynamic speculation lookahead" "$R/logs/abab.log" > "$R/logs/dsl-lines.txt"
cut -c1-400 "$R/logs/dsl-lines.txt" | head -6
python3 -c "import json, sys; print('\n'.join(json.load(open(sys.argv[1])).get('summary', [])))" \
  "$R/abab/abab-x8b.json" 2>/dev/null || tail -n 20 "$R/logs/abab.log"
tar czf "$OUT/e.tgz" -C "$R" logs abab
