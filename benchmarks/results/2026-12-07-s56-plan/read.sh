#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-07-s56-plan/read.sh DEST A_TGZ S57P_TGZ | --help
#
# Session 56's plan, read here after the device session: the A/B s57p with
# the verdicts of dsl4 and dsl8 (scripts/gpu-host/ab-read.sh, which replaced
# this file's own copy of it). Either tarball may be "-".
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
[[ $# -eq 3 ]] || { echo "read.sh: DEST A_TGZ S57P_TGZ (see --help)" >&2; exit 2; }
exec bash "$(dirname "$0")/../../../scripts/gpu-host/ab-read.sh" "$1" "$2" "$3" --run s57p --dsl dsl4,dsl8
