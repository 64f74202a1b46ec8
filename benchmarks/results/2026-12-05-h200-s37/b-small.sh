#!/usr/bin/env bash
# Session 37, command B on a fresh host (the first one went back mid-A/B after
# the suite had passed), after b1-b8 and the rows were staged again one call
# each. Carry .gpu-bundles/b9 and .gpu-bundles/prompts. Code: vllm dsl a3ff290
# (the bundle's git_head). With ~450 s of device time left after refusals,
# only issue 29's small-pair A/B, shrunk, in this one command: builds
# smollm2-135m + smollm2-l4 and distils the draft (DATA=self NL=4, the kept
# rows), then s37b: arms sd2,dsl4,dsl4+gpu fixed in advance (sd2 was SD's best
# K at c = 1 in session 34; sd4 at c = 8 and target dropped for time: this
# A/B asks whether 0018's rule beats the GPU-priced one, not the issue's
# verdict), c = 1 then 8, --repeats-at 1:2,8:6, 1 warm + 3 ABBA rounds;
# abab.json is written after each point. Collects whatever ran by BUDGET_S
# (default 330) seconds after the start into $OUT (b.tgz, s37b.tgz). It ran as
# `STEPS=150 BUDGET_S=280 bash ...b-small.sh` with 308 s left: a 150-step draft
# (README.md).
set -uo pipefail
T0=$(date +%s); BUDGET_S=${BUDGET_S:-330}
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
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json --arms 'sd2,dsl4,dsl4+gpu' \
  --arm-options '{"gpu": {"engine": {"worker_extension_cls": "ab_hooks.HostClockOff"}, "rpc": "dsl_price_gpu_time_only"}}' \
  --rounds 3 --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
bash scripts/gpu-host/ab-collect.sh s37b --wait $(( BUDGET_S - ($(date +%s) - T0) )) 2>&1 | grep -v INFO | tail -n 30
tar czf "$OUT/b.tgz" -C /tmp s37b
echo "small draft: $(cat $R/small.rc 2>/dev/null || echo running)"
