#!/usr/bin/env bash
# Written in session 38 for the next session's first long command (issue 29,
# Next 0b): where DSL's fixed host cost at one request goes, and whether the
# host clock's H is host work. Session 38 measured, on the small pair, a DSL
# step 0.44-0.47 ms longer than SD's at the same tokens a step (README here),
# every engine core at ~100% CPU in every arm, and the clock handing the rule
# H of 3-5 ms against 3.9-4.4 ms steps. ab_hooks.HostTimer times, per step
# and without a profiler, the stepping thread's CPU and wall time from one
# step to the next (H for every arm, not just DSL), the worker's calls that
# only DSL makes (begin, record, gather, clock), the drafter's propose, and
# the engine's wait for each step's output (CPU there = a spinning wait).
# A fifth arm, dsl4+keep (ab_hooks.ServedKeepsWidthTimer), is DSL with the
# served width keeping a batch size's width when it forgets its evidence: in
# session 38 the bin of 8 forgot 16 and 14 times in the two runs, started
# again at the cap each time and ran there nearly throughout, where SD K=2 was
# 5.6% cheaper a token. Its ratio to dsl4+t at c = 8 (steps.py
# and abab's per-round ratios; both against sd2+t) asks whether that pays.
# The engines are pinned to two CPUs once up (abab.py --pin-engines): in
# session 38 each arm's step time moved 10-20% between rounds while its
# median held; a pinned run says whether that noise is where the engine lands
# (its round-to-round spread against session 38's 10-18%).
# Before: pack (scripts/pack-offline.sh --all --cap 24MB: session 38's bundle
# a3ff290 predates 0018's reworded message), then b1-b8 staged one call each
# and the rows (docs/gpu-host.md). Carry
# .gpu-bundles/b9 and .gpu-bundles/prompts. Code: the bundle's vllm (check
# its MANIFEST's git_head is the series'). Returns in ~40 s; then, each
# issued the moment the one before answers: `bash
# scripts/gpu-host/ab-collect.sh s39h --wait 560` until it says it ended.
# Timeline (session 38's measured one): models and draft ~3 min, start-ups
# ~3 min (three together, each DSL arm alone), then 1 warm + 6 rounds of five
# arms at c = 1 and 8, ~6 min (session 38: six arms in ~7 min).
#   read: python3 benchmarks/verdict.py --label t --dsl-arm dsl4 --out
#         verdict.json small=abab.json.gz (the TPOT rows, as session 38's);
#         python3 benchmarks/results/2026-12-05-h200-s38/steps.py abab.json.gz
#         and python3 benchmarks/host_timer_table.py abab.json.gz (the
#         timer's answers, medians over rounds, per arm and c).
set -uo pipefail
R=/tmp/s39; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source "$root/env.sh"
GPU_HOST_ROOT=$root SMALL_DIR=$R/small bash scripts/gpu-host/small-start.sh || exit 1
# The two highest CPUs this process may use (2-3 may not be in a container's set).
CPUS=$(python3 -c 'import os; a = sorted(os.sched_getaffinity(0)); print(f"{a[-2]},{a[-1]}")')
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"},
    "keep": {"engine": {"worker_extension_cls": "ab_hooks.ServedKeepsWidthTimer"},
             "rpc": ["dsl_served_keeps_width", "host_timer_on"], "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/small/done AB_WAIT_S=600 \
  bash scripts/gpu-host/ab-start.sh s39h -- --models "$root/models" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'sd2+t,sd4+t,target+t,dsl4+t,dsl4+keep' --arm-options "$O" \
  --rounds 6 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" -C /tmp s39
echo "started: the small pair, then s39h (after $R/small/done)"
