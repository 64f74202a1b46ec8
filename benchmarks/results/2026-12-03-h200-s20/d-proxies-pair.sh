#!/usr/bin/env bash
# Session 20 (2026-12-03), command D, on a fresh host after b1-b4 were staged again (b3
# with the prompts and command A's distillation rows, kept with scripts/keep-rows.sh):
# the host of commands A-B went back between A and B, so: b5, the proxies in the
# foreground with the rows reused, then the width against the rule: DSL at cap 3 (the
# same 4-slot verify as SD K=3; cost-aware stop, started alone after SD) against SD
# K=3, c = 64, 32, 3 ABBA rounds, only these two engines alive, to the deadline.
# Arms fixed in advance. Back: d.tgz (staging and proxies logs), pair-dsl3-sd3.tgz.
# Code: the 50-patch series (vllm branch dsl at 5d4abcf; bundles packed 08:07).
set -uo pipefail
T0=$(date +%s)
mkdir -p /tmp/d
bash scripts/install-offline.sh .gpu-bundles/b5 > /tmp/d/stage-b5.log 2>&1 \
  && bash scripts/install-offline.sh check >> /tmp/d/stage-b5.log 2>&1 || { tail /tmp/d/stage-b5.log; exit 1; }
source /tmp/gpuhost/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; nproc; uptime; } > /tmp/d/host.txt 2>&1
bash scripts/gpu-host/proxies-start.sh --foreground > /tmp/d/proxies.log 2>&1
rc=$?
cp /tmp/proxies/*.log /tmp/d/ 2>/dev/null
echo "[$(( $(date +%s) - T0 ))s] proxies rc=$rc"; tail -4 /tmp/d/proxies.log
tar czf "$OUT/d.tgz" -C /tmp d
(( rc == 0 )) || exit "$rc"
AB_END=$(( T0 + 590 )) bash benchmarks/results/2026-12-03-h200-s20/ab.sh pair-dsl3-sd3 \
  --arms dsl3,sd3 --concurrency 64,32 --rounds 3 --dsl-starts-alone
rc=$?; echo "[$(( $(date +%s) - T0 ))s] pair rc=$rc"
