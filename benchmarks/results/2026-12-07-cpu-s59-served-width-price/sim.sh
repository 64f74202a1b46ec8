#!/usr/bin/env bash
# Session 59 (CPU): three ways to keep a chance-high draft step price from
# narrowing a batch size, each applied to patch 0048's served_width.py (vllm
# 9ed898b), against 0048 itself in session 47's simulation of 64-request
# waves (../2026-12-06-cpu-s47-served-width-start/sim.py, 40 seeds, both loop
# models). Output: sim.txt. None was kept (README.md).
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=benchmarks/results/2026-12-07-cpu-s59-served-width-price
tmp=$(mktemp -d)
git -C vllm show 9ed898b:vllm/v1/spec_decode/dynamic/served_width.py > "$tmp/sw_0048.py"
for v in bound-draft-and-slot bound-draft-only draft-32-samples; do
  cp "$tmp/sw_0048.py" "$tmp/sw_$v.py"
  patch -s "$tmp/sw_$v.py" < "$here/$v.diff"
done
for loop in rule measured; do
  python3 benchmarks/results/2026-12-06-cpu-s47-served-width-start/sim.py --loop "$loop" --seeds 40 \
    --module "$tmp/sw_0048.py" --module "$tmp/sw_bound-draft-and-slot.py" \
    --module "$tmp/sw_bound-draft-only.py" --module "$tmp/sw_draft-32-samples.py"
done > "$here/sim.txt"
rm -rf "$tmp"
