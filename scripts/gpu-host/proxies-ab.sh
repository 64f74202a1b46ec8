#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/proxies-ab.sh NAME PLAN_DIR --arms ARMS [options] | --help
#
# On the GPU host, a session's first long command once the bundle's other
# chunks are staged (one call each, docs/gpu-host.md), with the last chunk and
# .gpu-bundles/prompts carried. Returns in ~40 s; the rest runs in its own
# process sessions, one thing on the GPU at a time:
#   1. the last chunk staged and checked, PLAN_DIR/host.txt (stage-last.sh);
#   2. the proxies' chain (the target and truncation built, the kept draft
#      assembled, both scaled; ~130-190 s): alone (alone-proxies.sh), or with
#      --suite beside the GPU suite (beside-proxies.sh; SUITE_ARGS and the
#      rest of its environment pass on), for a session whose series changed
#      since the suite's last whole run;
#   3. the A/B NAME on the proxies (ab-start.sh, once the chain is done and the
#      GPU quiet): 256 tokens, one wave a round (8 requests at c <= 8),
#      rotated prompts (unless --same-prompts), prefix caching off, each DSL
#      engine started alone, every arm timing its host calls (ARM+t runs ARM
#      with ab_hooks.HostTimer).
# Then $OUT/a.tgz holds PLAN_DIR (host.txt, ab-plan.txt, the logs so far);
# scripts/gpu-host/ab-collect.sh NAME collects the A/B, and
# scripts/gpu-host/ab-read.sh reads both here.
#
# Options:
#   --arms ARMS        abab.py's arms, each labelled: +t times the host's calls
#                      (ab_hooks.HostTimer), +u on a dslN arm also unprices its
#                      loop's stop (ab_hooks.StepCostsOff: the loop never
#                      stops, and the served width, with no stopped steps to
#                      price a draft step from, stays near the cap: 3-4 drafts
#                      at 2-32 in session 62), +v also closes its device loops
#                      (host-launched draft steps), +f lets only the served
#                      width's batch size of one forget its evidence
#                      (ab_hooks.ServedForgetsOneRequestOnly, with the host
#                      timer), +e logs why the served width keeps or leaves
#                      a width (ab_hooks.ServedWidthExplains: each window
#                      test and the blocks compared, nothing decided
#                      differently), +s also explores the narrower width
#                      fast until its slot is priced
#                      (ab_hooks.ServedPricesSlotFirst, with +e's logging),
#                      +d is +s with the draft step priced at what start-up
#                      timed (ab_hooks.ServedPricesDraftStepAtStartUp);
#                      e.g. sd2+t,dsl4+t,dsl4+u
#                      (required)
#   --arms-small ARMS  the arms instead where the GPU has < 100,000 MiB (a
#                      proxies engine takes ~22 GiB: an H200 holds five, an
#                      H100 three; default: --arms)
#   --concurrency C    comma-separated, in the order run (default 1,8,32)
#   --rounds N         measured ABBA rounds after one warm round (default 10)
#   --waves W          waves a round (default 1: one wave of max(8, c) requests);
#                      more waves make a round longer where one wave is short
#                      (at small c)
#   --suite            run the GPU suite beside the chain; the A/B waits for both
#   --same-prompts     every round runs the same prompts (abab.py without
#                      --rotate-prompts): the base arm's round-to-round spread is
#                      then the host's and the GPU's, not the prompts'
# Environment: CHUNK (the last chunk, default the highest-numbered
# .gpu-bundles/b<N> here: the one carried with this call), GPU_HOST_ROOT
# (default /tmp/gpuhost), SUITE_ROOT (with --suite, the root the suite runs on;
# default the staged root), OUT (where a.tgz goes), SETTLE_S (seconds between
# queueing the A/B and packing a.tgz, default 5).
#   bash scripts/gpu-host/proxies-ab.sh s57p /tmp/s57 --arms sd2+t,sd3+t,target+t,dsl4+t,dsl8+t \
#     --arms-small sd2+t,dsl4+t,dsl8+t --concurrency 1,64,8,32,16,2,4
# Exit status: 0 once the A/B is queued; 1 where staging, the chain or the
# A/B's start failed (its log on stderr); 2 on bad arguments.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -ge 2 ]] || { echo "proxies-ab.sh: NAME and PLAN_DIR are needed (see --help)" >&2; exit 2; }
name=$1 plan=$2; shift 2
check_run_name proxies-ab.sh "$name"
arms='' small='' conc=1,8,32 rounds=10 waves=1 chain=alone-proxies.sh rotate=--rotate-prompts
while [[ $# -gt 0 ]]; do
  if [[ "$1" == --suite ]]; then chain=beside-proxies.sh; shift; continue; fi
  if [[ "$1" == --same-prompts ]]; then rotate=''; shift; continue; fi
  [[ $# -ge 2 ]] || { echo "proxies-ab.sh: $1 needs a value (see --help)" >&2; exit 2; }
  case $1 in
    --arms) arms=$2 ;; --arms-small) small=$2 ;;
    --concurrency) conc=$2 ;; --rounds) rounds=$2 ;; --waves) waves=$2 ;;
    *) echo "proxies-ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
[[ -n "$arms" ]] || { echo "proxies-ab.sh: --arms is needed (e.g. --arms sd2+t,dsl4+t)" >&2; exit 2; }
[[ "$conc" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "proxies-ab.sh: --concurrency '$conc' must be numbers joined by commas" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "proxies-ab.sh: --rounds '$rounds' must be a positive whole number" >&2; exit 2; }
[[ "$waves" =~ ^[1-9][0-9]*$ ]] || { echo "proxies-ab.sh: --waves '$waves' must be a positive whole number" >&2; exit 2; }
IFS=, read -r -a labelled <<< "$arms${small:+,$small}"
for a in "${labelled[@]}"; do
  case $a in
    *+t) ;;
    dsl[0-9]*+[uvfesd]) ;;
    *+[uvfesd]) echo "proxies-ab.sh: arm '$a': +u, +v, +f, +e, +s and +d act on a DSL engine, so they take a dslN arm" >&2; exit 2 ;;
    *) echo "proxies-ab.sh: arm '$a' needs a label: +t (host timer) or, on a dslN arm, +u (its stop unpriced), +v (unpriced, no device loop), +f (only one request's batch size forgets), +e (the served width logs its tests), +s (+e, the narrower slot priced first) or +d (+s, the draft step priced at start-up)" >&2; exit 2 ;;
  esac
done
[[ -d .gpu-bundles/prompts ]] || { echo "proxies-ab.sh: no .gpu-bundles/prompts: carry it with the last chunk" >&2; exit 2; }
[[ -n "${OUT:-}" ]] || { echo "proxies-ab.sh: OUT is not set: run it on the device (run's \$OUT)" >&2; exit 2; }
chunk=${CHUNK:-$(find .gpu-bundles -maxdepth 1 -type d -regex '.*/b[0-9]+' | sort -V | tail -n 1)}
[[ -n "$chunk" && -d "$chunk" ]] || { echo "proxies-ab.sh: no chunk ${CHUNK:-.gpu-bundles/b<N>}: carry the bundle's last chunk with .gpu-bundles/prompts (or set CHUNK)" >&2; exit 2; }
here=$(dirname "${BASH_SOURCE[0]}")
mkdir -p "$plan"
root=$(GPU_HOST_ROOT=${GPU_HOST_ROOT:-/tmp/gpuhost} bash "$here/stage-last.sh" "$plan" "$chunk")
# shellcheck source=/dev/null
source "$root/env.sh"
M=$root/models
GPU_HOST_ROOT=$root SUITE_ROOT=${SUITE_ROOT:-$root} bash "$here/$chain" "$plan"
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
if [[ -n "$small" ]] && (( ${gpu_mib:-0} < 100000 )); then arms=$small; fi
same=''; [[ -n "$rotate" ]] || same=', the same prompts every round'
w=''; (( waves == 1 )) || w=" of $waves waves"
echo "GPU memory ${gpu_mib:-?} MiB: $name $arms at $conc, $rounds rounds$w$same, once $plan/go exists" | tee "$plan/ab-plan.txt"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
T=$(ab_arm_options "$arms")
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$plan/go AB_WAIT_S=900 \
  bash "$here/ab-start.sh" "$name" -- --models "$M" --target smollm2-135m-x8b \
  --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts --concurrency "$conc" \
  --max-tokens 256 --waves "$waves" --base-requests 8 ${rotate:+"$rotate"} --engine "$E" \
  --out abab.json --arms "$arms" --arm-options "$T" --rounds "$rounds" --warm-rounds 1 \
  --dsl-starts-alone > "$plan/ab-start-$name.log" 2>&1 || { cat "$plan/ab-start-$name.log" >&2; exit 1; }
sleep "${SETTLE_S:-5}"
tar czf "$OUT/a.tgz" -C "$(dirname "$plan")" "$(basename "$plan")"
suite=" (no suite)"; [[ "$chain" == alone-proxies.sh ]] || suite=" beside the GPU suite"
echo "started: proxies chain$suite; queued on $plan/go: $name"
