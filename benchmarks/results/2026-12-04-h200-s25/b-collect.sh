#!/usr/bin/env bash
# Session 25 (2026-12-04), commands B...: issued at once after A on the same warm
# host: collects the A/B that A started (to WAIT s, default 580). Back: s25.tgz.
set -uo pipefail
bash scripts/gpu-host/ab-collect.sh s25 --wait "${WAIT:-580}"
