#!/usr/bin/env bash
# Regenerates explore.txt (~15 s on 2 cores, no GPU): the served width (vllm
# dsl at 0046) and the same with no exploration once both neighbours were
# compared (sw_noslow.py: what ab_hooks.ServedExploresUntilCompared does on
# the GPU, the dsl4+once arm), read as session 50 read the H100 (steps of
# exactly B requests, after the warm round).
# Usage: bash benchmarks/results/2026-12-06-cpu-s50-explore-cost/sim.sh [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,6p "$0"; exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/../2026-12-06-cpu-s49-served-width-traces/modules.sh" "$tmp"
python3 "$here/explore.py" --module "$tmp/sw_0046.py" --module "$tmp/sw_noslow.py" \
  --seeds 20 --waves 13 > "$here/explore.txt"
