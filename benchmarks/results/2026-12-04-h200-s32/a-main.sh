#!/usr/bin/env bash
# Session 32 (written in session 31, not yet run; docs/dsl-at-batch-size.md
# Next 0; changed in session 33). Command A, after b1-b8 and the rows were
# staged one call each (nine chunks of --cap 24MB); it carries .gpu-bundles/b9
# and .gpu-bundles/prompts (and, since session 33, .gpu-bundles/intree and
# .gpu-bundles/wip/pr2-alone.tgz). Code: main's series since session 33, the rebuilt
# 32-patch stack (issue 32; vllm dsl at a5ebd90, the bundle repacked from it),
# whose tree is session 31's 53-patch series' but for gpu_model_runner.py's
# n-gram trim (upstream's inline code; no configuration run here reaches it).
# The suite's engine groups run on it beside the proxies' build (no device time
# of their own): its log is the GPU suite of the rebuilt stack. Returns after
# ~285 s; long work runs in its own process sessions:
#   1. b9, check, host.txt (stage-last.sh);
#   2. the proxies chain (the draft now trained with eager attention: read
#      "draft weights sha256" and "non-deterministic op" in its log) beside
#      the suite's engine groups (beside-proxies.sh, which builds the target
#      and its 4- and 16-layer truncations); and, once the 4-layer truncation
#      is built, the small pair's draft (distill.py DATA=self NL=4, the kept
#      rows) beside both; go2 once all three have ended and the GPU is quiet;
#      once the proxies are built, both drafts' calibration tables (session
#      34), before go2;
#   3. the proxies' verdict A/B s32p (c = 4, 2, 1: the points session 31
#      lost), then the small pair's A/B s32s (c = 1, 8, then 32 if the device
#      time allows), one after the other. Arms fixed in advance for both:
#      sd2, sd3, sd4, target, dsl4 (the default config); SD's best K read off
#      the same run; one wave of 256-token requests a round, 1 warm + 8
#      measured ABBA rounds, the DSL engine started alone.
# Back: a.tgz. Collected by collect.sh. Then, per run:
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=p/abab.json.gz
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict-small.json small=s/abab.json.gz
set -uo pipefail
T0=$(date +%s)
R=/tmp/s32; mkdir -p "$R"
root=/tmp/gpuhost
root=$(GPU_HOST_ROOT=$root bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source $root/env.sh
echo "$root" > "$R/suite-root.txt"
SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
# The suite's in-process kernel files and the series' CUDA tests of vLLM's
# tree (left out of the engine groups to fit their limit beside the build;
# their code last ran in session 25), once the engine groups have ended; go2
# waits for both (added in session 33, for issue 32's suite on the final
# series; carry .gpu-bundles/intree, made by scripts/gpu-host/pack-intree.sh).
export R
setsid bash -c 'while [[ ! -f "$R/suite.rc" ]]; do sleep 1; done
  timeout 240 python3 -m pytest -q -rfEs -p no:cacheprovider tests/gpu/test_conditional_graph.py \
    tests/gpu/test_confidence_kernel.py tests/gpu/test_dsl_kernels.py tests/gpu/test_near_ties.py \
    > "$R/kernels.log" 2>&1; echo $? > "$R/kernels.rc"
  (cd .gpu-bundles/intree && timeout 240 python3 -m pytest -q -rfEs -p no:cacheprovider \
    --rootdir . --noconftest tests) > "$R/intree.log" 2>&1; echo $? > "$R/intree.rc"' \
  < /dev/null > /dev/null 2>&1 &
M=$root/models
export R M
setsid bash -c 'end=$(( $(date +%s) + 300 ))
  while [[ ! -f "$M/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do sleep 1; done
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"
  cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json" 2>/dev/null
  # Session 34: both drafts reliability tables (confidence bins x greedy
  # acceptance, tune split; ~20 s each), for stop_rule_sim.py --batch with
  # this sessions drafts (docs/dsl-at-batch-size.md, Next 0a). Beside the
  # suite, as the distillation above is; go2 (below) waits for it.
  end=$(( $(date +%s) + 400 ))
  while [[ ! -f /tmp/proxies/done ]] && (( $(date +%s) < end )); do sleep 1; done
  rc=0
  for d in smollm2-l16-self smollm2-l4-self; do
    timeout 120 python3 benchmarks/calibration.py --target "$M/smollm2-135m" --draft "$M/$d" \
      --prompts .gpu-bundles/prompts --dataset sharegpt-tune --out "$R/calibration-$d.json" \
      > "$R/calibration-$d.log" 2>&1 || rc=$?
  done
  echo $rc > "$R/calibration.rc"
  while [[ ! -f "$R/go" || ! -f "$R/intree.rc" ]]; do sleep 1; done
  for _ in $(seq 60); do
    [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) ]] && break
    sleep 1
  done
  touch "$R/go2"' < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
common=(--prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4
        --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4'
        --rounds 8 --warm-rounds 1 --dsl-starts-alone)
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=$R/go2 AB_WAIT_S=900 \
  bash scripts/gpu-host/ab-start.sh s32p -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency 4,2,1 "${common[@]}" \
  > "$R/ab-start-p.log" 2>&1 || { cat "$R/ab-start-p.log"; exit 1; }
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=/tmp/ab/s32p/rc AB_WAIT_S=1700 \
  bash scripts/gpu-host/ab-start.sh s32s -- --models /tmp/gpuhost/models \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8,32 "${common[@]}" \
  > "$R/ab-start-s.log" 2>&1 || { cat "$R/ab-start-s.log"; exit 1; }
# Then, if device time is left, PR 2 of the stack alone against target-only
# (issue 32; ../2026-12-04-h200-pr2-alone/): arms target,sd2 (K=2 was SD's
# best at every c of session 31), queued after s32s.
AB_WAIT_FILE=/tmp/ab/s32s/rc AB_WAIT_S=3000 ARMS=target,sd2 \
  bash benchmarks/results/2026-12-04-h200-pr2-alone/start.sh > "$R/pr2-start.log" 2>&1 \
  || { cat "$R/pr2-start.log"; echo "pr2 not queued (the A/Bs above are)"; }
while (( $(date +%s) < T0 + 285 )) && [[ ! -f "$R/go2" ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s32
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); small: $(cat "$R/small.rc" 2>/dev/null || echo running); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
