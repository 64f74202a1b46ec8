#!/usr/bin/env bash
# Writes into DIR the served width as 0046 ships it (sw_0046.py, found on
# vllm/'s dsl branch by its subject: scripts/apply.sh's commits have the
# series' subjects, not this checkout's hashes) and two measuring variants
# made from it by sed (never built): no exploration once both neighbours were
# compared (sw_noslow.py, what ab_hooks.ServedExploresUntilCompared does on a
# GPU) and no forgetting (sw_noforget.py). Run from the repository root; the
# simulations' sim.sh scripts call it.
# Usage: bash benchmarks/results/2026-12-06-cpu-s49-served-width-traces/modules.sh DIR [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,9p "$0"; exit 0
fi
[[ $# -eq 1 && -d $1 ]] || { echo "modules.sh: one argument, an existing DIR (see --help)" >&2; exit 2; }
dir=$1
rev=$(git -C vllm log --format=%H -1 --fixed-strings \
  --grep="DSL served width: log unpriced costs and the width a forget restarts from" dsl)
[[ -n $rev ]] || { echo "modules.sh: no 0046 on vllm/'s dsl branch: run scripts/apply.sh" >&2; exit 1; }
git -C vllm show "$rev:vllm/v1/spec_decode/dynamic/served_width.py" > "$dir/sw_0046.py"
sed 's/^_EXPLORE_SLOW = 16$/_EXPLORE_SLOW = 1_000_000/' "$dir/sw_0046.py" > "$dir/sw_noslow.py"
sed 's/^_SHIFT = 0.2$/_SHIFT = 1e9/' "$dir/sw_0046.py" > "$dir/sw_noforget.py"
grep -q '^_EXPLORE_SLOW = 1_000_000$' "$dir/sw_noslow.py"
grep -q '^_SHIFT = 1e9$' "$dir/sw_noforget.py"
