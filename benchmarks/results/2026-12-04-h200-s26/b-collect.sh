#!/usr/bin/env bash
# Session 26 (2026-12-04), commands B...: issued at once after A on the same warm
# host: collects the A/B that A started (to WAIT s, default 580). Back: s26.tgz.
set -uo pipefail
bash scripts/gpu-host/ab-collect.sh s26 --wait "${WAIT:-580}"
