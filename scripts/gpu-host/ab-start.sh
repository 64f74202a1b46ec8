#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/ab-start.sh NAME [--] ABAB_ARGS... | --help
#
# On a staged GPU host, from the checkout's root: starts benchmarks/abab.py
# ABAB_ARGS (or another script of benchmarks/, AB_SCRIPT) in its own process
# session (setsid), so it runs on after this command returns, while the host
# stays warm. The next commands collect it with
# scripts/gpu-host/ab-collect.sh NAME. One engine start-up then serves as many
# rounds as the device time allows, where an A/B inside one command is cut at
# the command's time limit with its start-up paid again in the next.
#
# What it runs is copied first to $AB_DIR/NAME (benchmarks/*.py and tests/e2e
# under tree/, .gpu-bundles/prompts if carried), and abab.py runs from that
# copy with $AB_DIR/NAME as its working folder: each later command re-syncs the
# checkout, which must not change a running benchmark. So relative paths in
# ABAB_ARGS resolve there (--prompts .gpu-bundles/prompts, --out abab.json).
#
# Environment (all optional):
#   GPU_HOST_ROOT  staged root (default /tmp/gpuhost; its env.sh is sourced)
#   AB_DIR         where runs live (default /tmp/ab)
#   AB_SCRIPT      the script of benchmarks/ to run (default abab.py; e.g.
#                  profile_step.py, whose arguments are its own)
#   AB_TIMEOUT_S   limit on the script (default 1700 s: a session's device time)
#   AB_WAIT_FILE   a file to wait for before starting: the models' done marker
#                  of a chain started beside the suite, or the rc file of
#                  another run, so one GPU runs them one after the other
#   AB_WAIT_S      how long to wait for it (default 600 s; then it starts anyway)
# Files: $AB_DIR/NAME/<script>.log (abab.log for abab.py), top.log and gpu.csv
# (the host's samplers, scripts/lib/host_samplers.sh, from the start to the
# script's end, wait included), $AB_DIR/NAME/rc (the script's exit status,
# once it has ended).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
name=$1; shift
check_run_name ab-start.sh "$name"
[[ "${1:-}" == "--" ]] && shift
script=${AB_SCRIPT:-abab.py}
[[ "$script" =~ ^[A-Za-z0-9_]+\.py$ && -f "benchmarks/$script" ]] || {
  echo "ab-start.sh: AB_SCRIPT '$script' is not a script in benchmarks/ (e.g. abab.py)" >&2; exit 2; }
wait_s=${AB_WAIT_S:-600}
[[ "$wait_s" =~ ^[0-9]+$ ]] || {
  echo "ab-start.sh: AB_WAIT_S '$wait_s' is not a number of seconds" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
run=${AB_DIR:-/tmp/ab}/$name
[[ -f "$root/env.sh" ]] || {
  echo "ab-start.sh: no $root/env.sh: stage the bundle first (docs/gpu-host.md)" >&2; exit 1; }
[[ -e "$run" ]] && {
  echo "ab-start.sh: $run exists: collect it or pick another NAME" >&2; exit 1; }
mkdir -p "$run/tree/benchmarks" "$run/tree/tests" "$run/tree/lib"
cp benchmarks/*.py "$run/tree/benchmarks/"
cp "$(dirname "${BASH_SOURCE[0]}")/../lib/host_samplers.sh" "$run/tree/lib/"
cp -r tests/e2e "$run/tree/tests/"
if [[ -d .gpu-bundles/prompts ]]; then
  mkdir -p "$run/.gpu-bundles" && cp -r .gpu-bundles/prompts "$run/.gpu-bundles/"
fi
printf '%q ' "$@" > "$run/args"
AB_RUN=$run AB_ROOT=$root AB_WAIT_FILE=${AB_WAIT_FILE:-} AB_WAIT_S=$wait_s \
  AB_SCRIPT=$script AB_TIMEOUT_S=${AB_TIMEOUT_S:-1700} setsid bash -c '
  cd "$AB_RUN"
  source tree/lib/host_samplers.sh
  start_host_samplers "$AB_RUN"
  if [[ -n "$AB_WAIT_FILE" ]]; then
    end=$(( $(date +%s) + AB_WAIT_S ))
    while [[ ! -e "$AB_WAIT_FILE" ]] && (( $(date +%s) < end )); do sleep 1; done
  fi
  source "$AB_ROOT/env.sh"
  eval "set -- $(cat "$AB_RUN/args")"
  rc=0
  timeout "$AB_TIMEOUT_S" python3 "tree/benchmarks/$AB_SCRIPT" "$@" \
    > "$AB_RUN/${AB_SCRIPT%.py}.log" 2>&1 || rc=$?
  stop_host_samplers
  echo "$rc" > "$AB_RUN/rc"
' > /dev/null 2>&1 < /dev/null &
echo "ab-start.sh: $name ($script) started in its own process session ($run); collect with: bash scripts/gpu-host/ab-collect.sh $name"
