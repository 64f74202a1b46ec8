#!/usr/bin/env bash
# Session 25 (2026-12-04), a second host with the 370 s left: after b1-b4 (+
# prompts, wip) were staged, b5 + check, the wip root (served.tgz: vllm
# wip-served 0001-0004 over the 52-patch series), the suite's small models
# (build_models.py, DRAFT_LAYERS=4), then d-probe-served.py to LIMIT_S,
# tarring what it has into $OUT every 5 s.
set -uo pipefail
T0=$(date +%s)
R=/tmp/s25d; mkdir -p "$R"
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1 \
  && bash scripts/install-offline.sh check >> "$R/stage-b5.log" 2>&1 || { tail "$R/stage-b5.log"; exit 1; }
root=$(bash scripts/gpu-host/wip-root.sh --root /tmp/gpuhost-s25d .gpu-bundles/wip/served.tgz) || exit 1
mkdir -p /tmp/gpuhost/models && ln -sfn /tmp/gpuhost/models "$root/models"
# shellcheck disable=SC1091
source "$root/env.sh"
GPU_HOST_ROOT=$root DRAFT_LAYERS=4 python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 \
  || { tail "$R/build_models.log"; exit 1; }
echo "[$(( $(date +%s) - T0 ))s] models built" | tee "$R/times.log"
( timeout "${LIMIT_S:-200}" python3 benchmarks/results/2026-12-04-h200-s25/d-probe-served.py \
    "$root/models" .gpu-bundles/prompts/sharegpt-test.jsonl "$R/probe.json" > "$R/probe.log" 2>&1
  echo "probe rc=$?" >> "$R/times.log" ) &
p=$!
while kill -0 "$p" 2>/dev/null; do tar czf "$OUT/s25d.tgz" -C /tmp s25d 2>/dev/null; sleep 5; done
echo "[$(( $(date +%s) - T0 ))s] done" >> "$R/times.log"
tar czf "$OUT/s25d.tgz" -C /tmp s25d
cat "$R/times.log"; grep -h "prices each draft step\|drafts for up to" "$R/probe.log" | cut -c1-600
