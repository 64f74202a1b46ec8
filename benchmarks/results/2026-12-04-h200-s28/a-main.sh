#!/usr/bin/env bash
# Session 28 (2026-12-04). Command A, after b1-b5 and the rows were staged; it
# carries .gpu-bundles/b6, .gpu-bundles/prompts and .gpu-bundles/wip. Code:
# the 52-patch series (vllm dsl a2ad194, bundles packed in session 27) with
# patches-wip/dsl-served-width 0001-0008 (vllm wip-served c596d43, served.tgz)
# laid over it by wip-root.sh; every engine here runs on that wip root.
# Returns after ~285 s with short output (docs/gpu-host.md); long work runs in
# its own process sessions:
#   1. b6, check; the wip root;
#   2. the proxies chain (proxies-start.sh: waits for the suite's 16-layer
#      truncation, distils it on the kept rows, scales the pair);
#   3. beside it, the GPU suite's engine groups on the wip root (the scheduler
#      every DSL engine runs changed in 0005-0008): test_dsl_greedy,
#      test_dsl_stress, test_dsl_eagle, 480 s limit. The in-process kernel
#      files are left out (test_conditional_graph, test_confidence_kernel,
#      test_dsl_kernels, test_near_ties): the wip changes none of their code,
#      and they passed on the series in session 25;
#   4. the A/B s28 (docs/dsl-at-batch-size.md Next 0), started once both the
#      proxies and the suite are done (nothing else on the GPU while it runs).
#      Arms fixed in advance, as session 27: sd2 (base), dsl4 (the served
#      width rule 0001-0008, default config), dsl4@1-4:4/5-64:2 (the oracle
#      widths at the same cap); c = 64, 32, 16, 8 (where 0004 lost), then
#      2, 1, 4; one wave of 256-token requests, 2 warm + 10 measured ABBA
#      rounds per point; DSL engines started alone; cudagraph_metrics on.
# Back: a.tgz (staging, host, proxies and suite logs so far). Collected by
# collect.sh.
set -uo pipefail
T0=$(date +%s)
R=/tmp/s28; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b6 > "$R/stage-b6.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b6.log" 2>&1 || { tail -n 5 "$R/stage-b6.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime
  python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"; } > "$R/host.txt" 2>&1
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s28 .gpu-bundles/wip/served.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
cp .gpu-bundles/rows/self-rows-*.pt /tmp/gpuhost/models/ 2>/dev/null
bash scripts/gpu-host/proxies-start.sh > "$R/proxies-start.log" 2>&1 || { cat "$R/proxies-start.log"; exit 1; }
ign="--ignore=tests/gpu/test_conditional_graph.py --ignore=tests/gpu/test_confidence_kernel.py"
ign+=" --ignore=tests/gpu/test_dsl_kernels.py --ignore=tests/gpu/test_near_ties.py"
mkdir -p "$R/suite-out"
# The suite's engine workers must not outlive it (timeout ends pytest only).
OUT=$R/suite-out GPU_HOST_ROOT=$root DSL_GPU_PARALLEL=15 SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=480 \
PYTEST_ARGS=$ign setsid bash -c 'bash scripts/gpu-host/suite.sh > /tmp/s28/suite.out 2>&1; echo $? > /tmp/s28/suite.rc
  pkill -f "tests/gpu/engine_worke[r]"; sleep 3; pkill -9 -f "tests/gpu/engine_worke[r]"; true' < /dev/null > /dev/null 2>&1 &
setsid bash -c 'while [[ ! -f /tmp/proxies/done || ! -f /tmp/s28/suite.rc ]]; do sleep 1; done
  for _ in $(seq 60); do [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader) ]] && break; sleep 1; done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > /tmp/s28/gpu-apps-at-go.csv 2>&1
  touch /tmp/s28/go' < /dev/null > /dev/null 2>&1 &
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=/tmp/s28/go AB_WAIT_S=900 bash scripts/gpu-host/ab-start.sh s28 -- \
  --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 --engine "$E" \
  --out abab.json --arms 'sd2,dsl4,dsl4@1-4:4/5-64:2' --concurrency 64,32,16,8,2,1,4 \
  --rounds 10 --warm-rounds 2 --dsl-starts-alone > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
while (( $(date +%s) < T0 + 285 )) && [[ ! -f /tmp/s28/go ]]; do sleep 2; done
cp /tmp/proxies/*.log "$R/" 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s28
echo "[$(( $(date +%s) - T0 ))s] A done; proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite: $(tail -n 2 /tmp/gpu-suite/times.log 2>/dev/null | tr '\n' ' ')"
