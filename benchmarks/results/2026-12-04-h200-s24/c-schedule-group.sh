#!/usr/bin/env bash
# Session 24 (2026-12-04), second host (the 360 s of device time left): the GPU
# suite's new v2-schedule group on the series through 0052 (vllm dsl: the
# bundles of 5d4abcf with the files 0051-0052 change laid over them,
# .gpu-bundles/wip/series-0052.tgz). After b1-b4 (+ prompts, wip) were staged.
# Builds the suite's small models (target + undistilled 4-layer draft), runs
# tests/gpu/test_dsl_greedy.py -k schedule (greedy identity of SD and DSL with
# a width schedule against target-only; every uniform decode step of the target
# on a FULL graph), tarring what it has into $OUT every 10 s so a cut run still
# returns its results. LIMIT_S bounds pytest (default 200).
set -uo pipefail
T0=$(date +%s)
R=/tmp/s24b; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s24b .gpu-bundles/wip/series-0052.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
# shellcheck disable=SC1091
source "$root/env.sh"
GPU_HOST_ROOT=$root DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 \
  || { tail "$R/build_models.log"; exit 1; }
echo "[$(( $(date +%s) - T0 ))s] models built" | tee "$R/times.log"
(
  DSL_GPU_MODELS=$root/models DSL_GPU_DRAFT=smollm2-l4 DSL_GPU_PROMPTS=.gpu-bundles/prompts \
  DSL_GPU_RESULTS=$R/raw DSL_GPU_PARALLEL=1 timeout "${LIMIT_S:-200}" \
    python3 -m pytest -q -rfEs -p no:cacheprovider --junitxml="$R/junit.xml" \
    tests/gpu/test_dsl_greedy.py -k schedule > "$R/pytest.log" 2>&1
  echo "pytest rc=$?" >> "$R/pytest.log"
) &
p=$!
while kill -0 "$p" 2>/dev/null; do tar czf "$OUT/s24b.tgz" -C /tmp s24b 2>/dev/null; sleep 10; done
echo "[$(( $(date +%s) - T0 ))s] done" >> "$R/times.log"
tar czf "$OUT/s24b.tgz" -C /tmp s24b
tail -n 25 "$R/pytest.log"
