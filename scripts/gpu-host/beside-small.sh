#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/beside-small.sh LOG_DIR | --help
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried, in a session's first long command: the small pair's draft
# (scripts/gpu-host/small-start.sh --beside-suite: distilled once the suite
# has built the 4-layer truncation) and, beside it, the GPU suite
# (scripts/gpu-host/suite.sh, engine groups) in their own process sessions,
# and returns at once. Once the suite has ended, where .gpu-bundles/intree is
# carried, the suite's kernel files and the in-tree CUDA tests
# (scripts/gpu-host/after-suite.sh). Once all of it has ended and no process
# is left on the GPU, it writes LOG_DIR/go: the AB_WAIT_FILE of the measuring
# run (scripts/gpu-host/ab-start.sh). The same as beside-proxies.sh, for the
# small pair.
#   LOG_DIR/small-start.log  what small-start.sh said
#   LOG_DIR/suite.out, suite.rc, suite-out/gpu-suite.tgz  the suite's
#   LOG_DIR/kernels.log, intree.log, *.rc  after-suite.sh's (after.skipped
#                   where .gpu-bundles/intree was not carried); after.done
#   LOG_DIR/gpu-apps-at-go.csv  the GPU's processes when go was written
#   $SMALL_DIR/done, chain.log, distill-l4-self.json  the draft's chain
#
# Environment (all optional): GPU_HOST_ROOT, SMALL_DIR, SMALL_STEPS and
# SMALL_WAIT_S as small-start.sh; SUITE_ROOT, SUITE_ARGS, SUITE_TIMEOUT_S,
# DSL_GPU_PARALLEL as beside-proxies.sh (SUITE_DRAFT_LAYERS default 4).
# Exit status: 0 once both are started, 1 where small-start.sh failed.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -eq 1 ]] || { echo "beside-small.sh: one argument, LOG_DIR (see --help)" >&2; exit 2; }
logs=$(mkdir -p "$1" && cd "$1" && pwd)
[[ ",${SUITE_DRAFT_LAYERS:-4}," == *,4,* ]] || {
  echo "beside-small.sh: SUITE_DRAFT_LAYERS '$SUITE_DRAFT_LAYERS' must include 4 (the draft is distilled from the suite's 4-layer truncation)" >&2
  exit 2; }
start_chain_and_suite beside-small.sh "$logs" 4 "${SMALL_DIR:-/tmp/small}/done" \
  small-start.sh --beside-suite
