#!/usr/bin/env bash
# Regenerates life.txt (~1 min on 2 cores, no GPU): cap 8 against cap 4 in one
# engine's life (waves of 8, then 32, then 64 requests), the served width as
# the series ships it (vllm/ applied, `scripts/apply_and_build.sh`) and one
# variant made from it here by sed: the narrower neighbour explored every
# _EXPLORE_FAST-th block until its slot is priced at the width (the series
# counts it as compared once the width has narrower counterfactuals). Then
# seed 0's window tests at cap 8 (ab_hooks.ServedWidthExplains).
# Usage: bash benchmarks/results/2026-12-07-cpu-s66-cap8-life/sim.sh [--help]
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
handle_help "$@"
here=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT"
module=vllm/vllm/v1/spec_decode/dynamic/served_width.py
[[ -f $module ]] || die "no $module: run scripts/apply_and_build.sh first"
py=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
old='        if size.narrower.ratios and size.width > 1:'
grep -qxF "$old" "$module" || { echo "sim.sh: $module no longer has the line the variant edits" >&2; exit 1; }
sed "s/^$old\$/        if size.narrower.ratios and size.width > 1 and size.last_slot is not None:/" \
  "$module" > "$tmp/sw_slot_first.py"
{
  echo "== the series ($(git -C vllm rev-parse --short HEAD))"
  "$py" "$here/life_cap.py" --module "$module" --seeds 10
  echo "== variant: the narrower neighbour explored fast until its slot is priced"
  "$py" "$here/life_cap.py" --module "$tmp/sw_slot_first.py" --seeds 10
  echo "== the series, seed 0, with its window tests"
  "$py" "$here/life_cap.py" --module "$module" --seeds 1 --explain
} 2> /dev/null | grep -v '^INFO' > "$here/life.txt"
