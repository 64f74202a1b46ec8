#!/usr/bin/env bash
# Written in session 52 (issue 29) for the next device session's first long
# command, after b1..b9 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 22MB; check the call with
# scripts/gpu-host/call-size.sh .gpu-bundles/b10 .gpu-bundles/prompts).
# Carry the last chunk (CHUNK, default .gpu-bundles/b10) and .gpu-bundles/prompts
# (not .gpu-bundles/intree: the GPU code is sessions 50-52's, whose whole suite
# passed three times). Returns in ~35 s; the rest runs in its own process
# sessions, one thing on the GPU at a time:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies' chain and, beside it, only the GPU suite's no-sync tests
#      (the v2 and v1 async groups under VLLM_GPU_SYNC_CHECK=error: a smoke
#      test of the staged tree); go once both ended and the GPU is quiet;
#   3. s53f: benchmarks/profile_step.py --profile-window 20:40 --base sd2 on
#      sd2, dsl2@1-64:2 and dsl4@1-64:2 at 64 requests started together (each
#      engine alone, in-process): GPU kernel time by name, GPU busy time and
#      wall time per step over engine steps 20-59 (full steps);
#   4. once s53f has ended and the GPU is quiet, the A/B s53p, arms fixed here:
#      sd2 (SD K=2, the best fixed K at 8-64 on this H100 in sessions 47-52),
#      dsl4@1-64:2 (DSL at cap 4, the width fixed at 2: DSL's machinery and
#      what the cap adds, with no served width) and dsl4 (the default config:
#      the served width, at 2 on most full steps); on a GPU of >= 100 GB also
#      dsl2@1-64:2 (cap 2, width fixed: session 50's +0.014 ms arm). c = 64 then 32, 1 warm + 12 ABBA rounds, one wave of c
#      a round, 256 tokens, --rotate-prompts, prefix caching off, the DSL
#      engines started alone, every arm timing its host calls (HostTimer, +t).
#      Read with benchmarks/full_steps.py and benchmarks/host_timer_table.py.
# Then collect.sh (this folder), each call the moment the one before answers.
# Later plans run it with PLAN_DIR (default /tmp/s53), RUN_F and RUN_P (the
# profile's and the A/B's names, default s53f and s53p), PLAN_PROF_ARMS (the
# profile's arms, default above; PROF_ARMS still cuts them), PLAN_PROF_ARGS
# (more profile_step.py arguments, default none), PLAN_PROF_TIMEOUT_S (900),
# PLAN_CONC (the A/B's concurrencies, default 64,32; CONC still overrides) and
# PLAN_BIG_GPU_ARM (the arm added on a GPU of >= 100 GB, default
# dsl2@1-64:2+t; empty for none), PLAN_AB_ARMS (the A/B's arms, default
# above) and PLAN_SUITE (0: no GPU suite beside the chain, go once the chain
# is done; default 1), as ../2026-12-06-s53-plan/a-main.sh does.
set -euo pipefail
R=${PLAN_DIR:-/tmp/s53}; mkdir -p "$R"
f=${RUN_F:-s53f} p=${RUN_P:-s53p}
prof_arms=${PROF_ARMS:-${PLAN_PROF_ARMS:-sd2,dsl2@1-64:2,dsl4@1-64:2}}
conc=${CONC:-${PLAN_CONC:-64,32}}
read -r -a prof_args <<< "${PLAN_PROF_ARGS:-}"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b10}")
source "$root/env.sh"
M=$root/models
if [[ "${PLAN_SUITE:-1}" == 1 ]]; then
  SUITE_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores) -k no_blocking_sync" \
    GPU_HOST_ROOT=$root SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R"
else
  # No suite (the GPU code unchanged since its last whole run): the chain
  # builds the truncation itself (session 55 lost ~330 s here waiting for a
  # suite that did not run); go once it is done and the GPU quiet;
  # after.done at once, for collect.sh.
  GPU_HOST_ROOT=$root bash scripts/gpu-host/alone-proxies.sh "$R"
fi
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
PAIR=(--models "$M" --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts)
GPU_HOST_ROOT=$root AB_SCRIPT=profile_step.py AB_TIMEOUT_S=${PLAN_PROF_TIMEOUT_S:-900} AB_WAIT_FILE=$R/go AB_WAIT_S=900 \
  bash scripts/gpu-host/ab-start.sh "$f" -- "${PAIR[@]}" --dataset sharegpt-test --out prof \
  --arms "$prof_arms" --concurrency 64 --requests 64 --max-tokens 256 \
  --profile-window 20:40 "${prof_args[@]}" --base sd2 --engine "$E" \
  > "$R/ab-start-$f.log" 2>&1 || { cat "$R/ab-start-$f.log"; exit 1; }
setsid bash scripts/gpu-host/go-when-quiet.sh "$R/go-ab" --after "/tmp/ab/$f/rc" \
  --max-wait 120 < /dev/null > /dev/null 2>&1 &
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
# Every arm with ab_hooks.HostTimer (+t): the host's time per step by call,
# read after each round (benchmarks/host_timer_table.py --pair), the same
# overhead in each arm.
T='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
arms=${PLAN_AB_ARMS:-sd2+t,dsl4@1-64:2+t,dsl4+t}
big=${PLAN_BIG_GPU_ARM-dsl2@1-64:2+t}
if [[ -n "$big" ]] && (( ${gpu_mib:-0} >= 100000 )); then arms=$arms,$big; fi
echo "GPU memory ${gpu_mib:-?} MiB: $f ($prof_arms), then $p $arms $conc" | tee "$R/ab-plan.txt"
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go-ab AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh "$p" -- "${PAIR[@]}" --concurrency "$conc" \
  --max-tokens 256 --waves 1 --base-requests 8 --rotate-prompts --engine "$E" \
  --out abab.json --arms "$arms" --arm-options "$T" --rounds 12 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start-$p.log" 2>&1 || { cat "$R/ab-start-$p.log"; exit 1; }
sleep 20
tar czf "$OUT/a.tgz" -C "$(dirname "$R")" "$(basename "$R")"
suite=", no-sync tests"; [[ "${PLAN_SUITE:-1}" == 1 ]] || suite=" (no suite)"
echo "started: proxies chain$suite; queued on $R/go: $f, then $p"
