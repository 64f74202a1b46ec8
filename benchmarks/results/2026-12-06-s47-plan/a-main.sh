#!/usr/bin/env bash
# Written in session 47 (issue 29) for the next device session's first long
# command, after b1..b8 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 24MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts
# .gpu-bundles/intree). Carry the last chunk (CHUNK, default
# .gpu-bundles/b9), .gpu-bundles/prompts, .gpu-bundles/intree.
# Returns in ~40 s; the rest runs in its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups on the
#      44-patch series (0043-0044 change the served width, which every DSL
#      engine of the suite runs), then the kernel files and the in-tree CUDA tests
#      (beside-proxies.sh); go once all ended and the GPU is quiet;
#   3. the A/Bs, arms fixed in advance (session 47), each engine cold:
#      c = 64 first, where session 47's H100 saw the served width take three
#      rounds down from cap 8 (dsl8 0.67-0.75x SD K=2 in those rounds; dsl4's
#      first round 0.968), which 0043-0044 should shorten to one or two rounds
#      (../2026-12-06-cpu-s47-served-width-start/); then 8 and 1.
#        sd2, sd3   SD at K = 2 (best at every c since session 29) and 3;
#        target     speculation off (H200 only: five engines);
#        dsl4       DSL's default config, cap 4 (the verdict's arm);
#        dsl8       DSL at cap 8 (0043's question at 64; at 1 it tied dsl4).
#      --rotate-prompts, 1 warm + 8 ABBA rounds, one wave of 256-token
#      requests a round (4 requests at c < 4), prefix caching off, the DSL
#      engines started alone.
# On a GPU < 100 GB (an H100 holds three engines) with ARMS unset, two A/Bs
# one after the other: s48p sd2,dsl4,dsl8 at 64,8,1 (0043 at cap 4 and 8 from
# a cold engine, and the default config at the loads that decide most), then
# s48q sd2,sd3,dsl4 at 16,32,2,4 (the default config at the other loads: one
# verdict for dsl4 at every c, each point's ratio from one run). On an H200,
# one A/B s48p with all five arms at 64,8,1,16,32,2,4.
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz
#   python3 benchmarks/verdict.py --dsl-arm dsl8 --out verdict-dsl8.json proxies=abab.json.gz
# (on an H100: dsl4 on both files, dsl8 on s48p's.)
# Session 45's a-main.sh with this plan's names and loads (the same steps).
set -euo pipefail
PLAN_DIR=/tmp/s48 \
  PLAN_AB_SPLIT="s48p sd2,dsl4,dsl8 64,8,1;s48q sd2,sd3,dsl4 16,32,2,4" \
  PLAN_AB_NAME=s48p PLAN_CONC=64,8,1,16,32,2,4 \
  exec bash benchmarks/results/2026-12-06-s45-plan/a-main.sh "$@"
