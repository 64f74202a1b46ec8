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
set -uo pipefail
R=/tmp/s48; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b9}") || exit 1
source "$root/env.sh"
M=$root/models
# Every engine group (0043-0044 change the served width each DSL engine runs).
# SUITE_K narrows it (no spaces: suite.sh splits PYTEST_ARGS on them), e.g.
# session 45's subset "(piecewise)or(eagle)or(exiting_often)or(every_scheduled_slot)".
SUITE_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores)${SUITE_K:+ -k $SUITE_K}" \
  SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [[ -z "${ARMS:-}" ]] && (( ${gpu_mib:-0} < 100000 )); then
  ab_runs=("s48p sd2,dsl4,dsl8 64,8,1" "s48q sd2,sd3,dsl4 16,32,2,4")
else
  ab_runs=("s48p ${ARMS:-sd2,sd3,target,dsl4,dsl8} ${CONC:-64,8,1,16,32,2,4}")
fi
echo "GPU memory ${gpu_mib:-?} MiB: A/Bs ${ab_runs[*]}" | tee "$R/ab-plan.txt"
wait_file=$R/go wait_s=900 prev=""
for ab in "${ab_runs[@]}"; do
  read -r name arms conc <<< "$ab"
  if [[ -n $prev ]]; then
    # This A/B starts once the one before has ended and its engines left the GPU.
    wait_file=$R/go-after-$prev wait_s=1500
    setsid bash scripts/gpu-host/go-when-quiet.sh "$wait_file" --after "/tmp/ab/$prev/rc" \
      --max-wait 120 < /dev/null > /dev/null 2>&1 &
  fi
  GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$wait_file AB_WAIT_S=$wait_s \
    bash scripts/gpu-host/ab-start.sh "$name" -- --models "$M" \
    --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency "$conc" \
    --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --rotate-prompts \
    --engine "$E" --out abab.json --arms "$arms" \
    --rounds "${ROUNDS:-8}" --warm-rounds 1 --dsl-starts-alone \
    > "$R/ab-start-$name.log" 2>&1 || { cat "$R/ab-start-$name.log"; exit 1; }
  prev=$name
done
sleep 20
tar czf "$OUT/a.tgz" -C /tmp s48
echo "started: proxies chain, suite subset, A/Bs queued on $R/go: $(cat "$R/ab-plan.txt")"
