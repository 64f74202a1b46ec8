#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/beside-proxies.sh LOG_DIR | --help
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried, in a session's first long command: starts the benchmark's proxies
# chain (scripts/gpu-host/proxies-start.sh --beside-suite) and, beside it, the GPU suite
# (scripts/gpu-host/suite.sh) in its own process session, and returns at once.
# Once the suite has ended, where .gpu-bundles/intree is carried, the suite's
# kernel files and the in-tree CUDA tests (scripts/gpu-host/after-suite.sh).
# Once all of it has ended and no process is left on the GPU, it writes
# LOG_DIR/go: the AB_WAIT_FILE of the measuring run (scripts/gpu-host/ab-start.sh),
# so that nothing else is on the GPU while it measures.
#   LOG_DIR/proxies-start.log  what proxies-start.sh said (its tail on failure)
#   LOG_DIR/suite.out, suite.rc  the suite's output and exit status
#   LOG_DIR/suite-out/gpu-suite.tgz  the suite's results (suite.sh's $OUT)
#   LOG_DIR/kernels.log, intree.log, *.rc  after-suite.sh's (after.skipped
#                   where .gpu-bundles/intree was not carried); after.done
#   LOG_DIR/gpu-apps-at-go.csv  the GPU's processes when go was written
# The suite's engine workers are ended with it (its time limit ends pytest
# only).
#
# Environment (all optional):
#   GPU_HOST_ROOT   the staged root the proxies build from (default /tmp/gpuhost)
#   SUITE_ROOT      the root the suite runs on (default GPU_HOST_ROOT; e.g. the
#                   wip root scripts/gpu-host/stage-last.sh prints)
#   SUITE_ARGS      PYTEST_ARGS for the suite (default: the engine groups only,
#                   the in-process kernel files left out)
#   SUITE_TIMEOUT_S, DSL_GPU_PARALLEL, SUITE_DRAFT_LAYERS  as suite.sh (defaults
#                   480, 15, 4,16: the 16-layer truncation the proxies distil)
# Exit status: 0 once both are started, 1 where proxies-start.sh failed.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -eq 1 ]] || { echo "beside-proxies.sh: one argument, LOG_DIR (see --help)" >&2; exit 2; }
logs=$(mkdir -p "$1" && cd "$1" && pwd)
start_chain_and_suite beside-proxies.sh "$logs" 4,16 "${PROXY_DIR:-/tmp/proxies}/done" \
  proxies-start.sh --beside-suite
