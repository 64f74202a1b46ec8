#!/usr/bin/env bash
# Regenerates explore.txt (~1 min on 2 cores, no GPU): the served width (vllm
# dsl at 0046) and the same with no exploration once both neighbours were
# compared, read as session 50 read the H100 (steps of exactly B requests,
# after the warm round).
# Usage: bash benchmarks/results/2026-12-06-cpu-s50-explore-cost/sim.sh [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,5p "$0"; exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rev=$(git -C vllm log --format=%H -1 --fixed-strings \
  --grep="DSL served width: log unpriced costs and the width a forget restarts from" dsl)
[[ -n $rev ]] || { echo "sim.sh: no 0046 on vllm/'s dsl branch: run scripts/apply.sh" >&2; exit 1; }
git -C vllm show "$rev:vllm/v1/spec_decode/dynamic/served_width.py" > "$tmp/sw_0046.py"
# What ab_hooks.ServedExploresUntilCompared does on the GPU (dsl4+once).
sed 's/^_EXPLORE_SLOW = 16$/_EXPLORE_SLOW = 1_000_000/' "$tmp/sw_0046.py" > "$tmp/sw_once.py"
grep -q '^_EXPLORE_SLOW = 1_000_000$' "$tmp/sw_once.py"
python3 "$here/explore.py" --module "$tmp/sw_0046.py" --module "$tmp/sw_once.py" \
  --seeds 20 --waves 13 > "$here/explore.txt"
