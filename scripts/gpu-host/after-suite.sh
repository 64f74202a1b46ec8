#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/after-suite.sh LOG_DIR [TIMEOUT_S] | --ignores | --help
#
# On the GPU host, once scripts/gpu-host/suite.sh has run the engine groups:
# runs the GPU suite's kernel files (their own pytest, one process: they need
# no engine and no parallel workers) and then the in-tree CUDA tests of the
# series (carry .gpu-bundles/intree, made by scripts/gpu-host/pack-intree.sh).
# Writes LOG_DIR/kernels.log and LOG_DIR/intree.log, and each exit status to
# LOG_DIR/kernels.rc and LOG_DIR/intree.rc; each run under TIMEOUT_S (default
# 150) seconds. The environment must be the staged root's (`source ROOT/env.sh`).
#   --ignores   prints the --ignore flags that leave these kernel files out of
#               suite.sh's engine groups (PYTEST_ARGS="$(... --ignores)"), so
#               the list lives only here.
# Exit status: 0 when both passed, else 1 (the .rc files say which).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
kernel_files=(tests/gpu/test_conditional_graph.py tests/gpu/test_confidence_kernel.py
              tests/gpu/test_dsl_kernels.py tests/gpu/test_near_ties.py)
if [[ "${1:-}" == "--ignores" ]]; then
  printf -- '--ignore=%s ' "${kernel_files[@]}"; echo; exit 0
fi
help_or_usage "$@"
logs=$1 limit=${2:-150}
[[ "$limit" =~ ^[0-9]+$ ]] || { echo "after-suite.sh: TIMEOUT_S '$limit' must be whole seconds" >&2; exit 2; }
[[ -d .gpu-bundles/intree/tests ]] || {
  echo "after-suite.sh: no .gpu-bundles/intree/tests: run scripts/gpu-host/pack-intree.sh here and carry .gpu-bundles/intree" >&2
  exit 2; }
mkdir -p "$logs"
set +e
timeout "$limit" python3 -m pytest -q -rfEs -p no:cacheprovider "${kernel_files[@]}" \
  > "$logs/kernels.log" 2>&1
echo $? > "$logs/kernels.rc"
(cd .gpu-bundles/intree && timeout "$limit" python3 -m pytest -q -rfEs -p no:cacheprovider \
  --rootdir . --noconftest tests) > "$logs/intree.log" 2>&1
echo $? > "$logs/intree.rc"
set -e
[[ $(cat "$logs/kernels.rc") == 0 && $(cat "$logs/intree.rc") == 0 ]]
