#!/usr/bin/env bash
# Session 35 (2026-12-05), command A on one H200, after b1-b8 and the rows were
# staged one call each (scripts/pack-offline.sh --all --cap 24MB). Carry
# .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip/pr2-alone.tgz. Code: main's 32-patch stack (vllm dsl, the
# bundle packed from it; git_describe in the staged host.txt).
# No proxies A/B this session: the verdict's points exist (session 31: c = 8-64,
# session 34: c = 1-4). What runs, and why:
#   1. b9, check, host.txt (stage-last.sh);
#   2. the whole GPU suite on the final series (issue 32: session 34's two
#      stale tests, fixed since, have not run on a GPU): the engine groups
#      beside the proxies' build (beside-proxies.sh; PR 2 alone needs the
#      proxies), then the kernel files and the in-tree CUDA tests; the small
#      pair's draft (distill.py DATA=self NL=4, the kept rows) beside them;
#      go2 once all have ended and the GPU is quiet;
#   3. then, one after the other, alone on the GPU:
#      pr2    PR 2 of the stack alone against target-only (issue 32;
#             ../2026-12-04-h200-pr2-alone/start.sh, ARMS=target,sd2);
#      s35prof where a DSL step's host time goes on the host-bound small pair
#             (issue 29, Next 0b: session 34's small pair ran DSL's engine step
#             at 2.76 ms with 1.24 draft forwards a step against SD K=2's 2.51
#             ms with 1.97): profile_step.py --arms sd2,dsl2,dsl4 at c = 1
#             (timed run, cProfile, torch profiler launches per step);
#      s35s   the small pair's A/B at c = 1 and 8 with rounds ~5x longer than
#             session 34's (whose rounds lasted 0.7-2 s and spread 28-39%):
#             arms sd2,sd3,sd4,target,dsl4 fixed in advance, best K read off
#             the same run, --repeats-at 1:2,8:6, 1 warm + 8 ABBA rounds.
# Returns after ~285 s. Collected by collect.sh (this folder).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s35; mkdir -p "$R"
root=/tmp/gpuhost
root=$(GPU_HOST_ROOT=$root bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source $root/env.sh
echo "$root" > "$R/suite-root.txt"
SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
export R
setsid bash -c 'while [[ ! -f "$R/suite.rc" ]]; do sleep 1; done
  timeout 240 python3 -m pytest -q -rfEs -p no:cacheprovider tests/gpu/test_conditional_graph.py \
    tests/gpu/test_confidence_kernel.py tests/gpu/test_dsl_kernels.py tests/gpu/test_near_ties.py \
    > "$R/kernels.log" 2>&1; echo $? > "$R/kernels.rc"
  (cd .gpu-bundles/intree && timeout 240 python3 -m pytest -q -rfEs -p no:cacheprovider \
    --rootdir . --noconftest tests) > "$R/intree.log" 2>&1; echo $? > "$R/intree.rc"' \
  < /dev/null > /dev/null 2>&1 &
M=$root/models
export M
setsid bash -c 'end=$(( $(date +%s) + 300 ))
  while [[ ! -f "$M/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do sleep 1; done
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"
  cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json" 2>/dev/null
  while [[ ! -f "$R/go" || ! -f "$R/intree.rc" ]]; do sleep 1; done
  for _ in $(seq 60); do
    [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) ]] && break
    sleep 1
  done
  touch "$R/go2"' < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
next=$R/go2
if AB_WAIT_FILE=$R/go2 AB_WAIT_S=900 ARMS=target,sd2 \
    bash benchmarks/results/2026-12-04-h200-pr2-alone/start.sh > "$R/pr2-start.log" 2>&1; then
  next=/tmp/ab/pr2/rc
else
  cat "$R/pr2-start.log"; echo "pr2 not queued; the profile waits for go2"
fi
GPU_HOST_ROOT=$root AB_SCRIPT=profile_step.py AB_TIMEOUT_S=500 AB_WAIT_FILE=$next AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s35prof -- --models /tmp/gpuhost/models \
  --target smollm2-135m --draft smollm2-l4-self --prompts .gpu-bundles/prompts \
  --out prof --arms sd2,dsl2,dsl4 --concurrency 1 --engine "$E" \
  > "$R/ab-start-prof.log" 2>&1 || cat "$R/ab-start-prof.log"
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=/tmp/ab/s35prof/rc AB_WAIT_S=2000 \
  bash scripts/gpu-host/ab-start.sh s35s -- --models /tmp/gpuhost/models \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4' \
  --rounds 8 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start-s.log" 2>&1 || cat "$R/ab-start-s.log"
while (( $(date +%s) < T0 + 285 )) && [[ ! -f "$R/go2" ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s35
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); small: $(cat "$R/small.rc" 2>/dev/null || echo running); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
