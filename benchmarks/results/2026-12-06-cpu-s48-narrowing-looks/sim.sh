#!/usr/bin/env bash
# Patch 0045 (vllm dsl bc23909: a later priced window tested only when full)
# against the series before it (0044, 6db0637), simulated on CPU (README.md):
# at 32 requests (sim32.py, three loop models, and one with the share of
# all-accepted requests reported at half) and at 64 (session 47's sim.py,
# both loop models). Writes nothing; print to sim.txt.
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,6p "$0"; exit 0
fi
cd "$(dirname "$0")/../../.."
git -C vllm show 6db0637:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0044.py
git -C vllm show bc23909:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0045.py
here=benchmarks/results/2026-12-06-cpu-s48-narrowing-looks
for loop in "" "--stop-at-1 0.2" "--stop-at-1 0.3" "--stop-at-1 0.2 --undercount 0.5"; do
  # shellcheck disable=SC2086
  python3 "$here/sim32.py" --module /tmp/sw_0044.py --module /tmp/sw_0045.py --seeds 40 --waves 20 $loop
done
for loop in rule measured; do
  python3 benchmarks/results/2026-12-06-cpu-s47-served-width-start/sim.py --loop "$loop" \
    --module /tmp/sw_0044.py --module /tmp/sw_0045.py --caps 4,8 --seeds 40
done
