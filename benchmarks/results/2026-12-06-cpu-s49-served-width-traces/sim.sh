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
# 0046's served_width.py (found by its subject: scripts/apply.sh's commits
# have the series' subjects, not this checkout's hashes).
rev=$(git -C vllm log --format=%H -1 --fixed-strings \
  --grep="DSL served width: log unpriced costs and the width a forget restarts from" dsl)
[[ -n $rev ]] || { echo "sim.sh: no 0046 on vllm/'s dsl branch: run scripts/apply.sh" >&2; exit 1; }
git -C vllm show "$rev:vllm/v1/spec_decode/dynamic/served_width.py" > "$tmp/sw_0046.py"
# No slow exploration once both neighbours were compared; no forgetting.
sed 's/^_EXPLORE_SLOW = 16$/_EXPLORE_SLOW = 1_000_000/' "$tmp/sw_0046.py" > "$tmp/sw_noslow.py"
sed 's/^_SHIFT = 0.2$/_SHIFT = 1e9/' "$tmp/sw_0046.py" > "$tmp/sw_noforget.py"
grep -q '^_EXPLORE_SLOW = 1_000_000$' "$tmp/sw_noslow.py"
grep -q '^_SHIFT = 1e9$' "$tmp/sw_noforget.py"
python3 "$here/life.py" --module "$tmp/sw_0046.py" --module "$tmp/sw_noslow.py" \
  --module "$tmp/sw_noforget.py" --seeds 20 --waves 9 > "$here/life.txt"
