#!/usr/bin/env bash
# Session 12 (2026-12-02), command F4, after b1-b3 of a fresh pack of the final series
# (through 0045) were staged on a new host: the in-tree CUDA tests (vllm/tests copies in
# .gpu-bundles/intree) and the V1 engine groups of the GPU suite (0045 removed the V1
# trim that gave a wrong token in command D's run). $OUT/f.tgz.
set -uo pipefail
bash scripts/install-offline.sh .gpu-bundles/b4 && bash scripts/install-offline.sh check || exit 1
source /tmp/gpuhost/env.sh
R=/tmp/s12f; mkdir -p "$R/raw"; M=/tmp/gpuhost/models
DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 || tail "$R/build_models.log"
touch "$M/smollm2-135m/.built" "$M/smollm2-l4/.built"
( cd .gpu-bundles/intree && timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs \
    --rootdir . --noconftest . > "$R/intree.log" 2>&1; echo "intree rc=$?" >> "$R/intree.log" ) &
DSL_GPU_MODELS=$M DSL_GPU_DRAFT=smollm2-l4 DSL_GPU_PROMPTS=.gpu-bundles/prompts \
DSL_GPU_RESULTS=$R/raw DSL_GPU_PARALLEL=14 timeout 170 python3 -m pytest -q -rfEs \
  -p no:cacheprovider --junitxml="$R/junit.xml" tests/gpu/test_dsl_greedy.py \
  -k "v1-async or v1_async" > "$R/pytest.log" 2>&1
echo "suite rc=$?"
wait
tail -n 12 "$R/intree.log"; tail -n 25 "$R/pytest.log"
tar czf "$OUT/f.tgz" -C "$R" .
