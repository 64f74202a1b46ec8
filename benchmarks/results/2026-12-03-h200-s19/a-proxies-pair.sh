#!/usr/bin/env bash
# Session 19 (2026-12-03), command A, after b1-b4 (b3 with the prompts) were staged:
# b5, the cost-scaled proxies in the foreground (proxies-start.sh --foreground: the
# target and 16-layer truncation, distill.py DATA=self NL=16 STEPS=900 with the rows
# generated here, build_scaled.py), the distillation rows back into $OUT/rows (split
# at 15 MB, with their sha256) for later sessions, then the quiet-harness question's
# first half: SD K=3 (base) against target-only with only those two engines alive,
# c = 64, 32, 4 ABBA rounds (ab.sh). Arms fixed in advance.
# Code: the 50-patch series, applied by apply_and_build.sh (vllm branch dsl at 5d4abcf; bundles packed 06:07).
set -uo pipefail
T0=$(date +%s)
export END=$(( T0 + 585 ))
bash scripts/install-offline.sh .gpu-bundles/b5 > "$OUT/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$OUT/stage-b5.log" 2>&1 || { tail "$OUT/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime; } > "$OUT/host.txt" 2>&1
bash scripts/gpu-host/proxies-start.sh --foreground > "$OUT/proxies.log" 2>&1
rc=$?
cp /tmp/proxies/*.log "$OUT/" 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; cat "$OUT/proxies.log"
(( rc == 0 )) || exit "$rc"
mkdir -p "$OUT/rows"
(cd /tmp/gpuhost/models && sha256sum self-rows-*.pt) > "$OUT/rows/SHA256SUMS"
for f in /tmp/gpuhost/models/self-rows-*.pt; do split -b 15M "$f" "$OUT/rows/${f##*/}."; done
bash benchmarks/results/2026-12-03-h200-s19/ab.sh pair-sd3-target sd3,target
echo "[$(( $(date +%s) - T0 ))s] done"
