#!/usr/bin/env bash
# Written in session 49 (issue 29) for the next device session's first long
# command, after b1..b8 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 24MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts
# .gpu-bundles/intree). Carry the last chunk (CHUNK, default
# .gpu-bundles/b9), .gpu-bundles/prompts, .gpu-bundles/intree.
# Returns in ~40 s; the rest runs in its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups (the
#      series session 49 ran the whole suite on, unless it changed since:
#      then it is that change's first GPU run), then the kernel files and the
#      in-tree CUDA tests (beside-proxies.sh); go once all ended and the GPU
#      is quiet;
#   3. one A/B, s50p, arms fixed in advance: sd2 (SD's best fixed K at every
#      c on this H100 in sessions 47-49: sd1 1.029-1.050x its TPOT at 32-64,
#      sd3 1.025-1.033x at 1-4, a tie at 16), dsl4 (DSL's default config,
#      the verdict's arm) and dsl2@1-64:2 (DSL at a fixed width of 2, no
#      served width: against sd2 it is DSL's own cost a step, since the loop's
#      rule at width 2 is within 0.1% of SD K=2 from 16 requests up on the
#      drafter's traces, ../2026-12-06-cpu-s49-batch-stop-traces/), at c =
#      32, 64, 2, 4 in that order (32 from a cold engine, as session 49's
#      s49p), 1 warm + 12 ABBA rounds, 8 requests a round at c = 2 and 4
#      (one wave of c at 32 and 64), --rotate-prompts, 256-token requests,
#      prefix caching off, the DSL engines started alone. On a GPU of >= 100
#      GB (an H200) sd3 joins (PLAN_ARMS).
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict-s50p-dsl4.json proxies=s50p-abab.json.gz
#   python3 benchmarks/served_widths.py s50p-abab.log.gz
# Session 45's a-main.sh with this plan's names, loads, rounds and requests.
set -euo pipefail
PLAN_DIR=/tmp/s50 \
  PLAN_AB_SPLIT="s50p sd2,dsl4,dsl2@1-64:2 32,64,2,4 12 8" \
  PLAN_AB_NAME=s50p PLAN_ARMS=sd2,sd3,dsl4,dsl2@1-64:2 PLAN_CONC=32,64,2,4 \
  PLAN_AB_ROUNDS=12 PLAN_AB_BASE=8 \
  exec bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
