#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/small-start.sh [--beside-suite] [--help]
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried: builds the small pair (SmolLM2-135M and its 4-layer draft distilled
# on the target's own greedy continuations) in its own process session
# (setsid) and returns at once:
#   1. build_models.py with DRAFT_LAYERS=4 (the target and the truncation);
#   2. distill.py: DATA=self NL=4 STEPS=$SMALL_STEPS (models/smollm2-l4-self);
#      or, where the bundle staged a kept draft (models/kept/smollm2-l4-self:
#      scripts/gpu-host/send-draft.sh N smollm2-l4-self, scripts/keep-draft.sh,
#      pack-offline.sh --with-drafts), kept_draft.py assemble rebuilds it (chain
#      step kept-l4-self; distill.py runs if it does not hash to its kept sha).
# With --beside-suite (scripts/gpu-host/beside-small.sh: the GPU suite builds
# the same models beside it), step 1 waits up to SMALL_WAIT_S for the suite's
# truncation (models/smollm2-l4/.built) instead of building; a wait that runs
# out ends the chain with status 124.
# The target's continuations that distill.py trains on (models/self-rows-*.pt)
# are unpacked first from the rows an earlier session kept in the tree
# (benchmarks/gpu-rows, scripts/keep-rows.sh; ROWS_DIR); distill.py uses them
# when their key matches the staged train file, and generates them otherwise.
# A measuring run waits for the done marker: AB_WAIT_FILE=$SMALL_DIR/done for
# scripts/gpu-host/ab-start.sh.
#
# Environment (all optional):
#   GPU_HOST_ROOT  staged root (default /tmp/gpuhost; its env.sh is sourced)
#   SMALL_DIR      logs and marker (default /tmp/small)
#   SMALL_STEPS    distillation steps (default 600, as sessions 34-38)
#   SMALL_WAIT_S   with --beside-suite, how long to wait (default 600 s)
#   ROWS_DIR       kept distillation rows (default benchmarks/gpu-rows)
# Files: $SMALL_DIR/chain.log (each step's exit status and seconds),
# build_models.log, distill-l4-self.log, distill-l4-self.json (the draft's
# distill.json: steps, acceptance, sha), and done (written last: 0 when every
# step exited 0, else the first failing status; a step after a failure is not
# run).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage_from_header "$0"
  exit 0
fi
beside=0
if [[ "${1:-}" == "--beside-suite" ]]; then
  beside=1
  shift
fi
[[ $# -eq 0 ]] || { echo "small-start.sh: unknown argument '$1' (see --help)" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
dir=${SMALL_DIR:-/tmp/small}
steps=${SMALL_STEPS:-600}
wait_s=${SMALL_WAIT_S:-600}
[[ "$wait_s" =~ ^[0-9]+$ ]] || {
  echo "small-start.sh: SMALL_WAIT_S '$wait_s' is not a number of seconds" >&2; exit 2; }
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || {
  echo "small-start.sh: SMALL_STEPS '$steps' is not a positive whole number" >&2; exit 2; }
require_staged_root small-start.sh "$root"
require_carried_prompts small-start.sh
rm -rf "$dir" && mkdir -p "$dir"
# Beside the suite, a truncation marked built by an earlier run must not
# start the distillation while the suite rebuilds it.
(( beside )) && rm -f "$root/models/smollm2-l4/.built"
stage_kept_rows small-start.sh "$root"
export S_DIR=$dir S_ROOT=$root S_STEPS=$steps S_BESIDE=$beside S_WAIT_S=$wait_s
chain='
  source "$S_ROOT/env.sh"
  export GPU_HOST_ROOT=$S_ROOT
  t0=$(date +%s)
  step() {  # name, then the command
    local name=$1; shift
    local rc=0
    "$@" > "$S_DIR/$name.log" 2>&1 || rc=$?
    echo "$name rc=$rc $(( $(date +%s) - t0 ))s" >> "$S_DIR/chain.log"
    return $rc
  }
  rc=0
  if (( S_BESIDE )); then
    end=$(( t0 + S_WAIT_S ))
    while [[ ! -f "$S_ROOT/models/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do
      sleep 1
    done
    [[ -f "$S_ROOT/models/smollm2-l4/.built" ]] || rc=124
    echo "wait_for_suite_models rc=$rc $(( $(date +%s) - t0 ))s" >> "$S_DIR/chain.log"
  else
    DRAFT_LAYERS=4 step build_models python3 scripts/gpu-host/build_models.py || rc=$?
  fi
  kept=$S_ROOT/models/kept/smollm2-l4-self
  if (( rc == 0 )) && [[ -f "$kept/smollm2-l4-self.safetensors" ]] \
      && step kept-l4-self python3 scripts/gpu-host/kept_draft.py assemble smollm2-l4-self "$kept"; then
    :  # the kept draft, rebuilt and checked against its weights sha256
  elif (( rc == 0 )); then
    DATA=self NL=4 STEPS=$S_STEPS step distill-l4-self python3 scripts/gpu-host/distill.py || rc=$?
  fi
  if (( rc == 0 )); then
    cp "$S_ROOT/models/smollm2-l4-self/distill.json" "$S_DIR/distill-l4-self.json" || rc=$?
  fi
  echo "$rc" > "$S_DIR/done"
'
setsid bash -c "$chain" > /dev/null 2>&1 < /dev/null &
echo "small-start.sh: building the small pair in its own process session; wait for $dir/done"
