#!/usr/bin/env bash
# Session 9, command A (host warm, bundle staged). Session 8's command A ran past the
# 600 s limit with two self-distilled drafters (l10, l16); l16 won (0.614 vs 0.512), so
# this builds only l16 (900 steps), the GPU suite's l4-kd draft and EAGLE heads, runs the
# GPU suite beside the distillation, then the cost-scaled proxies of l16. $OUT/a.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s9; mkdir -p "$R/logs" "$R/models"
S=scripts/gpu-host M=/tmp/gpuhost/models
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/logs/a.log"; }
T0=$(date +%s)
DRAFT_LAYERS=4,16 python3 $S/build_models.py > "$R/logs/build_models.log" 2>&1
log "build_models rc=$?"
python3 $S/build_eagle.py > "$R/logs/build_eagle.log" 2>&1 &
E=$!
(DATA=self ONLY_ROWS=1 python3 $S/distill.py > "$R/logs/self-rows.log" 2>&1
 log "self rows rc=$?"
 DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$R/logs/distill-l16-self.log" 2>&1
 log "l16-self rc=$?") &
D=$!
python3 $S/distill.py > "$R/logs/distill-l4-kd.log" 2>&1
log "l4-kd rc=$?"
wait $E; log "eagle rc=$?"
export DSL_GPU_PROMPTS=.gpu-bundles/prompts DSL_GPU_PARALLEL=10 DSL_GPU_RESULTS=$R/gpu-raw
(timeout 320 python3 -m pytest -q -rfEs -p no:cacheprovider tests/gpu \
   > "$R/logs/gpu-suite.log" 2>&1; log "gpu suite rc=$?") &
G=$!
wait $D
log "l16-self: $(python3 -c "import json;print(json.load(open('$M/smollm2-l16-self/distill.json'))['first_position_acceptance'])")"
echo smollm2-l16-self > "$R/draft.txt"
DRAFT=smollm2-l16-self timeout 150 python3 $S/build_scaled.py > "$R/logs/build_scaled.log" 2>&1
log "build_scaled rc=$?"
wait $G
for d in "$M"/*/; do
  n=$(basename "$d"); mkdir -p "$R/models/$n"
  cp "$d"/{distill.json,scaled.json,config.json} "$R/models/$n/" 2>/dev/null
done
tar czf "$OUT/a.tgz" -C "$R" logs models gpu-raw draft.txt 2>/dev/null
log "done"
