#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/beside-proxies.sh LOG_DIR | --help
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried, in a session's first long command: starts the benchmark's proxies
# chain (scripts/gpu-host/proxies-start.sh) and, beside it, the GPU suite
# (scripts/gpu-host/suite.sh) in its own process session, and returns at once.
# Once both have ended and no process is left on the GPU, it writes LOG_DIR/go:
# the AB_WAIT_FILE of the measuring run (scripts/gpu-host/ab-start.sh), so that
# nothing else is on the GPU while it measures.
#   LOG_DIR/proxies-start.log  what proxies-start.sh said (its tail on failure)
#   LOG_DIR/suite.out, suite.rc  the suite's output and exit status
#   LOG_DIR/suite-out/gpu-suite.tgz  the suite's results (suite.sh's $OUT)
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
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proxy_dir=${PROXY_DIR:-/tmp/proxies}
if ! bash "$here/proxies-start.sh" > "$logs/proxies-start.log" 2>&1; then
  tail -n 5 "$logs/proxies-start.log" >&2
  echo "beside-proxies.sh: proxies-start.sh failed (log: $logs/proxies-start.log)" >&2
  exit 1
fi
kernel_files=$(bash "$here/after-suite.sh" --ignores)
mkdir -p "$logs/suite-out"
export LOGS=$logs HERE=$here
OUT=$logs/suite-out GPU_HOST_ROOT=${SUITE_ROOT:-${GPU_HOST_ROOT:-/tmp/gpuhost}} \
  DSL_GPU_PARALLEL=${DSL_GPU_PARALLEL:-15} SUITE_DRAFT_LAYERS=${SUITE_DRAFT_LAYERS:-4,16} \
  SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-480} PYTEST_ARGS=${SUITE_ARGS-$kernel_files} \
  setsid bash -c 'bash "$HERE/suite.sh" > "$LOGS/suite.out" 2>&1; echo $? > "$LOGS/suite.rc"
    pkill -f "tests/gpu/engine_worke[r]"; sleep 3; pkill -9 -f "tests/gpu/engine_worke[r]"; true' \
  < /dev/null > /dev/null 2>&1 &
setsid bash "$here/go-when-quiet.sh" "$logs/go" --after "$proxy_dir/done" --after "$logs/suite.rc" \
  < /dev/null > /dev/null 2>&1 &
