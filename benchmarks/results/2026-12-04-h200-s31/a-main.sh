#!/usr/bin/env bash
# Session 31 (written in session 30, not yet run; docs/dsl-at-batch-size.md
# Next 0). Command A, after b1-b6 and the rows were staged one call each; it
# carries .gpu-bundles/b7 and .gpu-bundles/prompts. Code: the 53-patch series
# alone (vllm dsl at 6831a37, bundles packed in session 29 with --cap 32MB):
# the served width rule 0053, no wip. Returns after ~285 s; long work runs in
# its own process sessions:
#   1. b7, check, host.txt (stage-last.sh, no wip: the staged root);
#   2. the proxies chain (deterministic distillation: compare its "draft
#      weights sha256" line with session 30's 6eb2d78b...) and beside it the
#      GPU suite's engine groups on the series, 480 s limit (beside-proxies.sh);
#   3. the verdict A/B s31 once both ended and the GPU has no process. Arms
#      fixed in advance: sd2 (base), sd3, sd4 (SD's best K is read off this
#      same run, which favours SD: no tune sweep fits beside five arms, and
#      session 30's draft may not share session 29's K), target (target-only),
#      dsl4 (the default config); c = 64, 32, 16, 8, 2, 1, 4; one wave of
#      256-token requests a round, run three times at 64 (--repeats-at 64:3,
#      each drained before the next: the same load, a longer round; session
#      30's --waves-at 64:2 made a stream of arrivals); 1 warm + 8 measured
#      ABBA rounds; DSL engine started alone. tokens_by_life says whether
#      acceptance drifts over a request's life (session 30's paired moves).
# Back: a.tgz. Collected by collect.sh. Then:
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=run/abab.json.gz
set -uo pipefail
T0=$(date +%s)
R=/tmp/s31; mkdir -p "$R"
root=$(bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b7) || exit 1
source /tmp/gpuhost/env.sh
SUITE_ROOT=$root bash scripts/gpu-host/beside-proxies.sh "$R" || exit 1
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=/tmp/s31/go AB_WAIT_S=900 bash scripts/gpu-host/ab-start.sh s31 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --repeats-at 64:3 --base-requests 4 \
  --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4' \
  --concurrency 64,32,16,8,2,1,4 --rounds 8 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
while (( $(date +%s) < T0 + 285 )) && [[ ! -f /tmp/s31/go ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s31
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
