#!/usr/bin/env bash
# Written in session 41: the other first long command the next session may
# choose instead of next-served-gate.sh (issue 29; both fit one session's
# device time only alone). The proxies' verdict at the low concurrencies, on
# the series as it is now plus patches-wip/dsl-served-width-step-gate:
#   - the proxies (7.2B/1.1B-shaped, GPU-bound) last ran on the 32-patch stack
#     (sessions 31 and 34: >= 0.99x best-K SD at c = 1-64, noise 0.2-1.5%,
#     but 1.045x at c = 1 where the bar asks 1.10x); since then 0017-0019
#     (the host clock, the served width) and 0034-0036 (host launches) came
#     in, never measured on them;
#   - the step gate's GPU suite runs beside the proxies' build (no device time
#     of its own). The A/B has no ungated arm: its log's move lines show
#     the widths the gated rule chooses at c <= 8; the 16-64 requests where a
#     narrower verify paid (sessions 23-28) are not in it, and the gate's
#     cost there (see the wip's README) is for a later run.
# Before, here (done at the end of session 41; redo if vllm dsl or the wip
# changed): as next-served-gate.sh's header (bundles at f42a4b3, the wip
# tarball, the intree pack).
# Device: b1-b8 and the rows one call each, then this with carry
# .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip (returns in ~60 s), then
#   R=/tmp/s42p AB=s42p bash benchmarks/results/2026-12-05-h100-s41/next-collect.sh
# each call issued the moment the one before answers, until it says s42p ended.
# Arms fixed in advance, as sessions 31-34: sd2, sd3, sd4, target, dsl4 (the
# default config), best K read off the same run, one wave of 256-token
# requests a round, 1 warm + 8 ABBA rounds, DSL started alone; c = 1 first
# (the bar's 1.10x), then 4, 8, 2. Device time ~30 min (session 34: the
# proxies' build ~7 min beside the suite; c = 4, 2, 1 ~15 min).
#   read: python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz;
#         zgrep -a "served_width.py" abab.log.gz (the widths' moves).
set -uo pipefail
R=/tmp/s42p; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9 \
  .gpu-bundles/wip/dsl-served-width-step-gate.tgz) || exit 1
echo "$root" > "$R/root.txt"
source "$root/env.sh"
# The proxies build from the staged root's package (the models are shared by
# both roots); the suite and the A/B run on the wip's root.
SUITE_ROOT=$root SUITE_TIMEOUT_S=540 bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go AB_WAIT_S=1200 \
  bash scripts/gpu-host/ab-start.sh s42p -- --models "$root/models" \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency 1,4,8,2 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4' \
  --rounds 8 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" --exclude=s42p/suite-out -C /tmp s42p
echo "started: proxies + suite, then s42p (after $R/go)"
