#!/usr/bin/env bash
# The served width with patches 0042 (the series before), 0043 and 0044,
# simulated on CPU (README.md), with both draft-loop models.
set -euo pipefail
cd "$(dirname "$0")/../../.."
git -C vllm show df8ba0c:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0042.py
git -C vllm show fe57cf0:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0043.py
git -C vllm show 6db0637:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0044.py
for loop in rule measured; do
  python3 benchmarks/results/2026-12-06-cpu-s47-served-width-start/sim.py --loop "$loop" \
    --module /tmp/sw_0042.py --module /tmp/sw_0043.py --module /tmp/sw_0044.py --caps 4,8 --seeds 40
done
