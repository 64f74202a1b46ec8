#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-03-h200-s20/ab.sh NAME [abab.py args...]
#
# Session 20 (2026-12-03), on a staged H200 host with the cost-scaled proxies built:
# one benchmarks/abab.py A/B through scripts/gpu-host/ab-run.sh (foreground to AB_END,
# top + nvidia-smi samplers, everything in $OUT/NAME.tgz) with the settings every run
# of sessions 18-20 shares: the 7.2B-shaped target and the 1.1B-shaped 16-layer draft
# distilled on the target's own continuations, ShareGPT test split, prefix caching
# off, greedy, 256 tokens, 8 base requests (c = 64: 128 requests a round), 6 GiB KV
# per engine, at most 64 sequences, async scheduling, FULL_AND_PIECEWISE CUDA graphs.
set -euo pipefail
name=${1:?usage: ab.sh NAME [abab.py args...]}; shift
exec bash scripts/gpu-host/ab-run.sh "$name" -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 \
  --engine '{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}' \
  "$@"
