#!/usr/bin/env bash
# Regenerates steady.txt, waves.txt and waves-4-16.txt (~45 s on 2 cores, no GPU).
# Usage: bash benchmarks/results/2026-12-06-cpu-s49-batch-stop-traces/sim.sh [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,3p "$0"; exit 0
fi
cd "$(dirname "$0")"
python3 batch.py --steps 8000 > steady.txt
python3 batch.py --steps 8000 --waves > waves.txt
python3 batch.py --steps 8000 --waves --batch 4 --batch 8 --batch 16 > waves-4-16.txt
