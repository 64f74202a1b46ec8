#!/usr/bin/env bash
# Session 16 (2026-12-02): where a served step's time goes at 32 requests in flight
# (docs/dsl-at-batch-size.md "Next" 1). Session 15 found a served speculative step at
# 32-64 requests 0.4-2.0 ms longer than its start-up graph replays, with round-to-round
# spread of 12-32% (target-only 3-9%). benchmarks/profile_step.py, one engine at a time
# (nothing else on the GPU): per arm, wall per engine step against GPU kernel time per
# step (host-bound or not), host launches per step, and cProfile's host functions.
# Arms: target, sd3, dsl4 (cost-scaled proxies, async scheduling, FULL graphs, 6 GiB KV),
# c = 32, 64 requests of 128 tokens, ShareGPT test split. Not a benchmark: one run per
# arm. Code: the 48-patch series. Started by command D after "hand" (ab-start.sh with
# AB_SCRIPT=profile_step.py); collected by F.
set -euo pipefail
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
AB_SCRIPT=profile_step.py bash scripts/gpu-host/ab-start.sh prof -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --dataset sharegpt-test --out prof --arms target,sd3,dsl4 \
  --concurrency 32 --requests 64 --max-tokens 128 --engine "$E" --top 40
