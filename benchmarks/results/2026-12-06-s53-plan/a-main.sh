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
# Session 52's a-main.sh with this plan's folder, runs, profile and A/B.
set -euo pipefail
PLAN_DIR=/tmp/s54 RUN_F=s54f RUN_P=s54p PLAN_PROF_ARMS=sd2,dsl2@1-64:2,dsl4@1-64:2,dsl4 \
  PLAN_PROF_ARGS="--profile-repeats 5" PLAN_PROF_TIMEOUT_S=1200 PLAN_CONC=64 PLAN_BIG_GPU_ARM= \
  exec bash benchmarks/results/2026-12-06-s52-plan/a-main.sh "$@"
