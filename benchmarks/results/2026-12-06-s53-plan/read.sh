#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-06-s53-plan/read.sh DEST S54F_TGZ S54P_TGZ | --help
#
# Here, after the device session of this plan: session 52's read.sh with this
# plan's runs (s54f, the profile; s54p, the A/B): unpacks both into DEST (a
# new benchmarks/results/<date>-<gpu>-s54 folder) and writes
# profile-report.txt, full-steps.txt, host-timer.txt and the verdicts of dsl4
# and dsl4@1-64:2 there. Either tarball may be "-" when it did not come back.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
RUN_F=s54f RUN_P=s54p exec bash "$(dirname "$0")/../2026-12-06-s52-plan/read.sh" "$@"
