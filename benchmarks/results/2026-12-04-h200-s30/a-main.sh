#!/usr/bin/env bash
# Session 30 (written in session 29, not yet run; docs/dsl-at-batch-size.md
# Next 0). Command A, after b1-b6 and the rows were staged one call each; it
# carries .gpu-bundles/b7, .gpu-bundles/prompts and .gpu-bundles/wip. Code: the
# 53-patch series (vllm dsl, bundles packed in session 29 with --cap 32MB) with
# patches-wip/dsl-served-units 0001-0003 (vllm wip-units, .gpu-bundles/wip/units.tgz)
# laid over it: the candidate final rule. Returns after ~285 s; long work runs
# in its own process sessions:
#   1. b7, check, host.txt, the wip root (stage-last.sh);
#   2. the proxies chain (the distillation now deterministic, its log's
#      "draft weights sha256" line names the draft) and beside it the GPU
#      suite's engine groups on the wip root, 480 s limit (beside-proxies.sh;
#      the in-process kernel files left out: neither 0053 nor the wip changes
#      their code; they passed on the series in session 25);
#   3. the verdict A/B s30 once both ended and the GPU has no process
#      (beside-proxies.sh's go file). Arms fixed in advance: sd2 (base; SD's
#      K on the tune split of session 29: 2 at every c), target (target-only), dsl4 (the default config: 0053 + the
#      units), dsl4@1-4:4/5-64:2 (the oracle widths); c = 64, 32, 16, 8, 2, 1,
#      4; one wave of 256-token requests a round, two at 64 (--waves-at 64:2:
#      one wave spread 2.9-3.3% there in sessions 28-29); 2 warm + 10 measured
#      ABBA rounds; DSL engines started alone.
# Back: a.tgz. Collected by collect.sh. Then:
#   python3 benchmarks/verdict.py --dsl-arm dsl4 \
#     --tune benchmarks/results/2026-12-04-h200-s29/tune/abab.json.gz \
#     --out verdict.json proxies=run/abab.json.gz
set -uo pipefail
T0=$(date +%s)
R=/tmp/s30; mkdir -p "$R"
root=$(bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b7 .gpu-bundles/wip/units.tgz) || exit 1
source /tmp/gpuhost/env.sh
SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=/tmp/s30/go AB_WAIT_S=900 bash scripts/gpu-host/ab-start.sh s30 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --waves-at 64:2 --base-requests 4 \
  --engine "$E" --out abab.json --arms 'sd2,target,dsl4,dsl4@1-4:4/5-64:2' \
  --concurrency 64,32,16,8,2,1,4 --rounds 10 --warm-rounds 2 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
while (( $(date +%s) < T0 + 285 )) && [[ ! -f /tmp/s30/go ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s30
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
