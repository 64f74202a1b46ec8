#!/usr/bin/env bash
# Written in session 32, not yet run (issue 32: "PR 2's own SD-vs-target
# evidence"). PR 2 of the rebuilt stack alone on an H200: the fixes (PR 1) and
# the standalone draft model's CUDA graphs (PR 2), no DSL, no WHILE loop.
# Runs on a host where a session has already staged the bundle and built the
# proxies (a-main.sh of that session: /tmp/gpuhost/models holds
# smollm2-135m-x8b and smollm2-l16-self-x1b), as a later command of that
# session, after its own A/Bs (AB_WAIT_FILE, default none). Carry
# .gpu-bundles/wip/pr2-alone.tgz and .gpu-bundles/prompts; make the
# tarball first, here:
#   scripts/gpu-host/pack-prefix.sh patches 7 pr2-alone
# (19 files added or changed, 8 removed: the DSL modules and the WHILE loop).
# Arms fixed in advance: target (base), sd2, sd3, sd4 (ARMS overrides: session
# 33's plan queues target,sd2 after its own A/Bs): SD with the graphed draft
# against target-only, on the code PR 2 leaves, the proxies (8B/1B-shaped),
# ShareGPT test split, one wave of 256-token requests a round, 1 warm + 6
# rounds, c = 1, 8, 32. Returns at once; collect with
#   bash scripts/gpu-host/ab-collect.sh pr2 --wait <s>
set -euo pipefail
wroot=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-pr2 .gpu-bundles/wip/pr2-alone.tgz)
ln -sfn /tmp/gpuhost/models "$wroot/models"
# The package is PR 1-2's: no DSL config field, no WHILE-loop module.
(source "$wroot/env.sh" && cd / && python3 -c '
import importlib.util as u
from vllm.config import SpeculativeConfig
assert "draft_confidence_threshold" not in SpeculativeConfig.__dataclass_fields__
assert u.find_spec("vllm.v1.worker.gpu.conditional_graph") is None
print("PR 1-2 package: ok")')
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$wroot AB_TIMEOUT_S=900 AB_WAIT_FILE=${AB_WAIT_FILE:-} AB_WAIT_S=${AB_WAIT_S:-600} \
  bash scripts/gpu-host/ab-start.sh pr2 -- --models /tmp/gpuhost/models \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency 1,8,32 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --engine "$E" --out abab.json --arms "${ARMS:-target,sd2,sd3,sd4}" --rounds 6 --warm-rounds 1
