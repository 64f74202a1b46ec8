#!/usr/bin/env bash
# Written in session 48 (issue 29) for the next device session's first long
# command, after b1..b8 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 24MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts
# .gpu-bundles/intree). Carry the last chunk (CHUNK, default
# .gpu-bundles/b9), .gpu-bundles/prompts, .gpu-bundles/intree.
# Returns in ~40 s; the rest runs in its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups on the
#      45-patch series (0045 changes when the served width tests a window,
#      which every DSL engine of the suite runs), then the kernel files and the
#      in-tree CUDA tests (beside-proxies.sh); go once all ended and the GPU is
#      quiet;
#   3. the A/Bs, arms fixed in advance (session 48), each engine cold:
#        sd1, sd2, sd3   SD at K = 1, 2, 3 (sd1: is one draft ever the best
#                        fixed K at 32 or 64 on this host? session 48's dsl4
#                        ran 0.95-0.97x sd2 at 32 once it narrowed to 1, and
#                        the CPU simulation at 64 prefers 1);
#        dsl4            DSL's default config, cap 4 (the verdict's arm);
#      --rotate-prompts, 1 warm + 8 ABBA rounds, one wave of 256-token
#      requests a round (4 requests at c < 4), prefix caching off, the DSL
#      engine started alone.
# On a GPU < 100 GB (an H100 holds three engines) with ARMS unset, two A/Bs
# one after the other: s49p sd2,sd1,dsl4 at 32,64 (0045 where session 48
# lost, and whether 1 draft pays), then s49q sd2,sd3,dsl4 at 2,4,1 (the
# loads whose lower bounds session 48 left below 0.98 at 8 rounds: a second
# run of each). On an H200, one A/B s49p with sd2,sd3,target,dsl4,dsl8 at
# 32,64,2,4,1.
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict-RUN-dsl4.json proxies=RUN-abab.json.gz
# Session 45's a-main.sh with this plan's names and loads (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s49 \
  PLAN_AB_SPLIT="s49p sd2,sd1,dsl4 32,64;s49q sd2,sd3,dsl4 2,4,1" \
  PLAN_AB_NAME=s49p PLAN_CONC=32,64,2,4,1 \
  exec bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
