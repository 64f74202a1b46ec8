#!/usr/bin/env bash
# Session 22 (2026-12-04), commands D...: issued at once after C on the same warm
# host: collects the A/B that C started (to WAIT s, default 560). Back: c-ab.tgz.
set -uo pipefail
bash scripts/gpu-host/ab-collect.sh c-ab --wait "${WAIT:-560}"
