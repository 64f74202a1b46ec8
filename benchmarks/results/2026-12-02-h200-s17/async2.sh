#!/usr/bin/env bash
# Session 17 (2026-12-02): async.sh's question, cut to the device time left after the
# first host went back: DSL at 32 and 64 requests under async scheduling with the draft
# model's first pass priced (patches-wip/dsl-price-first-pass). (1) the start-up table's
# rest of a step (logged); (2) DSL cap 4 against SD K = 3 and 2; (3) each arm's median
# engine step against TPOT x tokens per step and the table. Arms fixed in advance: dsl4
# (base), sd3, sd2 (target-only left out for time). benchmarks/abab.py, 3 ABBA rounds at
# c = 32, 64, ShareGPT test split, cost-scaled proxies, prefix caching off, greedy, 256
# tokens, FULL CUDA graphs, 6 GiB KV per engine, DSL engine started alone.
# Code: the 48-patch series + both wip patches (gpu-wip). Started by E; collected by F/G.
set -euo pipefail
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
bash scripts/gpu-host/ab-start.sh async2 -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out abab.json \
  --arms dsl4,sd3,sd2 --dsl-starts-alone --concurrency 32,64 --rounds 3
