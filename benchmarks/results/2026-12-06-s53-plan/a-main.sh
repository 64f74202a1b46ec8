#!/usr/bin/env bash
# Written in session 53 (issue 29) for the next device session's first long
# command, after b1..b9 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b10 .gpu-bundles/prompts).
# Carry the last chunk (CHUNK, default .gpu-bundles/b10) and .gpu-bundles/prompts
# (no intree: the GPU code is sessions 50-53's, whose whole suite passed in
# sessions 51 and 52). Returns in ~40 s; the rest runs in its own process
# sessions, one thing on the GPU at a time:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, only the GPU suite's no-sync tests
#      (a smoke test of the staged tree); go once both ended, GPU quiet;
#   3. s54f: benchmarks/profile_step.py --profile-window 20:40
#      --profile-repeats 5 --base sd2 on sd2, dsl2@1-64:2, dsl4@1-64:2 and
#      dsl4 (PROF_ARMS to cut) at 64 requests started together, each engine
#      alone: per arm GPU busy, span, idle and wall time per step over engine
#      steps 20-59 of five waves (each wave's kept: differences with a 95%
#      interval), kernels by name and the idle gaps by the kernels either side;
#   4. once s54f has ended and the GPU is quiet, the A/B s54p: sd2+t,
#      dsl4@1-64:2+t, dsl4+t (HostTimer on each) at c = ${CONC:-64}, 1 warm +
#      12 ABBA rounds, one wave a round, 256 tokens, --rotate-prompts, prefix
#      caching off, the DSL engines started alone.
# Then collect.sh (this folder), each call the moment the one before answers.
set -euo pipefail
R=/tmp/s54; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b10}")
source "$root/env.sh"
M=$root/models
SUITE_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores) -k no_blocking_sync" \
  GPU_HOST_ROOT=$root SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
PAIR=(--models "$M" --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts)
GPU_HOST_ROOT=$root AB_SCRIPT=profile_step.py AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/go AB_WAIT_S=900 \
  bash scripts/gpu-host/ab-start.sh s54f -- "${PAIR[@]}" --dataset sharegpt-test --out prof \
  --arms "${PROF_ARMS:-sd2,dsl2@1-64:2,dsl4@1-64:2,dsl4}" --concurrency 64 --requests 64 \
  --max-tokens 256 --profile-window 20:40 --profile-repeats 5 --base sd2 --engine "$E" \
  > "$R/ab-start-s54f.log" 2>&1 || { cat "$R/ab-start-s54f.log"; exit 1; }
setsid bash scripts/gpu-host/go-when-quiet.sh "$R/go-ab" --after /tmp/ab/s54f/rc \
  --max-wait 120 < /dev/null > /dev/null 2>&1 &
T='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
arms=sd2+t,dsl4@1-64:2+t,dsl4+t
echo "s54f (${PROF_ARMS:-sd2,dsl2@1-64:2,dsl4@1-64:2,dsl4}), then s54p $arms ${CONC:-64}" | tee "$R/ab-plan.txt"
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go-ab AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s54p -- "${PAIR[@]}" --concurrency "${CONC:-64}" \
  --max-tokens 256 --waves 1 --base-requests 8 --rotate-prompts --engine "$E" \
  --out abab.json --arms "$arms" --arm-options "$T" --rounds 12 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start-s54p.log" 2>&1 || { cat "$R/ab-start-s54p.log"; exit 1; }
sleep 20
tar czf "$OUT/a.tgz" -C "$(dirname "$R")" "$(basename "$R")"
echo "started: proxies chain, no-sync tests; queued on $R/go: s54f, then s54p"
