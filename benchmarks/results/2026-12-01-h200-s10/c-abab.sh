#!/usr/bin/env bash
# Session 10 (written in session 9), command C: interleaved A/B on the test split of the c=1 choices (SD at its
# best K, DSL at its best (K, tau)), target-only and the bands as one config
# (report.py's recommend-one.json: K per batch size), at c = 1, 8, 32. $OUT/c.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s9; B=$R/x8b
DRAFT=$(cat "$R/draft.txt")-x1b
ONE=$(python3 -c "import json;o=json.load(open('$B/recommend-one.json'))['sharegpt'];print(o['abab_arm'] if o else '')" 2>/dev/null)
if [ -f "$B/selection.json" ]; then
  ARMS="sd*,target,dsl*${ONE:+,$ONE}"; SEL=(--selection "$B/selection.json")
else  # the tune did not finish: a-priori arms (session 7's best at c=1 and SD's K range)
  ARMS="sd3,sd4,target,dsl8t0.5"; SEL=()
fi
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 4294967296, "gpu_memory_utilization": 0.18}'
T0=$(date +%s)
timeout ${ABAB_TIMEOUT:-480} python3 benchmarks/abab.py --models /tmp/gpuhost/models --target smollm2-135m-x8b \
  --draft "$DRAFT" --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 \
  --engine "$E" --out "$R/abab/abab-x8b.json" --arms "$ARMS" \
  "${SEL[@]}" --concurrency 1,8,32 --rounds 4 > "$R/logs/abab.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s arms $ARMS" | tee -a "$R/logs/c.log"
tar czf "$OUT/c.tgz" -C "$R" logs abab
