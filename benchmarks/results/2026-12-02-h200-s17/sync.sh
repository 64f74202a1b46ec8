#!/usr/bin/env bash
# Session 17 (2026-12-02): DSL under sync scheduling without the drafted-slots hand-off,
# as patches-wip/dsl-sync-no-hand-off lands it (session 16 measured the same behaviour
# through a benchmark hook). Question: with K placeholder slots per request under sync
# scheduling, is DSL cap 4 on a par with SD K=3, as under async scheduling? Arms fixed in
# advance, both under sync scheduling: dsl4+sync (base), sd3+sync. benchmarks/abab.py,
# 4 ABBA rounds at c = 1, 8, 32, ShareGPT test split, cost-scaled proxies, prefix caching
# off, greedy, 256 tokens, FULL CUDA graphs, 6 GiB KV per engine, DSL engine started alone.
# Code: the 48-patch series + both wip patches (gpu-wip). Started by D; collected by E/F.
set -euo pipefail
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
O='{"sync": {"engine": {"async_scheduling": false}}}'
bash scripts/gpu-host/ab-start.sh sync -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out abab.json \
  --arms dsl4+sync,sd3+sync --arm-options "$O" --dsl-starts-alone \
  --concurrency 1,8,32 --rounds 4
