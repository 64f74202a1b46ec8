#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/proxies-start.sh [--beside-suite | --foreground] [--help]
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried: builds the benchmark's cost-scaled proxy pair in its own process
# session (setsid) and returns at once:
#   1. build_models.py with DRAFT_LAYERS=16 (the target and the 16-layer
#      truncation, writing their .built markers) unless they are built;
#   2. distill.py: DATA=self NL=16 STEPS=$PROXY_STEPS (the draft distilled on
#      the target's own greedy continuations, as sessions 9-16); or, where the
#      bundle staged a kept draft (models/kept/smollm2-l16-self: pack-offline.sh
#      --with-drafts, scripts/keep-draft.sh), kept_draft.py assemble rebuilds
#      that draft from it in seconds (distill.py runs if the rebuilt weights do
#      not hash to the kept distill.json's weights_sha256);
#   3. build_scaled.py: smollm2-135m-x8b and smollm2-l16-self-x1b.
# With --beside-suite (scripts/gpu-host/beside-proxies.sh: the GPU suite
# builds the same models beside it, SUITE_DRAFT_LAYERS=4,16), step 1 waits up
# to PROXY_WAIT_S for the suite's truncation (models/smollm2-l16/.built)
# instead of building; a wait that runs out ends the chain with status 124
# (as small-start.sh --beside-suite). Before session 55 waiting was the
# default, and a plan that ran no suite waited out the 600 s for nothing.
# With --foreground the chain runs in this process (building as by default),
# and the script exits with the chain's status once the proxies are ready (or
# the first failing step's status), each step's line printed as it ends.
# The target's greedy continuations that distill.py trains on (models/
# self-rows-*.pt, ~2 minutes of the H200 to generate) are unpacked first from
# the rows an earlier session kept in the tree (benchmarks/gpu-rows,
# scripts/keep-rows.sh; ROWS_DIR); distill.py uses them when their key matches
# the staged train file, and generates them otherwise.
# A measuring run waits for the done marker: AB_WAIT_FILE=$PROXY_DIR/done for
# scripts/gpu-host/ab-start.sh.
#
# Environment (all optional):
#   GPU_HOST_ROOT  staged root (default /tmp/gpuhost; its env.sh is sourced)
#   PROXY_DIR      logs and marker (default /tmp/proxies)
#   PROXY_WAIT_S   with --beside-suite, how long to wait (default 600 s)
#   PROXY_STEPS    distillation steps (default 900)
#   ROWS_DIR       kept distillation rows (default benchmarks/gpu-rows)
# Files: $PROXY_DIR/chain.log (each step's exit status and seconds),
# build_models.log (unless --beside-suite), kept-l16-self.log (a kept draft staged),
# distill-l16-self.log, build_scaled.log, and
# done (written last: 0 when every step exited 0, else the first failing
# status; a step after a failure is not run).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage_from_header "$0"
  exit 0
fi
foreground=0 beside=0
case "${1:-}" in
  --foreground) foreground=1; shift ;;
  --beside-suite) beside=1; shift ;;
esac
[[ $# -eq 0 ]] || { echo "proxies-start.sh: unknown argument '$1' (see --help)" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
dir=${PROXY_DIR:-/tmp/proxies}
wait_s=${PROXY_WAIT_S:-600}
steps=${PROXY_STEPS:-900}
[[ "$wait_s" =~ ^[0-9]+$ ]] || {
  echo "proxies-start.sh: PROXY_WAIT_S '$wait_s' is not a number of seconds" >&2; exit 2; }
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || {
  echo "proxies-start.sh: PROXY_STEPS '$steps' is not a positive whole number" >&2; exit 2; }
require_staged_root proxies-start.sh "$root"
require_carried_prompts proxies-start.sh
rm -rf "$dir" && mkdir -p "$dir"
stage_kept_rows proxies-start.sh "$root"
export P_DIR=$dir P_ROOT=$root P_WAIT_S=$wait_s P_STEPS=$steps P_BESIDE=$beside
chain='
  source "$P_ROOT/env.sh"
  t0=$(date +%s)
  step() {  # name, then the command
    local name=$1; shift
    local rc=0
    "$@" > "$P_DIR/$name.log" 2>&1 || rc=$?
    echo "$name rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$P_DIR/chain.log"
    return $rc
  }
  rc=0
  if (( P_BESIDE )); then
    end=$(( t0 + P_WAIT_S ))
    while [[ ! -f "$P_ROOT/models/smollm2-l16/.built" ]] && (( $(date +%s) < end )); do
      sleep 1
    done
    [[ -f "$P_ROOT/models/smollm2-l16/.built" ]] || rc=124
    echo "wait_for_suite_models rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$P_DIR/chain.log"
  elif [[ ! -f "$P_ROOT/models/smollm2-l16/.built" ]]; then
    if DRAFT_LAYERS=16 step build_models python3 scripts/gpu-host/build_models.py; then
      touch "$P_ROOT/models/smollm2-135m/.built" "$P_ROOT/models/smollm2-l16/.built"
    else
      rc=$?
    fi
  fi
  kept=$P_ROOT/models/kept/smollm2-l16-self
  if (( rc == 0 )) && [[ -f "$kept/smollm2-l16-self.safetensors" ]] \
      && step kept-l16-self python3 scripts/gpu-host/kept_draft.py assemble smollm2-l16-self "$kept"; then
    :  # the kept draft, rebuilt and checked against its weights sha256
  elif (( rc == 0 )); then
    DATA=self NL=16 STEPS=$P_STEPS step distill-l16-self python3 scripts/gpu-host/distill.py || rc=$?
  fi
  if (( rc == 0 )); then
    DRAFT=smollm2-l16-self step build_scaled python3 scripts/gpu-host/build_scaled.py || rc=$?
  fi
  echo "$rc" > "$P_DIR/done"
  exit "$rc"
'
if (( foreground )); then
  echo "proxies-start.sh: building the proxies in the foreground; logs in $dir"
  exec bash -c "$chain"
fi
setsid bash -c "$chain" > /dev/null 2>&1 < /dev/null &
echo "proxies-start.sh: building the proxies in their own process session; wait for $dir/done"
