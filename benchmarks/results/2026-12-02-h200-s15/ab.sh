#!/usr/bin/env bash
# Session 15 (2026-12-02): the A/B, started by command D in its own process session
# (setsid) once the suite and the proxies were done; commands E and F collect it
# (collect.sh). benchmarks/abab.py, 8 ABBA rounds per point, at c = 64, 1, 8, 32, 16 in
# that order of importance (a run cut by the machine going back keeps the points it
# finished), ShareGPT test split, cost-scaled proxy pair (smollm2-135m-x8b target,
# smollm2-l16-self-x1b draft), prefix caching off, greedy, 256 tokens, async scheduling,
# FULL CUDA graphs.
# Question: does DSL in its default configuration (dsl4: "dynamic_lookahead": true, cap 4,
# nothing else; with the V2 runner and a draft model the scheduler chooses the draft width
# per batch size from the start-up step costs and the acceptance it observes) reach
# >= 0.99x of the best of SD and target-only at c = 64 (s14: 0.849x in 0049's first form)
# without losing c = 1?
# Arms fixed before any measurement: SD K=3 (base), K=2, K=1 (the start-up table of s14
# puts the best width at 64 requests at one draft, so SD's best K there may be 1: a fair
# baseline needs it), target-only, dsl4. SD K=4 dropped (never best in s13/s14).
# Engines: 6 GiB KV cache each (s14's 4 GiB gave the SD/DSL engines 26,208 tokens, about
# what 64 ShareGPT-test requests of 256 tokens need, so SD's rounds at c = 64 may have
# preempted: its spread was 15.9% against target-only's 0.2%); max_num_seqs 64 (the
# largest concurrency; fewer graph sizes to capture and time); --dsl-starts-alone (the
# DSL engine's cost table is timed on an otherwise idle GPU).
# Code: the series through 0049 (present form). Results: /tmp/s15/abab/abab-x8b.json
# (after every point), /tmp/s15/logs/abab.log; collect.sh tars them.
set -uo pipefail
source /tmp/gpuhost/env.sh
R=/tmp/s15; mkdir -p "$R/abab" "$R/logs"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
T0=$(date +%s)
timeout ${AB_TIMEOUT:-1500} python3 "$R/tree/benchmarks/abab.py" --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts "$R/prompts" \
  --max-tokens 256 --base-requests 8 --engine "$E" --out "$R/abab/abab-x8b.json" \
  --arms sd3,sd2,sd1,target,dsl4 --dsl-starts-alone --concurrency 64,1,8,32,16 --rounds 8 \
  > "$R/logs/abab.log" 2>&1
echo "abab rc=$? $(( $(date +%s) - T0 ))s" > "$R/ab.done"
