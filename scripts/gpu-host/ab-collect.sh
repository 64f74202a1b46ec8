#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/ab-collect.sh NAME [--wait SECONDS] | --help
#
# Collects a run that scripts/gpu-host/ab-start.sh NAME started: waits until
# it has ended or SECONDS (default 570) have passed, prints the lines of its
# summary written so far and the DSL engine's start-up and plan lines, and tars
# the run (its log, abab.py's JSON or what else the script wrote; not the copied
# code and prompts) into $OUT/NAME.tgz. Run it in each command after the one that started
# the A/B, at once (the host goes back after ~30 s without a command); the JSON
# holds every point finished so far.
#
# Environment: AB_DIR (default /tmp/ab).
# Exit status: 0 once the A/B has ended with 0, 3 while it is still running,
# the script's status if it failed.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
name=$1; shift
wait_s=570
while [[ $# -gt 0 ]]; do
  case $1 in
    --wait) wait_s=${2:?ab-collect.sh: --wait needs SECONDS}; shift 2 ;;
    *) echo "ab-collect.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$wait_s" =~ ^[0-9]+$ ]] || { echo "ab-collect.sh: --wait '$wait_s' is not a number of seconds" >&2; exit 2; }
run=${AB_DIR:-/tmp/ab}/$name
OUT=${OUT:?ab-collect.sh: \$OUT is not set (the device command sets it)}
[[ -d "$run" ]] || {
  echo "ab-collect.sh: no $run: this host did not start '$name' (or went back since)" >&2; exit 1; }
start=$(date +%s)
while [[ ! -f "$run/rc" ]] && (( $(date +%s) - start < wait_s )); do sleep 2; done
for log in "$run"/*.log; do
  # top.log is the host sampler's (ab-start.sh), not a script's log.
  [[ -f "$log" && "$log" != */top.log ]] || continue
  grep -h "Dynamic speculation lookahead" "$log" | cut -c1-400 | tail -n 6 || true
  grep -hE "^(c=|  )" "$log" | tail -n 40 || true
done
tar czf "$OUT/$name.tgz" -C "$run" --exclude=./tree --exclude=./.gpu-bundles .
if [[ -f "$run/rc" ]]; then
  rc=$(cat "$run/rc")
  echo "ab-collect.sh: $name ended with status $rc"
  exit "$rc"
fi
echo "ab-collect.sh: $name still running after $(( $(date +%s) - start )) s"
exit 3
