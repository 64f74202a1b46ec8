#!/usr/bin/env bash
# Written in session 42 (no device lent) for the next session's first long
# command (issue 29), in the pattern of session 41's next-served-gate.sh:
#   1. the GPU suite on vllm dsl f42a4b3 + three CPU-only wips (vllm branch
#      wip-s43): patches-wip/dsl-served-width-step-gate (the served width
#      narrows only where its steps are shorter), dsl-drafted-counts-on-host
#      (a hidden draft step always runs; where no row can stop early the
#      runner skips the drafted counts' record and snapshot) and
#      dsl-begin-in-first-pass (the loop's set-up inside the first pass's
#      graph); the engine groups include test_drafts_known_on_the_host_are_
#      what_the_device_drafted, the in-tree CUDA tests the kernel's changes
#      and the recorded set-up; beside the small draft's distillation;
#   2. the A/B s43 on the small pair, short segments (one request a segment at
#      c = 1, one group of 8 at c = 8; 26 rounds; prompts rotated by round:
#      benchmarks/results/2026-12-05-cpu-s42-noise-timescale/ predicts a 95%
#      half-width of +-4.0-4.6% at c = 1 and +-4.5-6.0% at c = 8 for the arm
#      next to the base, against +-8-10% with s41's 5 s segments), arms:
#        sd4+t        SD K=4 (best fixed K in s41 at both c), the base;
#        dsl4+t       the wip tree's DSL (all three wips);
#        dsl4+series  the same engine with the three wips turned off
#                     (ab_hooks.SeriesDslTimer): DSL as main's series runs it;
#        target+t     speculation off.
#      Read first what the host's speed does not move: `begin`, `record` and
#      `snapshot` per step in dsl4+t against dsl4+series (host_timer_table.py
#      --pair), the step's busy CPU time, the draft tokens requested a draft
#      and tokens a step (the gate: dsl4+t and dsl4+series against sd4+t);
#      then TPOT, DSL against SD K=4 (1 apart in every round).
#
# Before, here (done at the end of session 42; redo only if vllm dsl or a
# wip changed): b1-b9 at f42a4b3 (session 41's pack, MANIFEST git_head), and
#   git -C vllm branch -f wip-s43 dsl && git -C vllm checkout -q wip-s43 && git -C vllm am -q -3 --keep-non-patch \
#     patches-wip/dsl-served-width-step-gate/0*.patch patches-wip/dsl-drafted-counts-on-host/0*.patch \
#     patches-wip/dsl-begin-in-first-pass/0*.patch
#   rm -rf .gpu-bundles/intree && scripts/gpu-host/pack-intree.sh
#   mkdir -p .gpu-bundles/wip && rm -f .gpu-bundles/wip/*.tgz && git -C vllm archive wip-s43 \
#     $(git -C vllm diff --name-only --diff-filter=AM dsl wip-s43 -- vllm) | gzip > .gpu-bundles/wip/s43-gate-known-begin.tgz
#   git -C vllm checkout -q dsl
#   bash scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts .gpu-bundles/intree .gpu-bundles/wip
#   (session 42: 65.71 of 67.11 MB, 1.40 MB left)
# Device: b1-b8 and the rows one call each (docs/gpu-host.md), then this with
# carry .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip (returns in ~60 s), then
#   R=/tmp/s43 AB=s43 bash benchmarks/results/2026-12-05-h100-s41/next-collect.sh
# each call issued the moment the one before answers, until it says s43 ended
# (the host goes back after 30 s idle).
# Device time planned: staging ~3 min, the suite with the draft beside ~9, the
# four engines' start-up ~4-5, warm and measured rounds ~3 (26 rounds of four
# ~0.7-0.85 s segments at each c, 4 warm rounds), the collect calls' waits.
#   read: python3 benchmarks/results/2026-12-05-h200-s38/steps.py abab.json.gz;
#         python3 benchmarks/host_timer_table.py abab.json.gz and --pair dsl4+series dsl4+t;
#         zgrep -a "served_width.py" abab.log.gz;
#         python3 benchmarks/verdict.py --label t --dsl-arm dsl4 --out verdict.json small=abab.json.gz.
# ROUNDS and WARM_ROUNDS (default 26 and 4) shorten the A/B where the
# session's device time is short.
set -uo pipefail
R=/tmp/s43; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9 \
  .gpu-bundles/wip/s43-gate-known-begin.tgz) || exit 1
echo "$root" > "$R/root.txt"
source "$root/env.sh"
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
# The suite (engine groups, then the kernel files and in-tree tests) on the
# wip's root, the small draft distilled beside it; $R/go once all have ended.
SUITE_ROOT=$root SUITE_TIMEOUT_S=540 SMALL_DIR=$R/small \
  bash scripts/gpu-host/beside-small.sh "$R" || exit 1
read -r CPUS OTHERS < <(python3 scripts/gpu-host/engine_cpus.py --cores 2)
echo "engines pinned to CPUs $CPUS; the client to $OTHERS" >> "$R/host.txt"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"},
    "series": {"engine": {"worker_extension_cls": "ab_hooks.SeriesDslTimer"}, "rpc": ["dsl_as_the_series", "host_timer_on"], "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/go AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s43 -- --models "$M" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 1 \
  --rotate-prompts --engine "$E" --out abab.json \
  --arms 'sd4+t,dsl4+t,dsl4+series,target+t' --arm-options "$O" \
  --rounds "${ROUNDS:-26}" --warm-rounds "${WARM_ROUNDS:-4}" --dsl-starts-alone --pin-engines "$CPUS" ${OTHERS:+--pin-client "$OTHERS"} \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" --exclude=s43/suite-out -C /tmp s43
echo "started: suite + small draft, then s43 (after $R/go); engines on $CPUS, client on $OTHERS"
