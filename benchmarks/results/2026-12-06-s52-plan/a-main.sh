#!/usr/bin/env bash
# Written in session 52 (issue 29) for the next device session's first long
# command, after b1..b9 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b10 .gpu-bundles/prompts).
# Carry the last chunk (CHUNK, default .gpu-bundles/b10) and .gpu-bundles/prompts
# (not .gpu-bundles/intree: the GPU code is session 50-52's, whose whole suite
# passed three times). Returns in ~35 s; the rest runs in its own process
# sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, only the GPU suite's no-sync tests
#      (SUITE_K=no_blocking_sync: the v2 and v1 async engine groups under
#      VLLM_GPU_SYNC_CHECK=error, a smoke test of the staged tree); go once
#      both ended and the GPU is quiet;
#   3. the A/B s53p, arms fixed here: sd2 (SD K=2, the best fixed K at 8-64 on
#      this H100 in sessions 47-52), dsl2@1-64:2 (DSL at cap 2 with a fixed
#      width of 2: DSL's per-step machinery at the width SD runs) and
#      dsl4@1-64:2 (DSL at cap 4 with the same fixed width: what the cap
#      adds); on a GPU of >= 100 GB also dsl4 (DSL's default config). c = 64
#      then 32, 1 warm + 12 ABBA rounds, one wave of c a round, 256 tokens,
#      --rotate-prompts, prefix caching off, DSL engines started alone. Read
#      with benchmarks/full_steps.py (the steps of exactly c decoding requests
#      that drafted the whole width): session 52 found dsl4's such steps
#      0.08-0.10 ms longer than SD K=2's at 64 in three runs;
#   4. after the A/B has ended (its rc), s53f: benchmarks/profile_step.py
#      --profile-window 20:40 on sd2, dsl2@1-64:2 and dsl4@1-64:2 at 64
#      requests (each arm alone on the GPU): GPU kernel time by name, busy
#      and wall time per step over engine steps 20-59 of a wave of 64.
# Then collect.sh (this folder), each call the moment the one before answers.
set -euo pipefail
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
CHUNK=${CHUNK:-.gpu-bundles/b10} PLAN_DIR=/tmp/s53 SUITE_K=no_blocking_sync \
  PLAN_AB_SPLIT="s53p sd2,dsl2@1-64:2,dsl4@1-64:2 64,32 12 8" \
  PLAN_AB_NAME=s53p PLAN_ARMS=sd2,dsl2@1-64:2,dsl4@1-64:2,dsl4 PLAN_CONC=64,32 \
  PLAN_AB_ROUNDS=12 PLAN_AB_BASE=8 \
  bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
setsid bash scripts/gpu-host/go-when-quiet.sh /tmp/s53/go-prof --after /tmp/ab/s53p/rc \
  --max-wait 120 < /dev/null > /dev/null 2>&1 &
GPU_HOST_ROOT=/tmp/gpuhost AB_SCRIPT=profile_step.py AB_TIMEOUT_S=900 \
  AB_WAIT_FILE=/tmp/s53/go-prof AB_WAIT_S=1700 \
  bash scripts/gpu-host/ab-start.sh s53f -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --dataset sharegpt-test --out prof --arms sd2,dsl2@1-64:2,dsl4@1-64:2 --concurrency 64 \
  --requests 64 --max-tokens 256 --profile-window 20:40 --base sd2 --engine "$E" \
  > /tmp/s53/ab-start-s53f.log 2>&1 || { cat /tmp/s53/ab-start-s53f.log; exit 1; }
echo "queued: s53f (profile_step.py) after s53p"
