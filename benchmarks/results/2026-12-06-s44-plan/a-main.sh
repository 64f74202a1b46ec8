#!/usr/bin/env bash
# Written in session 44 (issue 29) for the next device session's first long
# command, after b1..bN-1 were staged one call each (pack with
# scripts/pack-offline.sh --all --cap 20MB: the tree is 44.9 MB as sent; check
# the largest call with scripts/gpu-host/call-size.sh). Carry the last chunk
# (CHUNK, default .gpu-bundles/b11: set it to the pack's last) and
# .gpu-bundles/prompts. No rows call: proxies-start.sh unpacks the kept rows
# from the tree. Returns in ~60 s; the long work runs in its own process
# sessions:
#   1. the last chunk, check, host.txt (stage-last.sh);
#   2. the proxies chain (proxies-start.sh --foreground under setsid: the
#      target and the 16-layer truncation, the draft distilled on the kept
#      rows, the scaling; ~5-6 min); no suite (no GPU code changed since
#      session 44's suite on the 40-patch series);
#   3. the A/B s45p once the proxies are built and the GPU is quiet, arms
#      fixed in advance:
#        sd2, sd3        SD at K = 2 (best at every c in sessions 31/34) and 3;
#        target          speculation off;
#        dsl4            DSL's default config at cap 4 (the verdict's arm);
#        dsl8            DSL at cap 8, the served width choosing per batch size;
#        dsl8@1-64:8     DSL at cap 8 with every step served at 8 slots
#                        (num_speculative_tokens_per_batch_size: the served
#                        width off), the stop rule alone within the cap.
#      Session 44's replay of the proxies' draft traces says the stop rule at
#      one request gains with the cap (1.073x best-K SD at 4, 1.092x at 8) and
#      that session 34's c = 1 point ran 4 prompts at a served width of 1-2:
#      dsl8 against dsl4 is what the cap buys, dsl8@1-64:8 against dsl8 what
#      the served width costs or saves at each c.
#      --rotate-prompts: each round takes the next prompts of the test split
#      (at c = 1 four requests a round: 36 prompts over 9 rounds, not the same
#      4). c = 64 and 8 first (where a larger cap must not cost), then c = 1
#      (the question; after the larger loads settled their batch sizes, as a
#      server's would: patch 0041 keeps one request from borrowing their
#      width, benchmarks/results/2026-12-06-cpu-s44-served-width-b1), then 16,
#      32, 2, 4 as time allows (CONC).
#      One wave of 256-token requests a round (4 requests at c < 4), 1 warm +
#      8 ABBA rounds, prefix caching off, the DSL engines started alone.
# Then collect.sh (this folder) until it says s45p ended.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz
#   (and --dsl-arm dsl8, --dsl-arm 'dsl8@1-64:8' for the other two)
# Device time planned: staging ~2.5 min (11 chunks), the proxies ~5-6 min,
# six engines ~5 min (three DSL engines alone, one after another), c = 64 and
# 8 ~2 min each, c = 1 ~4 min (6 arms x 9 rounds x 4 sequential requests):
# c = 1 ends ~20 min after the first call. No GPU suite here: 0041 changed
# only the scheduler's width at one request; run tests/gpu if time is left.
set -uo pipefail
R=/tmp/s45p; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" "${CHUNK:-.gpu-bundles/b11}") || exit 1
source "$root/env.sh"
M=$root/models
export R M
setsid bash -c 'bash scripts/gpu-host/proxies-start.sh --foreground > "$R/proxies.out" 2>&1
  cp /tmp/proxies/*.log "$R/" 2>/dev/null
  for _ in $(seq 60); do
    [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) ]] && break
    sleep 1
  done
  touch "$R/go"' < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go AB_WAIT_S=700 \
  bash scripts/gpu-host/ab-start.sh s45p -- --models "$M" \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency "${CONC:-64,8,1,16,32,2,4}" \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --rotate-prompts \
  --engine "$E" --out abab.json --arms 'sd2,sd3,target,dsl4,dsl8,dsl8@1-64:8' \
  --rounds "${ROUNDS:-8}" --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
sleep 45
tar czf "$OUT/a.tgz" -C /tmp s45p
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); $(tail -n 2 "$R/proxies.out" 2>/dev/null | tr '\n' ' ')"
