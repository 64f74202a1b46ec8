#!/usr/bin/env bash
# Written in session 55 (issue 29) for the next device session's first long
# command, after first.sh (this folder) and b2..b15 were staged one call each
# (pack with scripts/pack-offline.sh --all --cap 21MB: 16 chunks with the kept
# draft; check the call with scripts/gpu-host/call-size.sh .gpu-bundles/b16
# .gpu-bundles/prompts). Carry b16 and .gpu-bundles/prompts. Returns in
# ~70 s; the rest runs in its own process sessions, one thing on the GPU at a
# time:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. before anything else uses the GPU (~30 s): benchmarks/while_body_torch.py,
#      torch-captured bodies (GEMMs, elementwise, copies, mixed) in the
#      series' DeviceWhileLoop, against replaying them from the host
#      (/tmp/s56/while_body_torch.txt and each body's loop graph as a verbose
#      Graphviz file in /tmp/s56/dot-torch, in a.tgz);
#   3. the proxies' chain (proxies-start.sh: the target and truncation built,
#      the kept draft assembled, both scaled; ~130 s), no suite (the GPU code
#      is unchanged since its whole runs in sessions 51-52); go once it is
#      done and the GPU quiet;
#   4. the A/B s56p, arms fixed here: sd2+t, sd3+t (SD K=2 and K=3: at one
#      request SD's best K was 3 on the H200, issue 29's table, and K=3 never
#      ran at c = 1 on the H100) and dsl4+t (the default config), at c = 1,
#      2, 4 (never run on the H100) then 32, 1 warm + 12 ABBA rounds, one
#      wave a round (8 requests at c = 1, 2, 4), 256 tokens, --rotate-prompts, prefix caching off, the DSL engine
#      started alone, every arm timing its host calls (HostTimer, +t); the DSL
#      arm's draft loop graphs (DSL_DUMP_LOOP_GRAPHS: 1 and 64 rows, verbose
#      Graphviz) in the A/B's dot/.
# No profile: sessions 54-55 located the draft loop's extra time (41.7-41.8
# us each time the WHILE body starts, in-graph); steps 1-2 and first.sh ask
# what makes it.
# Then collect.sh (this folder), each call the moment the one before answers.
set -euo pipefail
R=${PLAN_DIR:-/tmp/s56}; mkdir -p "$R"
p=${RUN_P:-s56p}
conc=${CONC:-1,2,4,32}
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b16}")
source "$root/env.sh"
M=$root/models
timeout 180 python3 benchmarks/while_body_torch.py --dot-dir "$R/dot-torch" > "$R/while_body_torch.txt" 2>&1 \
  || echo "# while_body_torch.py: rc=$?" >> "$R/while_body_torch.txt"
tail -n 6 "$R/while_body_torch.txt"
GPU_HOST_ROOT=$root bash scripts/gpu-host/alone-proxies.sh "$R"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
PAIR=(--models "$M" --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts)
T='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
arms=${PLAN_AB_ARMS:-sd2+t,sd3+t,dsl4+t}
echo "$p: $arms at $conc once $R/go exists" | tee "$R/ab-plan.txt"
# The DSL arm's draft loop graphs (1 and 64 rows), written by its HostTimer
# once the engine is up, come back with the A/B's files.
DSL_DUMP_LOOP_GRAPHS=/tmp/ab/$p/dot GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go AB_WAIT_S=900 \
  bash scripts/gpu-host/ab-start.sh "$p" -- "${PAIR[@]}" --concurrency "$conc" \
  --max-tokens 256 --waves 1 --base-requests 8 --rotate-prompts --engine "$E" \
  --out abab.json --arms "$arms" --arm-options "$T" --rounds 12 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start-$p.log" 2>&1 || { cat "$R/ab-start-$p.log"; exit 1; }
sleep 5
tar czf "$OUT/a.tgz" -C "$(dirname "$R")" "$(basename "$R")"
echo "started: proxies chain (no suite); queued on $R/go: $p"
