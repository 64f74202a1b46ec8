#!/usr/bin/env bash
# Session 45 (2026-12-06, issue 29), command A, written for one H200 and run on
# an H100 with ARMS=sd2,dsl4,dsl8 CONC=8,1,64,16,32,2,4 (README.md), after b1..b10 were
# staged one call each (scripts/pack-offline.sh --all --cap 20MB, packed from
# vllm dsl at 0041: the 41-patch series). Carry .gpu-bundles/b11,
# .gpu-bundles/prompts and .gpu-bundles/intree (64.74 MB as sent,
# scripts/gpu-host/call-size.sh). Session 44's plan
# (../2026-12-06-s44-plan/a-main.sh) with one change: the GPU suite runs
# beside the proxies' build (beside-proxies.sh: the engine groups, then the
# kernel files and the in-tree CUDA tests), since 0041 has not run on a GPU;
# go once both ended and the GPU is quiet. Then the A/B s45p, arms fixed in
# advance (the plan's): sd2, sd3, target, dsl4 (the verdict's arm), dsl8
# (cap 8, the served width choosing), dsl8@1-64:8 (cap 8, every step at 8
# slots); rotated prompts, c = 64, 8, 1, 16, 32, 2, 4 in that order as time
# allows, 1 warm + 8 ABBA rounds, prefix caching off, DSL engines started alone.
# On an H100 (80 GB: three proxies engines, ~24 GB each, at most) the fallback
# is ARMS=sd2,dsl4,dsl8 CONC=64,8,1: not the verdict's card, the cap's question.
# Read: python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz
set -uo pipefail
R=/tmp/s45; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b11}") || exit 1
source "$root/env.sh"
M=$root/models
SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go AB_WAIT_S=900 \
  bash scripts/gpu-host/ab-start.sh s45p -- --models "$M" \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency "${CONC:-64,8,1,16,32,2,4}" \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --rotate-prompts \
  --engine "$E" --out abab.json --arms "${ARMS:-sd2,sd3,target,dsl4,dsl8,dsl8@1-64:8}" \
  --rounds "${ROUNDS:-8}" --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
sleep 30
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s45
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
