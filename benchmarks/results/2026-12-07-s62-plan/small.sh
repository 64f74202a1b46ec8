#!/usr/bin/env bash
# Session 62's plan, part 2 (only once s63p has ended and > 900 s are left): the
# small pair's A/B on the already staged root, the same prompts every round.
# Run from the checkout's root with .gpu-bundles/prompts carried (no chunk: the
# root staged for s63p is reused); returns in a few seconds; collect with
#   bash scripts/gpu-host/ab-collect.sh s63s --wait <left - 40>
# Arms fixed here: SD K=3 and K=4 (session 42's base was K=4), DSL's default
# config (cap 4), each with host timers; c = 1 then 8; 1 warm + 8 rounds of
# 4 waves (32 requests a round: session 62's one-wave rounds had a 9.3% / 34%
# spread at 1 / 8, four waves at 8 3.6%). The chain builds SmolLM2-135M and
# distils its 4-layer draft (~170 s), then three engines start (~60 s each);
# c = 1 takes ~13 s an arm a round (~6 min), 8 ~1 min.
set -euo pipefail
[[ "${1:-}" != -h && "${1:-}" != --help ]] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost} here=scripts/gpu-host
[[ -f $root/env.sh ]] || { echo "small.sh: no staged root at $root: stage the bundle first (docs/gpu-host.md)" >&2; exit 2; }
[[ -n "${OUT:-}" ]] || { echo "small.sh: OUT is not set: run it on the device" >&2; exit 2; }
# shellcheck source=/dev/null
source "$root/env.sh"
GPU_HOST_ROOT=$root SMALL_DIR=/tmp/small bash "$here/small-start.sh"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
T='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=/tmp/small/done AB_WAIT_S=600 \
  bash "$here/ab-start.sh" s63s -- --models "$root/models" --target smollm2-135m \
  --draft smollm2-l4-self --prompts .gpu-bundles/prompts --concurrency 1,8 \
  --max-tokens 256 --waves 4 --base-requests 8 --engine "$E" \
  --out abab.json --arms sd3+t,sd4+t,dsl4+t --arm-options "$T" --rounds 8 \
  --warm-rounds 1 --dsl-starts-alone > /tmp/small/ab-start-s63s.log 2>&1 \
  || { cat /tmp/small/ab-start-s63s.log >&2; exit 1; }
tar czf "$OUT/small.tgz" -C /tmp small
echo "started: the small pair's chain; queued on /tmp/small/done: s63s"
