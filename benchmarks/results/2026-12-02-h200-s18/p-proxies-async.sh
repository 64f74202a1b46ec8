#!/usr/bin/env bash
# Session 18 (2026-12-02), command P: after b1-b4 (b3 with the prompts, the carried
# distillation rows and the draft width wip's files) were staged, one foreground
# command: b5, the cost-scaled proxies (the target + 16-layer truncation, distill.py
# DATA=self NL=16 STEPS=900 on session 17's rows, build_scaled.py), then the A/B of
# the series' default DSL (0040's rule with 0050's first-pass price) against SD K = 3
# and 2 and target-only, async scheduling, c = 64, 32, 1, 8 in that order (the
# large-batch question first), 3 ABBA rounds, until the 600 s run out. abab.py writes
# its JSON after each point, so whatever finished comes back.
# Arms fixed in advance: dsl4 (base), sd3, sd2, target. ShareGPT test split, prefix
# caching off, greedy, 256 tokens, FULL CUDA graphs, 6 GiB KV per engine, the DSL
# engine started alone (its start-up cost table on an idle GPU).
# Code: the 50-patch series, vllm branch dsl at 7e8874c2 (bundles packed 19:53).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b5 > "$OUT/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$OUT/stage-b5.log" 2>&1 || { tail "$OUT/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
M=/tmp/gpuhost/models S=scripts/gpu-host
T0=$(date +%s)
st() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/p.log"; }
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv > "$OUT/host.txt" 2>&1
mkdir -p $M && cp .gpu-bundles/rows/self-rows-*.pt $M/ && st "rows copied"
DRAFT_LAYERS=16 python3 $S/build_models.py > "$OUT/build_models.log" 2>&1; st "build_models rc=$?"
DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$OUT/distill.log" 2>&1; st "distill rc=$?"
DRAFT=smollm2-l16-self python3 $S/build_scaled.py > "$OUT/build_scaled.log" 2>&1; st "build_scaled rc=$?"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
PYTHONUNBUFFERED=1 timeout $(( 585 - ($(date +%s) - T0) )) python3 benchmarks/abab.py \
  --models $M --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" \
  --out "$OUT/abab.json" --arms dsl4,sd3,sd2,target --dsl-starts-alone \
  --concurrency 64,32,1,8 --rounds 3 > "$OUT/abab.log" 2>&1
st "abab rc=$?"
gzip -k "$OUT/abab.log"
grep -h "prices each draft step\|rest of a step\|TPOT\|engine step median" "$OUT/abab.log" | tail -30
