#!/usr/bin/env bash
# Written in session 45 (issue 29) for the next device session's first long
# command, after b1..b8 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 24MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts
# .gpu-bundles/intree: 61.6 MB as sent in session 46). Carry the last chunk
# (CHUNK, default .gpu-bundles/b9), .gpu-bundles/prompts, .gpu-bundles/intree.
# Returns in ~60 s; the rest runs in its own process sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, the GPU suite's engine groups on the
#      42-patch series (session 45's cut run did not reach V1 with piecewise
#      graphs and the EAGLE / EAGLE3 groups on 0041; 0042 is new), then the
#      kernel files and the in-tree CUDA tests (beside-proxies.sh); go once all
#      ended and the GPU is quiet;
#   3. the A/B s46p, arms fixed in advance (ARMS):
#        sd2, sd3   SD at K = 2 (best at every c in sessions 29-34) and 3;
#        target     speculation off;
#        dsl4       DSL's default config at cap 4 (the verdict's arm);
#        dsl8       DSL at cap 8, the served width choosing.
#      Session 44's dsl8@1-64:8 is dropped: at one request the served width at
#      cap 8 serves at or near 8 anyway (../2026-12-06-cpu-s45-cap-vs-slot/),
#      and at 8-64 requests a fixed 8 is known to lose (verify width).
#      c = 1 first (the question: dsl8 against dsl4 and the 1.10x bar; 0041
#      keeps one request's width its own, so the order of loads no longer
#      matters there), then 64 and 8 (where cap 8 must not cost), then 16, 32,
#      2, 4 (CONC). --rotate-prompts, 1 warm + 8 ABBA rounds, one wave of
#      256-token requests a round (4 requests at c < 4), prefix caching off, the
#      DSL engines started alone.
# An H100 holds three of these engines (~22 GiB each). There (a GPU of < 100 GB,
# ARMS unset; session 46's change) two A/Bs run one after the other, arms fixed
# here in advance: s46p sd2,dsl4,dsl8 at c = 1 (the cap's question), then s46q
# sd2,sd3,dsl8 at 64,8,16,32,2,4 (cap 8 against SD's two best Ks of sessions
# 29-34 where the load is high; dsl4 there is sessions 31/34's): one verdict
# for dsl8 at every c, each point's ratio from one run.
# Then collect.sh (this folder), each call the moment the one before answers.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz
#   python3 benchmarks/verdict.py --dsl-arm dsl8 --out verdict-dsl8.json proxies=abab.json.gz
# (on an H100: dsl4 and dsl8 on s46p's abab.json.gz, dsl8 on s46q's.)
# Later plans run this script with their own names and loads (session 47's
# ../2026-12-06-s47-plan/a-main.sh): PLAN_DIR (default /tmp/s46), PLAN_AB_SPLIT
# (the A/Bs on a GPU < 100 GB, "NAME ARMS CONC" each, ';' between), PLAN_AB_NAME
# and PLAN_CONC (the one A/B's name and loads on a larger GPU). Since session
# 49 a PLAN_AB_SPLIT entry may end with its rounds and --base-requests
# ("NAME ARMS CONC ROUNDS BASE"; default ROUNDS or 8, and 4), and the one
# A/B's arms, rounds and --base-requests are PLAN_ARMS, PLAN_AB_ROUNDS and
# PLAN_AB_BASE (defaults: ARMS's, ROUNDS or 8, 4). Since session 50,
# PLAN_ARM_OPTIONS is passed to every A/B as abab.py's --arm-options (arms
# with a +label run a worker extension of benchmarks/ab_hooks.py). Since session
# 51, PLAN_ABAB_ARGS adds abab.py options to every A/B (split on spaces, e.g.
# "--repeats-at 64:2,32:2").
set -uo pipefail
R=${PLAN_DIR:-/tmp/s46}; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b9}") || exit 1
source "$root/env.sh"
M=$root/models
# Every engine group (session 46's 0042 changes host code each engine step
# runs; session 45's cut run reached 44 of 58 tests on 0041). SUITE_K narrows
# it to a -k expression, e.g. "not eagle and not v1" (quoted here for
# suite.sh, which splits PYTEST_ARGS as shell words since session 49).
SUITE_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores)${SUITE_K:+ -k $(printf %q "$SUITE_K")}" \
  SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [[ -z "${ARMS:-}" ]] && (( ${gpu_mib:-0} < 100000 )); then
  IFS=';' read -ra ab_runs <<< "${PLAN_AB_SPLIT:-s46p sd2,dsl4,dsl8 1;s46q sd2,sd3,dsl8 64,8,16,32,2,4}"
else
  ab_runs=("${PLAN_AB_NAME:-s46p} ${ARMS:-${PLAN_ARMS:-sd2,sd3,target,dsl4,dsl8}} ${CONC:-${PLAN_CONC:-1,64,8,16,32,2,4}} ${PLAN_AB_ROUNDS:-${ROUNDS:-8}} ${PLAN_AB_BASE:-4}")
fi
echo "GPU memory ${gpu_mib:-?} MiB: A/Bs ${ab_runs[*]}" | tee "$R/ab-plan.txt"
wait_file=$R/go wait_s=900 prev=""
for ab in "${ab_runs[@]}"; do
  # NAME ARMS CONC [ROUNDS [BASE_REQUESTS]] (session 49's plan gives the last two).
  read -r name arms conc rounds base <<< "$ab"
  if [[ -n $prev ]]; then
    # This A/B starts once the one before has ended and its engines left the GPU.
    wait_file=$R/go-after-$prev wait_s=1500
    setsid bash scripts/gpu-host/go-when-quiet.sh "$wait_file" --after "/tmp/ab/$prev/rc" \
      --max-wait 120 < /dev/null > /dev/null 2>&1 &
  fi
  GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$wait_file AB_WAIT_S=$wait_s \
    bash scripts/gpu-host/ab-start.sh "$name" -- --models "$M" \
    --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency "$conc" \
    --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests "${base:-4}" --rotate-prompts \
    --engine "$E" --out abab.json --arms "$arms" ${PLAN_ARM_OPTIONS:+--arm-options "$PLAN_ARM_OPTIONS"} \
    --rounds "${rounds:-${ROUNDS:-8}}" --warm-rounds 1 --dsl-starts-alone ${PLAN_ABAB_ARGS:-} \
    > "$R/ab-start-$name.log" 2>&1 || { cat "$R/ab-start-$name.log"; exit 1; }
  prev=$name
done
sleep 20
tar czf "$OUT/a.tgz" -C "$(dirname "$R")" "$(basename "$R")"
echo "started: proxies chain, suite subset, A/Bs queued on $R/go: $(cat "$R/ab-plan.txt")"
