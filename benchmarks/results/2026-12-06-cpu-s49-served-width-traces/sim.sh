#!/usr/bin/env bash
# Regenerates life.txt (~20 s on 2 cores, no GPU): the served width (vllm dsl
# at 0046) and two measuring variants of it, driven by the drafter's traces.
# Usage: bash benchmarks/results/2026-12-06-cpu-s49-served-width-traces/sim.sh [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,4p "$0"; exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/modules.sh" "$tmp"
python3 "$here/life.py" --module "$tmp/sw_0046.py" --module "$tmp/sw_noslow.py" \
  --module "$tmp/sw_noforget.py" --seeds 20 --waves 9 > "$here/life.txt"
