#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/go-when-quiet.sh GO_FILE [--after FILE]... [--max-wait S] | --help
#
# On the GPU host, in the background of a long command (setsid ... &): waits
# until every --after FILE exists (the end markers of what ran before: a
# suite's rc, a chain's done file), then up to S seconds (default 60) until no
# compute process is left on the GPU, writes the GPU's processes at that moment
# beside GO_FILE (gpu-apps-at-<GO_FILE's name>.csv: what, if anything, was
# still there) and touches GO_FILE: the AB_WAIT_FILE of a measuring run
# (scripts/gpu-host/ab-start.sh), so that it measures alone on the GPU.
# Without nvidia-smi on PATH it does not wait for the GPU, and the .csv says so.
# Exit status: 0 once GO_FILE is written, 2 on bad arguments.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
go=$1; shift
after=() max_wait=60
while (( $# )); do
  case $1 in
    --after) [[ $# -ge 2 ]] || { echo "go-when-quiet.sh: --after needs a FILE" >&2; exit 2; }
             after+=("$2"); shift 2 ;;
    --max-wait) [[ "${2:-}" =~ ^[0-9]+$ ]] || {
                  echo "go-when-quiet.sh: --max-wait '${2:-}' must be whole seconds" >&2; exit 2; }
                max_wait=$2; shift 2 ;;
    *) echo "go-when-quiet.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for f in ${after[@]+"${after[@]}"}; do
  while [[ ! -e "$f" ]]; do sleep 1; done
done
csv="$(dirname "$go")/gpu-apps-at-$(basename "$go").csv"
if command -v nvidia-smi > /dev/null; then
  apps() { nvidia-smi --query-compute-apps="$1" --format=csv"${2:-}" 2>&1; }
  # Count whole sleeps rather than compare `date +%s` against an end second:
  # that end falls up to 1 s early (the start second is truncated), which is
  # how CI once saw --max-wait 2 give up after 1.08 s.
  waited=0
  while [[ -n "$(apps pid ,noheader)" ]] && (( waited < max_wait )); do
    sleep 1; waited=$(( waited + 1 ))
  done
  apps pid,process_name,used_memory > "$csv" || true
else
  echo "no nvidia-smi on PATH: the GPU's processes were not looked at" > "$csv"
fi
touch "$go"
