#!/usr/bin/env bash
# Session 12 (2026-12-02), command D, after b1-b3 were staged: stage b4, then at once
# - the benchmark's models, in their own process session (they outlive this command):
#   the 16-layer draft distilled on the target's own greedy continuations (900 steps, as
#   sessions 9/10) and the cost-scaled proxies of both;
# - the in-tree CUDA tests of the series (vllm/tests copies in .gpu-bundles/intree);
# - the GPU suite (scripts/gpu-host/suite.sh: cheap models, built beside it).
# Code: the series through 0044 (patches/ of the commit that adds this file).
# Results: $OUT/gpu-suite.tgz (suite.sh), $OUT/d.tgz (logs, intree).
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
R=/tmp/s12; mkdir -p "$R/logs"
M=/tmp/gpuhost/models S=scripts/gpu-host
nvidia-smi --query-gpu=name,driver_version,memory.used,utilization.gpu --format=csv > "$R/logs/host.txt"
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" >> "$R/logs/host.txt" 2>&1
setsid bash -c "
  cd $PWD
  for i in \$(seq 300); do [ -f $M/smollm2-l16/.built ] && break; sleep 2; done
  DATA=self NL=16 STEPS=900 python3 $S/distill.py > $R/logs/distill-l16-self.log 2>&1
  echo \"distill rc=\$? \$(date +%T)\" >> $R/logs/chain.log
  DRAFT=smollm2-l16-self python3 $S/build_scaled.py > $R/logs/build_scaled.log 2>&1
  echo \"build_scaled rc=\$? \$(date +%T)\" >> $R/logs/chain.log
  touch $R/models.done
" > /dev/null 2>&1 < /dev/null &
(
  cd .gpu-bundles/intree && timeout 300 python3 -m pytest -q -p no:cacheprovider -rfEs \
    --rootdir . --noconftest . > "$R/logs/intree.log" 2>&1
  echo "intree rc=$?" >> "$R/logs/intree.log"
) &
intree=$!
SUITE_DRAFT_LAYERS=4,16 SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-420} bash scripts/gpu-host/suite.sh
echo "suite rc=$?"
wait $intree
tail -n 15 "$R/logs/intree.log"
cat "$R/logs/chain.log" 2>/dev/null
tar czf "$OUT/d.tgz" -C "$R" logs
