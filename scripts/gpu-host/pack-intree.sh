#!/usr/bin/env bash
# Usage: scripts/gpu-host/pack-intree.sh [--help] [OUT]
#
# Runs here. Copies the series' CUDA tests from vLLM's tree (vllm/tests: the files the
# series adds or changes that need CUDA, with the test modules they import and their
# packages' __init__.py) into OUT (default .gpu-bundles/intree), keeping their paths,
# so that they travel with a device command (carry=[".gpu-bundles/intree"]) and run on
# the staged host against the staged vllm package:
#
#   cd .gpu-bundles/intree && python3 -m pytest -q --rootdir . --noconftest tests
#
# (--noconftest: vLLM's tests/conftest.py needs packages the host does not have.)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage_from_header "$0"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/.gpu-bundles/intree}
V=$ROOT/vllm
[[ -d $V/.git || -f $V/.git ]] || { echo "pack-intree.sh: no vllm/ checkout: run scripts/apply_and_build.sh first" >&2; exit 1; }
FILES=(
  tests/v1/spec_decode/test_draft_confidence_exit.py
  tests/v1/spec_decode/test_draft_confidence_exit_cuda.py
  tests/v1/spec_decode/test_draft_confidence_exit_rule.py
  tests/v1/spec_decode/test_acceptance_estimator.py
  tests/v1/worker/test_gpu_conditional_graph.py
  tests/v1/worker/test_gpu_conditional_graph_cuda.py
  tests/v1/worker/test_gpu_drafted_counts_cuda.py
)
rm -rf "$OUT" && mkdir -p "$OUT"
for f in "${FILES[@]}"; do
  [[ -f $V/$f ]] || { echo "pack-intree.sh: $f is not in vllm/ (renamed? update FILES)" >&2; exit 1; }
  mkdir -p "$OUT/$(dirname "$f")"
  cp "$V/$f" "$OUT/$f"
  d=$(dirname "$f")
  while [[ $d != . ]]; do
    [[ -f $V/$d/__init__.py ]] && cp "$V/$d/__init__.py" "$OUT/$d/__init__.py"
    d=$(dirname "$d")
  done
done
echo "pack-intree.sh: ${#FILES[@]} test files in $OUT"
