#!/usr/bin/env bash
# Session 16 (2026-12-02): review item 2 of issue 32, the MRV2 sync-scheduling hand-off.
# Under sync scheduling with DSL the MRV2 runner hands the scheduler only each request's
# drafted slots, which waits on the host for the draft loop every engine step
# (spec_decode/utils.py, copy_event.synchronize()). Question: does that wait cost TPOT,
# and does handing over only drafted slots pay for it? Arms fixed in advance, all under
# sync scheduling: dsl4+handoff (base: DSL cap 4, as shipped), dsl4+nohandoff (the same
# engine with the hand-off turned off by benchmarks/ab_hooks.py: K placeholder slots per
# request, no wait, exits' empty slots verified and rejected as under async scheduling),
# sd3+sync (SD K=3 under sync scheduling, for scale). benchmarks/abab.py, 6 ABBA rounds at
# c = 1, 8, 32, ShareGPT test split, cost-scaled proxies, prefix caching off, greedy,
# 256 tokens, FULL CUDA graphs, 6 GiB KV cache per engine, DSL engines started alone.
# Code: the 48-patch series. Started by command D (ab-start.sh); collected by E/F.
set -euo pipefail
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
O='{"handoff": {"engine": {"async_scheduling": false}},
    "nohandoff": {"engine": {"async_scheduling": false,
                  "worker_extension_cls": "ab_hooks.SyncHandOffToggle"},
                  "rpc": "dsl_disable_sync_hand_off"},
    "sync": {"engine": {"async_scheduling": false}}}'
bash scripts/gpu-host/ab-start.sh hand -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts \
  --max-tokens 256 --base-requests 8 --engine "$E" --out abab.json \
  --arms dsl4+handoff,dsl4+nohandoff,sd3+sync --arm-options "$O" --dsl-starts-alone \
  --concurrency 1,8,32 --rounds 6
