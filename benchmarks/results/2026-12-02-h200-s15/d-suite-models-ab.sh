#!/usr/bin/env bash
# Session 15 (2026-12-02), command D, after b1-b3 were staged: stage b4, then
# - the GPU suite (scripts/gpu-host/suite.sh) and the in-tree CUDA tests, on the series
#   through 0049 in its present form (drafts priced by the loop's own stop rule, narrower
#   widths timed without drafting, width-0 forwards counted);
# - beside them, in their own process session: the 16-layer draft distilled on the
#   target's own greedy continuations (900 steps, as sessions 9-14), then the cost-scaled
#   proxies (smollm2-135m-x8b, smollm2-l16-self-x1b);
# - once the suite and the proxies are done, the A/B (ab.sh) in its own process session,
#   so it runs on across commands E and F (a setsid process lives until the machine goes
#   back; each of E and F only collects). One engine start-up for ~15 min of measuring,
#   where sessions 13 and 14 paid one per command.
# Measures: tests/gpu and the in-tree CUDA tests (pass/fail); the A/B is ab.sh's.
# Code: the series through 0049 (present form, f0c72cf and after).
# Results: $OUT/gpu-suite.tgz (suite.sh), $OUT/d.tgz (logs: host, intree, distillation,
# build_scaled, chain).
set -uo pipefail
T_START=$(date +%s)
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
HERE=benchmarks/results/2026-12-02-h200-s15
R=/tmp/s15; mkdir -p "$R/logs"
cp -r .gpu-bundles/prompts "$R/prompts"
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
while [ ! -f "$R/models.done" ] && [ $(( $(date +%s) - T_START )) -lt 585 ]; do sleep 2; done
cat "$R/logs/chain.log" 2>/dev/null
tar czf "$OUT/d.tgz" -C "$R" logs
if [ -f "$R/models.done" ]; then
  # A copy of what the A/B runs, so that the next commands' tree sync cannot touch it.
  mkdir -p "$R/tree/benchmarks" "$R/tree/tests"
  cp benchmarks/*.py "$HERE/ab.sh" "$R/tree/benchmarks/" && cp -r tests/e2e "$R/tree/tests/"
  setsid bash "$R/tree/benchmarks/ab.sh" > "$R/logs/ab-launch.log" 2>&1 < /dev/null &
  echo "A/B started at $(( $(date +%s) - T_START ))s"
else
  echo "models not ready: no A/B"
fi
