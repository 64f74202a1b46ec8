#!/usr/bin/env bash
# Session 16 (2026-12-02), command D, after b1-b3 were staged: stage b4, then
# - the GPU suite (scripts/gpu-host/suite.sh) and the in-tree CUDA tests, on the final
#   series of the session (48 patches, vllm dsl 9b414ffe; 0049 is in patches-wip/);
# - beside them, in their own process session: the 16-layer draft distilled on the
#   target's own greedy continuations (900 steps, as sessions 9-15), then the cost-scaled
#   proxies (smollm2-135m-x8b, smollm2-l16-self-x1b);
# - once the suite is done, two runs in their own process sessions, one after the other
#   (scripts/gpu-host/ab-start.sh; commands E and F collect them with ab-collect.sh):
#   "hand", review item 2's A/B (the MRV2 sync-scheduling hand-off: hand.sh's question),
#   waiting for the proxies; then "prof", where a served step's time goes at 32 requests
#   (benchmarks/profile_step.py, prof.sh's question), waiting for "hand" to end.
# Measures: tests/gpu and the in-tree CUDA tests (pass/fail). Code: the 48-patch series.
# Results: $OUT/gpu-suite.tgz (suite.sh), $OUT/d.tgz (logs: host, intree, distillation,
# build_scaled, chain).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
HERE=benchmarks/results/2026-12-02-h200-s16
R=/tmp/s16; mkdir -p "$R/logs"
M=/tmp/gpuhost/models S=scripts/gpu-host
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv > "$R/logs/host.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" >> "$R/logs/host.txt" 2>&1
setsid bash -c "
  cd $PWD
  for i in \$(seq 300); do [ -f $M/smollm2-l16/.built ] && break; sleep 2; done
  DATA=self NL=16 STEPS=900 python3 $S/distill.py > $R/logs/distill-l16-self.log 2>&1
  echo \"distill-l16-self rc=\$? \$(( \$(date +%s) - $T0 ))s\" >> $R/logs/chain.log
  DRAFT=smollm2-l16-self python3 $S/build_scaled.py > $R/logs/build_scaled.log 2>&1
  echo \"build_scaled rc=\$? \$(( \$(date +%s) - $T0 ))s\" >> $R/logs/chain.log
  touch $R/models.done
" > /dev/null 2>&1 < /dev/null &
(
  cd .gpu-bundles/intree && timeout 300 python3 -m pytest -q -p no:cacheprovider -rfEs \
    --rootdir . --noconftest tests > "$R/logs/intree.log" 2>&1
  echo "intree rc=$?" >> "$R/logs/intree.log"
) &
intree=$!
SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-480} DSL_GPU_PARALLEL=16 bash scripts/gpu-host/suite.sh
echo "suite rc=$? $(( $(date +%s) - T0 ))s"
wait $intree
tail -n 8 "$R/logs/intree.log"
AB_WAIT_FILE=$R/models.done bash "$HERE/hand.sh"
AB_WAIT_FILE=/tmp/ab/hand/rc AB_WAIT_S=1500 bash "$HERE/prof.sh"
cat "$R/logs/chain.log" 2>/dev/null
tar czf "$OUT/d.tgz" -C "$R" logs
