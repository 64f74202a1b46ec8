#!/usr/bin/env bash
# Session 21 (2026-12-03), commands B, C...: issued at once after A on the same warm
# host: collects the A/B that A started (ab-collect.sh, to WAIT s, default 560) and
# the slow-collection traces of its processes. Back: s21.tgz, gc.tgz.
set -uo pipefail
rc=0
bash scripts/gpu-host/ab-collect.sh s21 --wait "${WAIT:-560}" || rc=$?
[[ -d /tmp/gc-s21 ]] && tar czf "$OUT/gc.tgz" -C /tmp gc-s21
ls /tmp/gc-s21 2>/dev/null | wc -l
exit "$rc"
