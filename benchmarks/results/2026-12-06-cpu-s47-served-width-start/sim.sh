#!/usr/bin/env bash
# The served width before and after patch 0043, simulated on CPU (README.md).
set -euo pipefail
cd "$(dirname "$0")/../../.."
git -C vllm show df8ba0c:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0042.py
git -C vllm show dsl:vllm/v1/spec_decode/dynamic/served_width.py > /tmp/sw_0043.py
python3 benchmarks/results/2026-12-06-cpu-s47-served-width-start/sim.py \
  --module /tmp/sw_0042.py --module /tmp/sw_0043.py --caps 4,8 --seeds 40
