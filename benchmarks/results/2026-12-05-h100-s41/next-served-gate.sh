#!/usr/bin/env bash
# Written in session 41 for the next session's first long command (issue 29),
# in the pattern of session 40's next-snapshot-gc.sh:
#   1. the GPU suite on patches-wip/dsl-served-width-step-gate (the served
#      width narrows only where its steps are shorter; session 41's DSL lost
#      2.6% of its tokens a step to a move on token noise, README here);
#   2. the A/B s42 on the small pair: dsl4+t (with the check) against
#      dsl4+tokens (ab_hooks.ServedNarrowsOnTokensTimer: the series' rule),
#      beside sd4+t (the best fixed K in s41 at both c) and target+t. What to
#      read first is what the host's speed does not move: the draft tokens
#      requested a draft (abab.json's spec: num_draft_tokens_requested /
#      num_drafts), tokens a step (steps.py), and the engines' move lines
#      ("drafts for up to" in abab.log); TPOT only as far as the noise allows
#      (13-16% in s41). In s41's simulation only a minority of engine lives
#      narrowed without the check, so dsl4+tokens may well not narrow here.
#
# Before, here (done at the end of session 41: b1-b9 at f42a4b3, the wip
# tarball and the intree pack exist; redo only if vllm dsl or the wip changed):
#   scripts/pack-offline.sh --all --cap 24MB   # b1-b9 at vllm dsl's head (f42a4b3
#                                              # when written; MANIFEST git_head)
#   git -C vllm branch -f wip-served-width-step-gate dsl && git -C vllm checkout -q wip-served-width-step-gate \
#     && git -C vllm am -q -3 --keep-non-patch "$PWD"/patches-wip/dsl-served-width-step-gate/0*.patch
#   scripts/gpu-host/pack-intree.sh            # the wip's tests with the series'
#   mkdir -p .gpu-bundles/wip && rm -f .gpu-bundles/wip/*.tgz && git -C vllm archive wip-served-width-step-gate \
#     $(git -C vllm diff --name-only --diff-filter=AM dsl wip-served-width-step-gate -- vllm) \
#     | gzip > .gpu-bundles/wip/dsl-served-width-step-gate.tgz
#   git -C vllm checkout -q dsl
#   bash scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts .gpu-bundles/intree .gpu-bundles/wip
# Device: b1-b8 and the rows one call each (docs/gpu-host.md), then this with
# carry .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip (returns in ~60 s), then
#   bash benchmarks/results/2026-12-05-h100-s41/next-collect.sh
# each call issued the moment the one before answers, until it says s42 ended
# (the host goes back after 30 s idle).
#
# The suite and the draft start through scripts/gpu-host/beside-small.sh
# (session 41). The suite's limit is 540 s: s41's first run stopped at 420 s
# with 4 passed on a fresh H100 with the draft's distillation beside it (its
# models took 172 s), the second, alone on the warm host, took 301 s (141 s
# after its models); which of the two made the difference is not known.
# Engines pinned to two CPUs of two different cores, the client kept off
# them (s41: noise 13-16%, against 19-29% in s40 without). Device time: s41
# spent 1,694 of 1,800 s on this plan (staging ~3 min, the suite and
# after-suite ~9, start-ups ~4, rounds ~10, the collect calls' waits).
# If the tree grew since session 41, check the call size before the first
# call (1.9 MB were left): repack with a lower --cap if it no longer fits.
#   read: python3 benchmarks/results/2026-12-05-h200-s38/steps.py abab.json.gz;
#         python3 benchmarks/host_timer_table.py abab.json.gz and --pair dsl4+tokens dsl4+t;
#         zgrep -a "served_width.py" abab.log.gz;
#         python3 benchmarks/verdict.py --label t --dsl-arm dsl4 --out verdict.json small=abab.json.gz.
set -uo pipefail
R=/tmp/s42; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9 \
  .gpu-bundles/wip/dsl-served-width-step-gate.tgz) || exit 1
echo "$root" > "$R/root.txt"
source "$root/env.sh"
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
# The suite (engine groups, then the kernel files and in-tree tests) on the
# wip's root, the small draft distilled beside it; $R/go once all have ended.
SUITE_ROOT=$root SUITE_TIMEOUT_S=540 SMALL_DIR=$R/small \
  bash scripts/gpu-host/beside-small.sh "$R" || exit 1
# Two CPUs of two different cores for the engines, every CPU of the other
# cores for the client (session 40's picker, now scripts/gpu-host/engine_cpus.py).
read -r CPUS OTHERS < <(python3 scripts/gpu-host/engine_cpus.py --cores 2)
echo "engines pinned to CPUs $CPUS; the client to $OTHERS" >> "$R/host.txt"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"},
    "tokens": {"engine": {"worker_extension_cls": "ab_hooks.ServedNarrowsOnTokensTimer"}, "rpc": ["dsl_served_narrows_on_tokens", "host_timer_on"], "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/go AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s42 -- --models "$M" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'target+t,sd4+t,dsl4+t,dsl4+tokens' --arm-options "$O" \
  --rounds 7 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" ${OTHERS:+--pin-client "$OTHERS"} \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" --exclude=s42/suite-out -C /tmp s42
echo "started: suite + small draft, then s42 (after $R/go); engines on $CPUS, client on $OTHERS"
