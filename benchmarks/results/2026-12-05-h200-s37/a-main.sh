#!/usr/bin/env bash
# Session 37 (2026-12-05), command A on one H200, after b1-b8 and the rows were
# staged one call each (scripts/pack-offline.sh --all --cap 24MB; the rows copied
# into /tmp/gpuhost/models). Carry .gpu-bundles/b9, .gpu-bundles/prompts and
# .gpu-bundles/intree. Code: the bundle is main's 33-patch stack, vllm dsl
# a3ff290 (its MANIFEST's git_head), with 0018: the stop rule prices only the
# draft-step GPU time the host does not hide. (Session 36 planned this run on
# the 32-patch bundle with 0018's files laid over it; no device came.) Starts
# everything in the background and returns in ~30 s; collect.sh (this folder)
# brings the results back, one call after another on the warm host:
#   1. b9, check, host.txt (stage-last.sh);
#   2. the whole GPU suite on the final series (issue 32: session 34's two
#      stale tests, fixed since, have not run on a GPU): the engine groups
#      (suite.sh; with the new host-time test), then the kernel files and
#      the in-tree CUDA tests (after-suite.sh; the rule's with host times);
#      the small pair's draft (distill.py DATA=self NL=4, the kept rows)
#      beside them; go2 (go-when-quiet.sh) once all have ended and the GPU
#      is quiet;
#   3. then, one after the other, alone on the GPU (issue 29):
#      s37s    the small pair's A/B at c = 1 and 8 with rounds ~5x longer than
#              session 34's (0.7-2 s rounds, 28-39% spread): arms
#              sd2,sd3,sd4,target,dsl4,dsl4+gpu fixed in advance,
#              best K read off the same run, --repeats-at 1:2,8:6, 1 warm + 6
#              ABBA rounds. Session 34's engine steps show the small pair
#              host-bound (SD K=2, 3, 4 within 0.16 ms of each other while a
#              draft step costs 0.18 ms of GPU), yet the GPU-priced rule
#              drafted 1.0-1.2 steps. dsl4: the series' rule (the host's time
#              measured, hidden draft steps free); dsl4+gpu: the same engine
#              with the host clock off (ab_hooks.HostClockOff: the rule of the
#              series before 0018).
#      s37prof if device time is left: where a DSL step's host time goes at
#              the same K (session 34, c = 1: DSL K=4's engine step 2.76 ms
#              against SD K=4's 2.67; session 27 profiled K=2, where DSL's
#              step was the shorter): profile_step.py --arms dsl4,sd4, c = 1.
set -uo pipefail
R=/tmp/s37; mkdir -p "$R/suite-out"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
echo "$root" > "$R/root.txt"
source $root/env.sh
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
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=$R/go2 AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s37s -- --models $M \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4,dsl4+gpu' \
  --arm-options '{"gpu": {"engine": {"worker_extension_cls": "ab_hooks.HostClockOff"}, "rpc": "dsl_price_gpu_time_only"}}' \
  --rounds 6 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start-s.log" 2>&1 || cat "$R/ab-start-s.log"
GPU_HOST_ROOT=$root AB_SCRIPT=profile_step.py AB_TIMEOUT_S=400 AB_WAIT_FILE=/tmp/ab/s37s/rc AB_WAIT_S=2500 \
  bash scripts/gpu-host/ab-start.sh s37prof -- --models $M \
  --target smollm2-135m --draft smollm2-l4-self --prompts .gpu-bundles/prompts \
  --out prof --arms dsl4,sd4 --concurrency 1 --engine "$E" \
  > "$R/ab-start-prof.log" 2>&1 || cat "$R/ab-start-prof.log"
sleep 20
tar czf "$OUT/a.tgz" -C /tmp s37
echo "started: suite, small draft, s37s (after go2), s37prof (after s37s)"
