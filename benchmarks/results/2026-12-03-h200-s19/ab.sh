#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-03-h200-s19/ab.sh TAG ARMS [abab.py args...]
#
# Session 19 (2026-12-03), on a staged H200 host with the cost-scaled proxies built
# (proxies-start.sh --foreground): one benchmarks/abab.py A/B of ARMS with the
# settings every run of this session shares (ShareGPT test split, prefix caching
# off, greedy, 256 tokens, 8 base requests, 6 GiB KV per engine, async scheduling,
# FULL_AND_PIECEWISE CUDA graphs), into $OUT/TAG/: abab.json (written after each
# point), abab.log.gz, summary.txt, and two samplers of the run: top.log.gz (every
# 2 s, the processes over 3% of a core, with the machine's CPU line) and gpu.csv
# (every 0.5 s: SM and memory clocks, power, utilisation), so that a slow or noisy
# arm can be told apart as host contention, GPU clocks or neither.
# Environment: END (required: the command's deadline, seconds since the epoch; the
# run gets what is left, and is not started with under 90 s), CONC (default 64,32),
# ROUNDS (default 4).
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: ab.sh TAG ARMS [abab.py args...]" >&2; exit 2; }
tag=$1 arms=$2
shift 2
source /tmp/gpuhost/env.sh
d="$OUT/$tag"
mkdir -p "$d"
left=$(( ${END:?END: the deadline, seconds since the epoch} - $(date +%s) ))
if (( left < 90 )); then
  echo "$tag: ${left} s left, not started" | tee "$d/skipped"
  exit 0
fi
top -b -d 2 -c -w 250 > /tmp/top-$tag.raw 2>&1 &
top_pid=$!
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu \
  --format=csv,noheader -lms 500 > "$d/gpu.csv" 2>&1 &
smi_pid=$!
M=/tmp/gpuhost/models
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'
t0=$(date +%s)
PYTHONUNBUFFERED=1 timeout "$left" python3 benchmarks/abab.py \
  --models $M --target smollm2-135m-x8b --draft smollm2-l16-self-x1b \
  --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" \
  --out "$d/abab.json" --arms "$arms" --concurrency "${CONC:-64,32}" \
  --rounds "${ROUNDS:-4}" "$@" > "$d/abab.log" 2>&1
rc=$?
kill "$top_pid" "$smi_pid" 2>/dev/null
wait "$top_pid" "$smi_pid" 2>/dev/null
awk '/^top -|^%Cpu/ {print; next} $9 + 0 >= 3 {print}' /tmp/top-$tag.raw | gzip > "$d/top.log.gz"
rm -f /tmp/top-$tag.raw
python3 - "$d/abab.json" > "$d/summary.txt" 2>&1 <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except OSError as e:
    sys.exit(f"no abab.json: {e}")
print("init_s", round(d["init_s"]), "failed", d["failed"])
print("\n".join(d.get("summary", [])))
PY
gzip -f "$d/abab.log"
echo "$tag rc=$rc $(( $(date +%s) - t0 )) s; $(head -c 2000 "$d/summary.txt")"
