#!/usr/bin/env bash
# Session 13 (2026-12-02), command G, only if device time is left after F: the small pair
# (SmolLM2-135M target + the 4-layer draft distilled by command D, smollm2-l4-kd) at
# c = 1 and 8 on the ShareGPT test split, arms fixed before any measurement: SD K=2
# (base), 1, 3, target-only, DSL default (dsl4), 4 ABBA rounds. Results: $OUT/g.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s13; mkdir -p "$R/abab" "$R/logs"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
T0=$(date +%s)
[ -d /tmp/gpuhost/models/smollm2-l4-kd ] || { echo "smollm2-l4-kd is missing"; exit 1; }
timeout ${ABAB_TIMEOUT:-300} python3 benchmarks/abab.py --models /tmp/gpuhost/models \
  --target smollm2-135m --draft smollm2-l4-kd --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --out "$R/abab/abab-small-pair.json" \
  --arms sd2,target,sd1,sd3,dsl4 --concurrency 1,8 --rounds 4 > "$R/logs/abab-small-pair.log" 2>&1
echo "abab small pair rc=$? $(( $(date +%s) - T0 ))s"
grep -A6 "^c=" "$R/logs/abab-small-pair.log" | grep -v "INFO\|WARN"
tar czf "$OUT/g.tgz" -C "$R" logs/abab-small-pair.log abab/abab-small-pair.json
