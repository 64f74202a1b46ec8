#!/usr/bin/env bash
# Session 45, after the host that ran a-main.sh went back idle (the first
# collect call's files were read before the next call was issued: 30 s idle
# release): on a fresh host with b1..b10 staged one call each, carry
# .gpu-bundles/b11, .gpu-bundles/prompts and .gpu-bundles/intree. The GPU
# suite's engine groups on the 41-patch series (0041 has not run on a GPU),
# then the kernel files and the in-tree CUDA tests; results into $OUT as they
# come (a call cut by its limit still brings them back).
# SUITE_TIMEOUT_S (default 300) and AFTER_S (default 80) bound the two parts.
set -uo pipefail
R=$OUT/s45-suite; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b11) || exit 1
source "$root/env.sh"
PYTEST_ARGS=$(bash scripts/gpu-host/after-suite.sh --ignores) SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-300} \
  OUT=$R bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1; echo $? > "$R/suite.rc"
pkill -f "tests/gpu/engine_worke[r]"; sleep 2; pkill -9 -f "tests/gpu/engine_worke[r]"
tail -n 4 "$R/suite.out"
bash scripts/gpu-host/after-suite.sh "$R" "${AFTER_S:-80}" > "$R/after-suite.out" 2>&1
echo "suite rc $(cat "$R/suite.rc"); kernels rc $(cat "$R/kernels.rc" 2>/dev/null); intree rc $(cat "$R/intree.rc" 2>/dev/null)"
tail -n 1 "$R/kernels.log" "$R/intree.log" 2>/dev/null
