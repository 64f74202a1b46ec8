#!/usr/bin/env bash
# Session 14 (2026-12-02), command D, after b1-b3 were staged: stage b4, then at once
# - the GPU suite (scripts/gpu-host/suite.sh: cheap models, built beside it), on the
#   final series of the session;
# - the in-tree CUDA tests (scripts/gpu-host/pack-intree.sh: .gpu-bundles/intree);
# - in their own process session, one after the other: the benchmark's 16-layer draft
#   distilled on the target's own greedy continuations (900 steps, as sessions 9-13),
#   then the cost-scaled proxies (smollm2-135m-x8b, smollm2-l16-self-x1b) that commands
#   E and F measure. Session 13's chain also made the drafter's calibration table and the
#   small pair's 4-layer distilled draft: neither is used this session (s13 has the
#   table, same recipe; no small-pair command), so they run only with D_EXTRAS=1
#   (~110 s more). This command waits for the chain (up to its limit) so that nothing
#   else runs on the GPU while command E measures.
# Measures: tests/gpu and the in-tree CUDA tests (pass/fail), no benchmark numbers.
# Code: the series through 0049 (draft width per batch size).
# Results: $OUT/gpu-suite.tgz (suite.sh: pytest.log, junit.xml, raw/, models/*.log,
# times.log), $OUT/d.tgz (logs: host, intree, distillation, build_scaled, chain).
set -uo pipefail
T_START=$(date +%s)
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
R=/tmp/s14; mkdir -p "$R/logs"
M=/tmp/gpuhost/models S=scripts/gpu-host
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv > "$R/logs/host.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" >> "$R/logs/host.txt" 2>&1
if [ "${D_EXTRAS:-0}" = 1 ]; then
  EXTRAS="
  timeout 150 python3 benchmarks/calibration.py --target $M/smollm2-135m \
    --draft $M/smollm2-l16-self --prompts .gpu-bundles/prompts --dataset sharegpt-tune \
    --out $R/calibration.json > $R/logs/calibration.log 2>&1
  echo \"calibration rc=\$? \$(( \$(date +%s) - $T0 ))s\" >> $R/logs/chain.log
  python3 $S/distill.py > $R/logs/distill-l4-kd.log 2>&1
  echo \"distill-l4-kd rc=\$? \$(( \$(date +%s) - $T0 ))s\" >> $R/logs/chain.log"
else
  EXTRAS=":"
fi
setsid bash -c "
  cd $PWD
  for i in \$(seq 300); do [ -f $M/smollm2-l16/.built ] && break; sleep 2; done
  DATA=self NL=16 STEPS=900 python3 $S/distill.py > $R/logs/distill-l16-self.log 2>&1
  echo \"distill-l16-self rc=\$? \$(( \$(date +%s) - $T0 ))s\" >> $R/logs/chain.log
  $EXTRAS
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
SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-500} DSL_GPU_PARALLEL=16 bash scripts/gpu-host/suite.sh
echo "suite rc=$? $(( $(date +%s) - T0 ))s"
wait $intree
tail -n 8 "$R/logs/intree.log"
# 575 s from the start of the command (s13 counted from after staging b4: ~595 s in all,
# close to the 600 s per-command limit).
while [ ! -f "$R/models.done" ] && [ $(( $(date +%s) - T_START )) -lt ${WAIT_UNTIL_S:-575} ]; do sleep 2; done
cat "$R/logs/chain.log" 2>/dev/null
tail -n 14 "$R/logs/calibration.log" 2>/dev/null
tar czf "$OUT/d.tgz" -C "$R" logs $( [ -f "$R/calibration.json" ] && echo calibration.json )
