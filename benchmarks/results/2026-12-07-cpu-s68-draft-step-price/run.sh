#!/usr/bin/env bash
# Regenerates price.txt (~20 s, no GPU): price.py on sessions 65-67's H100
# A/Bs (their committed abab.json.gz and abab.log.gz), widths 2 and 3.
# Usage: bash benchmarks/results/2026-12-07-cpu-s68-draft-step-price/run.sh [--help]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n 2,4p "$0"; exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
res=$here/..
py=${PYTHON:-$here/../../../.venv/bin/python}
for run in 2026-12-07-h100-s65/s65p 2026-12-07-h100-s66/s66p 2026-12-07-h100-s67/s67p; do
  echo "== $run"
  for w in 2 3; do
    "$py" "$here/price.py" "$res/$run-abab.json.gz" "$res/$run-abab.log.gz" --width "$w"
  done
done > "$here/price.txt"
