#!/usr/bin/env bash
# Written in session 54 (issue 29) for the next device session's first long
# command, after b1..b14 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB: 15 chunks with the kept draft;
# check the call with scripts/gpu-host/call-size.sh .gpu-bundles/b15
# .gpu-bundles/prompts). Carry b15 and .gpu-bundles/prompts (no intree: the
# GPU code is sessions 50-53's). Returns in ~40 s; the rest runs in its own
# process sessions, one thing on the GPU at a time:
#   0. (before it returns, ~30 s) benchmarks/while_node_cost.cu built with the
#      host's nvcc and run: what a WHILE node costs by body size, child graph
#      or inline (/tmp/s55/while_node_cost.txt, in a.tgz);
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain (the kept draft assembled, not distilled), no GPU
#      suite (PLAN_SUITE=0: the GPU code is unchanged since its whole runs in
#      sessions 51-52, and session 54's no-sync part took 241 s against the
#      chain's ~100 s with the draft kept); go once the chain is done;
#   3. s55f: profile_step.py --profile-window 20:40 --profile-repeats 5
#      --base sd2 on sd2 and dsl4 (the default) at 64 requests: per run busy,
#      idle, host-late and wall time per step, and each idle gap's host-late
#      part (was the copy after the draft loop issued late by the host, or
#      queued behind the loop's end?);
#   4. the A/B s55p: sd2+t and dsl4+t at c = 64 then 32, 1 warm + 12 ABBA
#      rounds (session 52's settings).
# Then collect.sh (this folder), each call the moment the one before answers.
# Session 52's a-main.sh with this plan's folder, runs, profile and A/B.
set -euo pipefail
mkdir -p /tmp/s55
# Session 55 ran it in its first call (the host had no models yet): skip then.
if [[ ! -s /tmp/s55/while_node_cost.txt ]] &&
  nvcc -O2 -arch=sm_90 -o /tmp/while_node_cost benchmarks/while_node_cost.cu; then
  timeout 120 /tmp/while_node_cost 200 > /tmp/s55/while_node_cost.txt 2>&1 || true
fi
CHUNK=${CHUNK:-.gpu-bundles/b15} PLAN_DIR=/tmp/s55 RUN_F=s55f RUN_P=s55p \
  PLAN_PROF_ARMS=sd2,dsl4 PLAN_PROF_ARGS="--profile-repeats 5" PLAN_PROF_TIMEOUT_S=900 \
  PLAN_CONC=64,32 PLAN_BIG_GPU_ARM= PLAN_AB_ARMS=sd2+t,dsl4+t PLAN_SUITE=0 \
  exec bash benchmarks/results/2026-12-06-s52-plan/a-main.sh "$@"
