#!/usr/bin/env bash
# Session 35, second host (the first went back between B and C: the suite's
# tarball and the profile's DSL arm were lost with it). One command after
# b1-b8 were staged one call each; carry .gpu-bundles/b9, .gpu-bundles/rows,
# .gpu-bundles/prompts, .gpu-bundles/intree. Everything in the foreground,
# results into $OUT by T0+575 s whatever has finished:
# DEADLINE (s, default 570): when the tarball is written; set it under the
# command's limit (the session's device time left).
#   1. b9, check, host.txt (stage-last.sh);
#   2. the whole GPU suite on the final series: engine groups (suite.sh, the
#      kernel files left out), then the kernel files and the in-tree CUDA
#      tests; the small pair's draft (distill.py DATA=self NL=4) beside them;
#   3. once the GPU is quiet, profile_step.py --arms dsl2 at c = 1 on the
#      small pair (host 1 profiled sd2: ../../.../s35prof), then sd2 again if
#      time is left (the same host's twin).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s35x; mkdir -p "$R/suite-out"
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/times.log"; }
finish() { tar czf "$OUT/x.tgz" -C /tmp s35x --exclude=s35x/prof-run/tree; stamp "tarred"; }
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source $root/env.sh
M=$root/models; mkdir -p "$M" && cp .gpu-bundles/rows/self-rows-*.pt "$M/"
stamp "staged"
export R M
OUT=$R/suite-out GPU_HOST_ROOT=$root DSL_GPU_PARALLEL=15 SUITE_DRAFT_LAYERS=4 SUITE_TIMEOUT_S=420 \
  PYTEST_ARGS="--ignore=tests/gpu/test_conditional_graph.py --ignore=tests/gpu/test_confidence_kernel.py --ignore=tests/gpu/test_dsl_kernels.py --ignore=tests/gpu/test_near_ties.py" \
  bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1 &
suite=$!
( end=$(( $(date +%s) + 300 ))
  while [[ ! -f "$M/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do sleep 1; done
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc" ) &
distill=$!
wait $suite; echo $? > "$R/suite.rc"; stamp "suite rc=$(cat $R/suite.rc)"
pkill -f "tests/gpu/engine_worke[r]"; sleep 2; pkill -9 -f "tests/gpu/engine_worke[r]"
cp "$R/suite-out/gpu-suite.tgz" "$OUT/" 2>/dev/null
timeout 150 python3 -m pytest -q -rfEs -p no:cacheprovider tests/gpu/test_conditional_graph.py \
  tests/gpu/test_confidence_kernel.py tests/gpu/test_dsl_kernels.py tests/gpu/test_near_ties.py \
  > "$R/kernels.log" 2>&1; echo $? > "$R/kernels.rc"; stamp "kernels rc=$(cat $R/kernels.rc)"
(cd .gpu-bundles/intree && timeout 150 python3 -m pytest -q -rfEs -p no:cacheprovider \
  --rootdir . --noconftest tests) > "$R/intree.log" 2>&1; echo $? > "$R/intree.rc"
stamp "intree rc=$(cat $R/intree.rc)"
wait $distill; stamp "small draft rc=$(cat $R/small.rc 2>/dev/null)"
for _ in $(seq 30); do
  [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) ]] && break
  sleep 1
done
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
left=$(( T0 + ${DEADLINE:-570} - 8 - $(date +%s) ))
if (( left > 60 )); then
  stamp "profile dsl2,sd2 (${left}s left)"
  timeout "$left" python3 benchmarks/profile_step.py --models "$M" --target smollm2-135m \
    --draft smollm2-l4-self --prompts .gpu-bundles/prompts --out "$R/prof" \
    --arms dsl2,sd2 --concurrency 1 --engine "$E" > "$R/profile_step.log" 2>&1
  stamp "profile rc=$?"
fi
finish
