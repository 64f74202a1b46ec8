#!/usr/bin/env bash
# Written in session 39 for the next session's first long command (issue 29,
# Next 0b): the GPU checks and the A/B of patches-wip/dsl-graph-launches
# (DSL's draft loop setup and drafted-count record replayed from CUDA graphs
# captured per K, instead of two Triton launches from Python every proposal;
# session 39 timed those at 101-108 and 79-88 us a step on the small pair,
# README here).
#
# Before, here:
#   git -C vllm branch -f wip-graph-launches dsl && git -C vllm checkout -q wip-graph-launches \
#     && git -C vllm am -q -3 "$PWD"/patches-wip/dsl-graph-launches/0*.patch
#   scripts/gpu-host/pack-intree.sh            # the wip's CUDA tests with the series'
#   mkdir -p .gpu-bundles/wip && git -C vllm archive wip-graph-launches $(git -C vllm diff \
#     --name-only --diff-filter=AM dsl wip-graph-launches -- vllm) | gzip > .gpu-bundles/wip/dsl-graph-launches.tgz
#   git -C vllm checkout -q dsl
#   scripts/pack-offline.sh --all --cap 24MB  # only if the series changed (b9's MANIFEST git_head)
#   bash scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts .gpu-bundles/intree .gpu-bundles/wip
# Device: b1-b8 and the rows one call each (docs/gpu-host.md), then this with
# carry .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip (returns in ~30 s), then next-collect.sh (this folder),
# each call issued the moment the one before answers, until it says s40b ended.
#
# What runs, all on the wip's root (the bundle's series with the wip's files
# laid over it, stage-last.sh):
#   1. the GPU suite (engine groups, then the kernel files and the in-tree CUDA
#      tests, the wip's nine new graph tests among them), with the small
#      pair's 600-step draft distilled beside it; then, alone on the GPU:
#   2. the A/B s40b on the small pair, c = 1 and 8, 1 warm + 6 ABBA rounds,
#      engines pinned to two CPUs, arms fixed in advance:
#        sd4+t        SD K=4 (session 39: DSL's tokens a step are SD K=4's)
#        dsl4+t       DSL, begin and record replayed from their graphs (the wip)
#        dsl4+launch  the same engine with the graphs freed
#                     (ab_hooks.GraphLaunchesOff): both launch as in the series
#        dsl4+keep    the wip's DSL with the served width keeping its width when it
#                     forgets its evidence (session 38's open question at 8; its
#                     s39h arm was lost with the host)
#      all four under ab_hooks.HostTimer: begin's and record's µs a step with
#      and without the graphs, and each arm's step.
# Device time ~19 min: staging ~3, suite ~7 (session 37: 353 + 29 + 32 s),
# start-ups ~3, rounds ~6.
#   read: python3 benchmarks/host_timer_table.py abab.json.gz;
#         python3 benchmarks/results/2026-12-05-h200-s38/steps.py abab.json.gz
#         --pair dsl4+t dsl4+launch; verdict.py --label t --dsl-arm dsl4.
set -uo pipefail
R=/tmp/s40; mkdir -p "$R/suite-out"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9 \
  .gpu-bundles/wip/dsl-graph-launches.tgz) || exit 1
echo "$root" > "$R/root.txt"
source "$root/env.sh"
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
export R M root
setsid bash -c 'OUT=$R/suite-out GPU_HOST_ROOT=$root DSL_GPU_PARALLEL=15 SUITE_DRAFT_LAYERS=4 \
    SUITE_TIMEOUT_S=420 PYTEST_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores)" \
    bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1; echo $? > "$R/suite.rc"
  pkill -f "tests/gpu/engine_worke[r]"; sleep 2; pkill -9 -f "tests/gpu/engine_worke[r]"
  bash scripts/gpu-host/after-suite.sh "$R" 150; touch "$R/after.done"' \
  < /dev/null > /dev/null 2>&1 &
setsid bash -c 'end=$(( $(date +%s) + 300 ))
  while [[ ! -f "$M/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do sleep 1; done
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"
  cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json" 2>/dev/null
  ' < /dev/null > /dev/null 2>&1 &
setsid bash scripts/gpu-host/go-when-quiet.sh "$R/go2" --after "$R/after.done" --after "$R/small.rc" \
  < /dev/null > /dev/null 2>&1 &
CPUS=$(python3 -c 'import os; a = sorted(os.sched_getaffinity(0)); print(f"{a[-2]},{a[-1]}")')
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"},
    "launch": {"engine": {"worker_extension_cls": "ab_hooks.GraphLaunchesOffTimer"},
               "rpc": ["dsl_launch_every_step", "host_timer_on"], "probe": "host_timer_read"},
    "keep": {"engine": {"worker_extension_cls": "ab_hooks.ServedKeepsWidthTimer"},
             "rpc": ["dsl_served_keeps_width", "host_timer_on"], "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/go2 AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s40b -- --models "$M" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'sd4+t,dsl4+t,dsl4+launch,dsl4+keep' --arm-options "$O" \
  --rounds 6 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" -C /tmp s40 --exclude=s40/suite-out
echo "started: suite + small draft, then s40b (after $R/go2)"
