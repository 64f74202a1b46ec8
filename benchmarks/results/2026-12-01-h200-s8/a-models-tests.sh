#!/usr/bin/env bash
# Session 8, command A (host warm, bundle staged): models, the GPU suite on the
# current series beside two self-distilled drafters, then the cost-scaled proxies
# of the better drafter and the TP-splittable copies. Results: $OUT/a.tgz.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s8; mkdir -p "$R/logs" "$R/models"
S=scripts/gpu-host M=/tmp/gpuhost/models
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/logs/a.log"; }
T0=$(date +%s)
DRAFT_LAYERS=4,10,16 python3 $S/build_models.py > "$R/logs/build_models.log" 2>&1
log "build_models rc=$?"
python3 $S/build_eagle.py > "$R/logs/build_eagle.log" 2>&1 &
E=$!
(DATA=self ONLY_ROWS=1 python3 $S/distill.py > "$R/logs/self-rows.log" 2>&1
 log "self rows rc=$?"
 DATA=self NL=10 STEPS=600 python3 $S/distill.py > "$R/logs/distill-l10-self.log" 2>&1 &
 DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$R/logs/distill-l16-self.log" 2>&1 &
 wait; log "distills done") &
D=$!
python3 $S/distill.py > "$R/logs/distill-l4-kd.log" 2>&1
log "l4-kd rc=$?"
wait $E; log "eagle rc=$?"
export DSL_GPU_PROMPTS=.gpu-bundles/prompts DSL_GPU_PARALLEL=10 DSL_GPU_RESULTS=$R/gpu-raw
(timeout 430 python3 -m pytest -q -rfEs -p no:cacheprovider tests/gpu \
   > "$R/logs/gpu-suite.log" 2>&1; log "gpu suite rc=$?") &
G=$!
wait $D
best=$(python3 - <<'PY'
import json, pathlib
m = pathlib.Path("/tmp/gpuhost/models")
acc = {n: json.loads((m / n / "distill.json").read_text())["first_position_acceptance"]["after"]
       for n in ("smollm2-l10-self", "smollm2-l16-self") if (m / n / "distill.json").exists()}
print(max(acc, key=acc.get) if acc else "")
PY
)
log "drafters: $(for n in l10 l16; do printf '%s ' "$n=$(python3 -c "import json;print(json.load(open('$M/smollm2-$n-self/distill.json'))['first_position_acceptance'])" 2>/dev/null)"; done); best=$best"
echo "$best" > "$R/draft.txt"
if [ -n "$best" ]; then
  DRAFT=$best python3 $S/build_scaled.py > "$R/logs/build_scaled.log" 2>&1
  log "build_scaled rc=$?"
fi
PROXIES=tp DRAFT=smollm2-l4-kd python3 $S/build_scaled.py > "$R/logs/build_scaled_tp.log" 2>&1
log "build_scaled tp rc=$?"
wait $G
for d in "$M"/*/; do
  n=$(basename "$d"); mkdir -p "$R/models/$n"
  cp "$d"/{distill.json,scaled.json,config.json} "$R/models/$n/" 2>/dev/null
done
tar czf "$OUT/a.tgz" -C "$R" logs models gpu-raw draft.txt 2>/dev/null
log "done"
