#!/usr/bin/env bash
# Session 14 (2026-12-02), command F: as command E at c = 1, 8, 2, 4 (in this order of
# importance: c = 1 must not be lost to k(B), c = 8 is the s13 tie, c = 2 and 4 were never
# measured; abab.py writes after each point, so a cut loses only the last ones).
# Measures: DSL with the draft width per batch size against SD at its best K and
# target-only at small c. Arms fixed before any measurement: SD K=3 (base; best K at
# c = 1, 8 and 16 in sessions 12-13), SD K=2, SD K=4, target-only, DSL default (dsl4:
# "dynamic_lookahead": true, cap 4, which now includes k(B) on the V2 runner),
# --dsl-starts-alone (the DSL engine times its costs after the other four are up).
# Five engines, each as in s13 (4 GiB KV cache, gpu_memory_utilization 0.155).
# 4 ABBA rounds: ~175 s to start (the x8b compile cache is warm after E), then per round
# of 5 arms ~38 s at c=1, ~15 s at c=8, ~20 s at c=2, ~12 s at c=4 (s12 c=1: 151 s for
# 5 arms x 4 rounds; s12/s13 c=8: ~3 s an arm), ~520 s in all within LIMIT_S (560 s).
# The DSL engine's "Dynamic speculation lookahead" log lines go to
# logs/dsl-lines-small-c.txt.
# Code: the series through 0049 (draft width per batch size).
# Results: $OUT/f.tgz (logs, abab/abab-x8b-small-c.json).
set -uo pipefail
T_START=$(date +%s)
source /tmp/gpuhost/env.sh
R=/tmp/s14; mkdir -p "$R/abab" "$R/logs"
[ -d /tmp/gpuhost/models/smollm2-l16-self-x1b ] || { echo "the proxy draft is missing"; tar czf "$OUT/f.tgz" -C "$R" logs; exit 1; }
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.155}'
T0=$(date +%s)
LEFT=$(( ${LIMIT_S:-560} - 20 - (T0 - T_START) ))
echo "abab limit ${ABAB_TIMEOUT:-$LEFT}s"
timeout ${ABAB_TIMEOUT:-$LEFT} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b-small-c.json" \
  --arms sd3,sd2,sd4,target,dsl4 --dsl-starts-alone --concurrency 1,8,2,4 --rounds 4 \
  > "$R/logs/abab-small-c.log" 2>&1
echo "abab small c rc=$? $(( $(date +%s) - T0 ))s"
grep -h "Dynamic speculation lookahead" "$R/logs/abab-small-c.log" > "$R/logs/dsl-lines-small-c.txt"
cut -c1-400 "$R/logs/dsl-lines-small-c.txt" | head -6
python3 -c "import json, sys; print('\n'.join(json.load(open(sys.argv[1])).get('summary', [])))" \
  "$R/abab/abab-x8b-small-c.json" 2>/dev/null || tail -n 20 "$R/logs/abab-small-c.log"
tar czf "$OUT/f.tgz" -C "$R" logs abab
