#!/usr/bin/env bash
# Written in session 51 (issue 29) for the next device session's first long
# command, after b1..b9 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b10 .gpu-bundles/prompts
# .gpu-bundles/intree). Carry the last chunk (CHUNK, default .gpu-bundles/b10),
# .gpu-bundles/prompts, .gpu-bundles/intree. Returns in ~35 s; the rest runs in
# its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups, then
#      the kernel files and the in-tree CUDA tests (beside-proxies.sh); go once
#      all ended and the GPU is quiet;
#   3. one A/B, s52p, arms fixed in advance: sd2 (SD's best fixed K at every c
#      on this H100 in sessions 47-51), dsl4 (DSL's default config, the
#      verdict's arm) and dsl4+once (the same with
#      ab_hooks.ServedExploresUntilCompared, which session 51's run dropped at
#      start-up: its hook said False in the engine core's frozen heap; fixed
#      since), at c = 64, 32, 16, 8, 1 in that order (64 from a cold engine),
#      1 warm + 12 ABBA rounds, one wave of c a round from 8 up, two groups of
#      c a round at 64 and 32 (--repeats-at 64:2,32:2: rounds twice as long
#      where dsl4 loses 0.6-0.9%) and 8 requests a round at 1, --rotate-prompts,
#      256-token requests, prefix caching off, the DSL engines started alone. On
#      a GPU of >= 100 GB (an H200) sd3 joins (PLAN_ARMS).
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict-s52p-dsl4.json proxies=s52p-abab.json.gz
#   python3 benchmarks/verdict.py --dsl-arm dsl4+once --out verdict-s52p-dsl4_once.json proxies=s52p-abab.json.gz
#   python3 benchmarks/served_widths.py --exact --arm dsl4 s52p-abab.log.gz (and --arm dsl4+once)
# Session 45's a-main.sh with this plan's names, loads, rounds, requests, the
# hook's arm option and the longer rounds at 64 and 32.
set -euo pipefail
CHUNK=${CHUNK:-.gpu-bundles/b10} PLAN_DIR=/tmp/s52 \
  PLAN_AB_SPLIT="s52p sd2,dsl4,dsl4+once 64,32,16,8,1 12 8" \
  PLAN_AB_NAME=s52p PLAN_ARMS=sd2,sd3,dsl4,dsl4+once PLAN_CONC=64,32,16,8,1 \
  PLAN_AB_ROUNDS=12 PLAN_AB_BASE=8 PLAN_ABAB_ARGS="--repeats-at 64:2,32:2" \
  PLAN_ARM_OPTIONS='{"once": {"engine": {"worker_extension_cls": "ab_hooks.ServedExploresUntilCompared"}, "rpc": "dsl_served_explores_until_compared"}}' \
  exec bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
