#!/usr/bin/env bash
# Session 20 (2026-12-03), command A, after b1-b4 were staged (b3 with the prompts):
# b5, the cost-scaled proxies in the foreground (proxies-start.sh --foreground; session
# 19's kept rows did not survive onto this session's machine, so they are generated
# again: ~416 s), the rows back (split at 15 MB, with their sha256), then, to the
# deadline, the first engines of command B started once (DSL at cap 3 against SD K=3,
# c = 64, one round) so that B's start-ups find torch.compile's and Triton's caches
# warm. Back: a.tgz (staging and proxies logs, host), rows/, warm-pair.tgz,
# compile-cache.txt (what a kept compile cache would weigh).
# Code: the 50-patch series, applied by apply_and_build.sh (vllm branch dsl at 5d4abcf; bundles packed 08:07).
set -uo pipefail
T0=$(date +%s)
mkdir -p /tmp/a
bash scripts/install-offline.sh .gpu-bundles/b5 > /tmp/a/stage-b5.log 2>&1 \
  && bash scripts/install-offline.sh check >> /tmp/a/stage-b5.log 2>&1 || { tail /tmp/a/stage-b5.log; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime; } > /tmp/a/host.txt 2>&1
bash scripts/gpu-host/proxies-start.sh --foreground > /tmp/a/proxies.log 2>&1
rc=$?
cp /tmp/proxies/*.log /tmp/a/ 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; tail -5 /tmp/a/proxies.log
tar czf "$OUT/a.tgz" -C /tmp a
(( rc == 0 )) || exit "$rc"
mkdir -p "$OUT/rows"
(cd /tmp/gpuhost/models && sha256sum self-rows-*.pt) > "$OUT/rows/SHA256SUMS"
for f in /tmp/gpuhost/models/self-rows-*.pt; do split -b 15M "$f" "$OUT/rows/${f##*/}."; done
AB_END=$(( T0 + 585 )) AB_MIN_S=20 bash benchmarks/results/2026-12-03-h200-s20/ab.sh warm-pair \
  --arms dsl3,sd3 --concurrency 64 --rounds 1 --dsl-starts-alone
rc=$?; echo "[$(( $(date +%s) - T0 ))s] warm-pair rc=$rc"
du -sh ~/.cache/vllm/torch_compile_cache ~/.triton/cache /tmp/torchinductor_* ~/.cache/flashinfer 2>&1 | tee "$OUT/compile-cache.txt"
