#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-06-s54-plan/read.sh DEST S55F_TGZ S55P_TGZ | --help
#
# Here, after the device session of this plan: session 52's read.sh with this
# plan's runs (s55f, the profile; s55p, the A/B): unpacks both into DEST (a
# new benchmarks/results/<date>-<gpu>-s55 folder) and writes
# profile-report.txt, full-steps.txt, host-timer.txt and the verdicts there
# (the lines about arms this plan does not run are empty). Either tarball may
# be "-" when it did not come back.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
RUN_F=s55f RUN_P=s55p exec bash "$(dirname "$0")/../2026-12-06-s52-plan/read.sh" "$@"
