#!/usr/bin/env bash
# Session 18 (2026-12-02), command R, on a fresh host after b1-b4 (b3 with the prompts
# and session 17's distillation rows): b5, the cost-scaled proxies, then an A/B of the
# draft model's first pass on mixed batches (steps that carry prompt tokens): PIECEWISE
# graphs (vllm branch wip-pw-first-pass, patches-wip/dsl-pw-first-pass) against the
# eager pass as before (the same engine with benchmarks/ab_hooks.py's
# FirstPassEagerToggle). Question: is the eager first pass what makes a speculative
# step at 32-64 requests cost 2-3x its median in 25-45% of steps (commands P, Q)?
# Arms fixed in advance: sd3 (base, PIECEWISE first pass), sd3+eager (eager first pass
# on mixed batches); dsl4 dropped before the run for device time (509 s left). Async scheduling, c = 64, 32, 3 ABBA rounds,
# ShareGPT test split, prefix caching off, greedy, 256 tokens, 6 GiB KV per engine.
# Code: the 50-patch series + wip-pw-first-pass (bundles packed at that commit).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b5 > "$OUT/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$OUT/stage-b5.log" 2>&1 || { tail "$OUT/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
M=/tmp/gpuhost/models S=scripts/gpu-host
T0=$(date +%s)
st() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/r.log"; }
mkdir -p $M && cp .gpu-bundles/rows/self-rows-*.pt $M/ && st "rows copied"
DRAFT_LAYERS=16 python3 $S/build_models.py > "$OUT/build_models.log" 2>&1; st "build_models rc=$?"
DATA=self NL=16 STEPS=900 python3 $S/distill.py > "$OUT/distill.log" 2>&1; st "distill rc=$?"
DRAFT=smollm2-l16-self python3 $S/build_scaled.py > "$OUT/build_scaled.log" 2>&1; st "build_scaled rc=$?"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
O='{"eager": {"engine": {"worker_extension_cls": "ab_hooks.FirstPassEagerToggle"}, "rpc": "draft_first_pass_eager_on_mixed_batches"}}'
PYTHONUNBUFFERED=1 timeout $(( ${R_BUDGET_S:-540} - ($(date +%s) - T0) )) python3 benchmarks/abab.py \
  --models $M --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" \
  --out "$OUT/abab.json" --arms sd3,sd3+eager --arm-options "$O" \
  --concurrency 64,32 --rounds 3 > "$OUT/abab.log" 2>&1
st "abab rc=$?"
grep -h "first-pass\|PIECEWISE\|Traceback\|Error" "$OUT/abab.log" | sort | uniq -c | head -20
grep -h "TPOT\|engine step median\|spread" "$OUT/abab.log" | tail -20
