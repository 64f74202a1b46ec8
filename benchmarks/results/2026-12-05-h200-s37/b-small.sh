#!/usr/bin/env bash
# Session 37, command B on a fresh host (the first one went back mid-A/B after
# the suite had passed), after b1-b8 and the rows were staged again one call
# each. Carry .gpu-bundles/b9 and .gpu-bundles/prompts. Code: vllm dsl a3ff290
# (the bundle's git_head). With ~590 s of device time left, only issue 29's
# small-pair A/B, shrunk: builds smollm2-135m + smollm2-l4 and distils the
# draft (DATA=self NL=4, the kept rows), then s37b: arms sd2,sd4,target,dsl4,
# dsl4+gpu fixed in advance (sd2 and sd4 were best K at c = 1 and 8 in session
# 34; sd3 dropped for time), c = 1 then 8, --repeats-at 1:2,8:6, 1 warm + 4
# ABBA rounds; abab.json is written after each point. Returns at once;
# `bash scripts/gpu-host/ab-collect.sh s37b --wait S` brings it back.
set -uo pipefail
R=/tmp/s37b; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source $root/env.sh
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
export R M
setsid bash -c 'DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"; cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json"' \
  < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=600 AB_WAIT_FILE=$R/small.rc AB_WAIT_S=400 \
  bash scripts/gpu-host/ab-start.sh s37b -- --models $M \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json --arms 'sd2,sd4,target,dsl4,dsl4+gpu' \
  --arm-options '{"gpu": {"engine": {"worker_extension_cls": "ab_hooks.HostClockOff"}, "rpc": "dsl_price_gpu_time_only"}}' \
  --rounds 4 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
tar czf "$OUT/b.tgz" -C /tmp s37b
echo "started: models, small draft, s37b (after small.rc)"
