#!/usr/bin/env bash
# Session 19 (2026-12-03), command D1, on a fresh host (command A's host went back
# between calls) after b1-b4 (b3 with the prompts): b5, the cost-scaled proxies in the
# foreground (proxies-start.sh --foreground), and the distillation rows back (split at
# 15 MB, with their sha256; a command returns at most 8 files, so everything else
# comes back as one tarball, d1.tgz).
# Code: the 50-patch series, applied by apply_and_build.sh (vllm branch dsl at 5d4abcf; bundles packed 06:07).
set -uo pipefail
T0=$(date +%s)
mkdir -p "$OUT/d1"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$OUT/d1/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$OUT/d1/stage-b5.log" 2>&1 || { tail "$OUT/d1/stage-b5.log"; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime; } > "$OUT/d1/host.txt" 2>&1
bash scripts/gpu-host/proxies-start.sh --foreground > "$OUT/d1/proxies.log" 2>&1
rc=$?
cp /tmp/proxies/*.log "$OUT/d1/" 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; cat "$OUT/d1/proxies.log"
if (( rc == 0 )); then
  (cd /tmp/gpuhost/models && sha256sum self-rows-*.pt) > "$OUT/d1/rows.sha256"
  for f in /tmp/gpuhost/models/self-rows-*.pt; do split -b 15M "$f" "$OUT/${f##*/}."; done
fi
tar czf "$OUT/d1.tgz" -C "$OUT" d1 && rm -rf "$OUT/d1"
ls -la "$OUT"
exit "$rc"
