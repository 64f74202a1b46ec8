#!/usr/bin/env bash
# Regenerates c1.txt and branch-counts.txt (~30 s on 2 cores, no GPU): slot-first against the series
# at one request, cap 4 and cap 8, on the drafter's traces. The series is
# vllm/ as applied (`scripts/apply_and_build.sh`); slot-first is the series
# with ../2026-12-07-s67-plan/wip-slot-first.patch applied to a copy of its
# served_width.py.
# Usage: bash benchmarks/results/2026-12-07-cpu-s68-c1-slot-first/sim.sh [--help]
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
mkdir -p "$tmp/vllm/v1/spec_decode/dynamic"
cp "$module" "$tmp/vllm/v1/spec_decode/dynamic/served_width.py"
git -C "$tmp" init -q
git -C "$tmp" apply --include='vllm/v1/spec_decode/dynamic/served_width.py' \
  "$here/../2026-12-07-s67-plan/wip-slot-first.patch" \
  || { echo "sim.sh: the wip no longer applies to $module" >&2; exit 1; }
{
  echo "== series $(git -C vllm rev-parse --short HEAD), slot first: its wip"
  "$py" "$here/c1.py" --series "$module" --variant "$tmp/vllm/v1/spec_decode/dynamic/served_width.py" --seeds 10
} 2> /dev/null | grep -v '^INFO' > "$here/c1.txt"
"$py" "$here/branch_counts.py" --variant "$tmp/vllm/v1/spec_decode/dynamic/served_width.py" \
  2> /dev/null | grep -v '^INFO' > "$here/branch-counts.txt"
