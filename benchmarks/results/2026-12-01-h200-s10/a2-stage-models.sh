#!/usr/bin/env bash
# Session 10, command A (after b1-b3 were staged): stage b4, check, then only what the
# compute-bound A/B needs: SmolLM2-135M + the 16-layer draft, the draft distilled on the
# target's own greedy continuations (900 steps, as session 9's 0.608), and the cost-scaled
# proxies of both. Session 9's command A (a-models-tests.sh) also ran the GPU suite; its
# results are in tests/gpu/results/2026-12-01-h200-s9. $OUT/a.tgz.
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
R=/tmp/s9; mkdir -p "$R/logs" "$R/models"
S=scripts/gpu-host M=/tmp/gpuhost/models
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/logs/a.log"; }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv > "$R/logs/host.txt"
DRAFT_LAYERS=16 python3 $S/build_models.py > "$R/logs/build_models.log" 2>&1
log "build_models rc=$?"
DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$R/logs/distill-l16-self.log" 2>&1
log "l16-self rc=$?"
log "l16-self: $(python3 -c "import json;print(json.load(open('$M/smollm2-l16-self/distill.json'))['first_position_acceptance'])")"
echo smollm2-l16-self > "$R/draft.txt"
DRAFT=smollm2-l16-self timeout 150 python3 $S/build_scaled.py > "$R/logs/build_scaled.log" 2>&1
log "build_scaled rc=$?"
for d in "$M"/*/; do
  n=$(basename "$d"); mkdir -p "$R/models/$n"
  cp "$d"/{distill.json,scaled.json,config.json} "$R/models/$n/" 2>/dev/null
done
tar czf "$OUT/a.tgz" -C "$R" logs models draft.txt 2>/dev/null
log "done"
