#!/usr/bin/env bash
# Written in session 37 for the next session's first long command (issue 29):
# the small pair's A/B of 0018, alone on the GPU. The suite passed on this
# series in session 37 (tests/gpu/results/2026-12-05-h100-s37), so it does not
# run again unless the GPU code changes. Before: b1-b8 and the rows staged one
# call each (docs/gpu-host.md). Carry .gpu-bundles/b9 and .gpu-bundles/prompts.
# Code: the bundle's vllm (check its MANIFEST's git_head is the series').
# Starts everything in the background and returns in ~40 s; then, each issued
# the moment the one before answers: `bash scripts/gpu-host/ab-collect.sh
# s38s --wait 560` until it says the run has ended.
#
# Timeline measured in session 37: build_models ~43 s, the draft's 600 steps
# ~134 s, and on a fresh host ~60 s per engine start-up (an empty compile
# cache: sd2 took 63 s, 23 s of it compilation). The four fixed arms start
# together, each DSL arm alone after them (--dsl-starts-alone), so ~3.5 min
# of start-ups; then 1 warm + 6 ABBA rounds at c = 1 (8 requests a round) and
# c = 8 (48), ~1 min a round for the six arms: ~10 min in all after the draft.
#   arms  sd2,sd3,sd4,target (best K read off the same run), dsl4+clock (the
#         series' rule: hidden draft steps free), dsl4+gpu (the same engine
#         with the host clock off: the rule before 0018); both DSL arms read
#         the host time the rule was handed after each round (probe), so the
#         A/B shows the rule's input beside the steps it should explain.
#   verdict: python3 benchmarks/verdict.py --dsl-arm dsl4+clock --out
#         verdict.json small=abab.json.gz
set -uo pipefail
R=/tmp/s38; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source $root/env.sh
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
export R M
setsid bash -c 'DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"; cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json"' \
  < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"clock": {"engine": {"worker_extension_cls": "ab_hooks.HostStepProbe"}, "probe": "dsl_host_step_ms"},
    "gpu": {"engine": {"worker_extension_cls": "ab_hooks.HostClockOff"}, "rpc": "dsl_price_gpu_time_only", "probe": "dsl_host_step_ms"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/small.rc AB_WAIT_S=600 \
  bash scripts/gpu-host/ab-start.sh s38s -- --models $M \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'sd2,sd3,sd4,target,dsl4+clock,dsl4+gpu' --arm-options "$O" \
  --rounds 6 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" -C /tmp s38
echo "started: models, small draft, s38s (after small.rc)"
