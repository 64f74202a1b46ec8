#!/usr/bin/env bash
# Written in session 50 (issue 29) for the next device session's first long
# command, after b1..b9 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB: ten chunks, since the tree left a
# 24 MB last chunk only 1.6 MB in session 50; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b10 .gpu-bundles/prompts
# .gpu-bundles/intree). Carry the last chunk (CHUNK, default
# .gpu-bundles/b10), .gpu-bundles/prompts, .gpu-bundles/intree.
# Returns in ~40 s; the rest runs in its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups (on
#      the series as it is then: session 50 ran it on 0046, all passed), then
#      the kernel files and the in-tree CUDA tests (beside-proxies.sh); go
#      once all ended and the GPU is quiet;
#   3. one A/B, s51p, arms fixed in advance: sd2 (SD's best fixed K at every
#      c on this H100 in sessions 47-50), dsl4 (DSL's default config, the
#      verdict's arm) and dsl4+once (the same with
#      ab_hooks.ServedExploresUntilCompared: no exploration of a neighbour
#      once both were compared), at c = 64, 32, 16, 8, 1 in that order (64
#      from a cold engine), 1 warm + 12 ABBA rounds, one wave of c a round
#      from 8 up and 8 requests a round at 1, --rotate-prompts, 256-token
#      requests, prefix caching off, the DSL engines started alone. On a GPU
#      of >= 100 GB (an H200) sd3 joins (PLAN_ARMS).
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict-s51p-dsl4.json proxies=s51p-abab.json.gz
#   python3 benchmarks/verdict.py --dsl-arm dsl4+once --out verdict-s51p-dsl4_once.json proxies=s51p-abab.json.gz
#   python3 benchmarks/served_widths.py --exact --arm dsl4 s51p-abab.log.gz (and --arm dsl4+once)
# Session 45's a-main.sh with this plan's names, loads, rounds, requests and
# the hook's arm option.
set -euo pipefail
CHUNK=${CHUNK:-.gpu-bundles/b10} PLAN_DIR=/tmp/s51 \
  PLAN_AB_SPLIT="s51p sd2,dsl4,dsl4+once 64,32,16,8,1 12 8" \
  PLAN_AB_NAME=s51p PLAN_ARMS=sd2,sd3,dsl4,dsl4+once PLAN_CONC=64,32,16,8,1 \
  PLAN_AB_ROUNDS=12 PLAN_AB_BASE=8 \
  PLAN_ARM_OPTIONS='{"once": {"engine": {"worker_extension_cls": "ab_hooks.ServedExploresUntilCompared"}, "rpc": "dsl_served_explores_until_compared"}}' \
  exec bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
