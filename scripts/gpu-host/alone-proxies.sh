#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/alone-proxies.sh LOG_DIR | --help
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried, in a session's first long command that runs no GPU suite (its GPU
# code unchanged since the suite's last whole run): starts the benchmark's
# proxies chain (scripts/gpu-host/proxies-start.sh, which then builds the
# target and its truncation itself) and returns at once; beside-proxies.sh
# without the suite. Once the chain is done and no process is left on the
# GPU, it writes LOG_DIR/go: the AB_WAIT_FILE of the measuring run
# (scripts/gpu-host/ab-start.sh).
#   LOG_DIR/proxies-start.log  what proxies-start.sh said (its tail on failure)
#   LOG_DIR/after.done, after.skipped  at once (no suite), as beside-proxies.sh
#                   leaves them once its suite has ended
#   LOG_DIR/gpu-apps-at-go.csv  the GPU's processes when go was written
#
# Environment (all optional):
#   GPU_HOST_ROOT   the staged root the proxies build from (default /tmp/gpuhost)
#   PROXY_DIR       the chain's logs and done marker (default /tmp/proxies)
# Exit status: 0 once the chain is started, 1 where proxies-start.sh failed.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -eq 1 ]] || { echo "alone-proxies.sh: one argument, LOG_DIR (see --help)" >&2; exit 2; }
logs=$(mkdir -p "$1" && cd "$1" && pwd)
start_chain_alone alone-proxies.sh "$logs" "${PROXY_DIR:-/tmp/proxies}/done" proxies-start.sh
