#!/usr/bin/env bash
# Session 22 (2026-12-04). Session 21 planned the same commands; its A ran, and its
# results were lost with that session. Commands B, C...: issued at once after A on the same warm
# host: collects the A/B that A started (ab-collect.sh, to WAIT s, default 560) and
# the slow-collection traces of its processes. Back: s22.tgz, gc.tgz.
set -uo pipefail
rc=0
bash scripts/gpu-host/ab-collect.sh s22 --wait "${WAIT:-560}" || rc=$?
[[ -d /tmp/gc-s22 ]] && tar czf "$OUT/gc.tgz" -C /tmp gc-s22
ls /tmp/gc-s22 2>/dev/null | wc -l
exit "$rc"
