#!/usr/bin/env bash
# Session 58's first long command when too little device time is left for the
# proxies' A/B (the kept 16-layer draft was not on this machine, so the chain
# would distil it, ~230 s, before three engines start, ~450 s): the GPU suite on
# the 48-patch series beside the small pair's draft (scripts/gpu-host/
# beside-small.sh), then the small pair's A/B s58s queued on /tmp/s58/go.
# Run from the checkout's root with .gpu-bundles/b11 and .gpu-bundles/prompts
# carried; collect with PLAN_DIR=/tmp/s58 PLAN_RUNS=s58s
# bash benchmarks/results/2026-12-06-s45-plan/collect.sh.
# Arms fixed here: SD K=3, SD K=4 (session 42's base), DSL's default config
# (cap 4), each with host timers; c = 1 then 8; 1 warm + 12 rounds.
set -euo pipefail
plan=/tmp/s58 here=scripts/gpu-host
mkdir -p "$plan"
root=$(bash "$here/stage-last.sh" "$plan" .gpu-bundles/b11)
# shellcheck source=/dev/null
source "$root/env.sh"
GPU_HOST_ROOT=$root SUITE_ROOT=$root bash "$here/beside-small.sh" "$plan"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
T='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=$plan/go AB_WAIT_S=600 \
  bash "$here/ab-start.sh" s58s -- --models "$root/models" --target smollm2-135m \
  --draft smollm2-l4-self --prompts .gpu-bundles/prompts --concurrency 1,8 \
  --max-tokens 256 --waves 1 --base-requests 8 --rotate-prompts --engine "$E" \
  --out abab.json --arms sd3+t,sd4+t,dsl4+t --arm-options "$T" --rounds 12 \
  --warm-rounds 1 --dsl-starts-alone > "$plan/ab-start-s58s.log" 2>&1 \
  || { cat "$plan/ab-start-s58s.log" >&2; exit 1; }
sleep 5
tar czf "$OUT/a.tgz" -C /tmp s58
echo "started: the GPU suite beside the small pair's draft; queued on $plan/go: s58s"
