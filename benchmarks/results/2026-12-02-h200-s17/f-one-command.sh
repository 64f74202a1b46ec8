#!/usr/bin/env bash
# Session 17 (2026-12-02), command F: everything in one foreground command, since two
# hosts went back right after commands that left runs in their own process sessions
# (D's queued A/Bs and E's proxies were lost with them). After b1-b5 and the prompts were
# staged: the target + 16-layer truncation, the cost-scaled proxies (distill.py DATA=self
# NL=16 STEPS=900, build_scaled.py), the self-distillation rows copied to $OUT (for later
# sessions), then async2.sh's question cut to what is left of the 600 s: dsl4 against sd3
# at c = 32, 64, 2 rounds, in the foreground, writing into $OUT as it goes.
# Code: the 48-patch series + both wip patches (gpu-wip).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b5 > /dev/null && bash scripts/install-offline.sh check > /dev/null || exit 1
source /tmp/gpuhost/env.sh
M=/tmp/gpuhost/models S=scripts/gpu-host
T0=$(date +%s)
st() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/f.log"; }
DRAFT_LAYERS=16 python3 $S/build_models.py > "$OUT/build_models.log" 2>&1; st "build_models rc=$?"
DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$OUT/distill.log" 2>&1; st "distill rc=$?"
f=$(ls $M/self-rows-*.pt | head -1); sha256sum "$f" > "$OUT/self-rows.sha256"
split -b 15M "$f" "$OUT/self-rows.part-"; st "rows $(du -b "$f" | cut -f1) bytes"
DRAFT=smollm2-l16-self python3 $S/build_scaled.py > "$OUT/build_scaled.log" 2>&1; st "build_scaled rc=$?"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
mkdir -p /tmp/ab2 && cp -r benchmarks tests .gpu-bundles/prompts /tmp/ab2/ 2>/dev/null
PYTHONUNBUFFERED=1 timeout $(( 590 - ($(date +%s) - T0) )) python3 benchmarks/abab.py \
  --models $M --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" \
  --out "$OUT/abab.json" --arms dsl4,sd3 --dsl-starts-alone --concurrency 32,64 --rounds 2 \
  > "$OUT/abab.log" 2>&1
st "abab rc=$?"
grep -h "prices each draft step\|TPOT\|engine step median" "$OUT/abab.log" | tail -20
