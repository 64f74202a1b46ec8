#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/small-ab.sh NAME [options] | --help
#
# On a staged GPU host, from the checkout's root with .gpu-bundles/prompts
# carried (no chunk: the staged root is reused): the small pair's A/B NAME
# (SmolLM2-135M and its 4-layer self-distilled draft), the same prompts every
# round, each arm timing its host calls (+t: ab_hooks.HostTimer), each DSL
# engine started alone. Returns in a few seconds:
#   1. the pair's chain (small-start.sh: the target built, the draft distilled
#      or assembled, ~170 s), unless SMALL_DIR/done already says 0 (a chain
#      of this host finished: the next A/B reuses it);
#   2. the A/B queued on SMALL_DIR/done (ab-start.sh);
#   3. $OUT/small.tgz: SMALL_DIR (the chain's logs so far).
# Collect with: bash scripts/gpu-host/ab-collect.sh NAME --wait <left - 40>
#
# Options:
#   --arms ARMS        abab.py's arms, each labelled +t (default
#                      sd3+t,sd4+t,dsl4+t: SD K=3 and K=4, DSL's default cap)
#   --concurrency C    comma-separated, in the order run (default 1,8)
#   --waves W          waves a round (default 1: one wave of max(8, c)
#                      requests; session 62: one-wave rounds at 8 spread 34%,
#                      four waves 3.6%)
#   --rounds N         measured ABBA rounds after one warm round (default 8)
# Environment: GPU_HOST_ROOT (default /tmp/gpuhost), SMALL_DIR (default
# /tmp/small), OUT (where small.tgz goes).
#   bash scripts/gpu-host/small-ab.sh s63s --waves 4
# Exit status: 0 once the A/B is queued; 1 where the chain's or the A/B's
# start failed (its log on stderr); 2 on bad arguments.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
name=$1; shift
check_run_name small-ab.sh "$name"
arms=sd3+t,sd4+t,dsl4+t conc=1,8 waves=1 rounds=8
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || { echo "small-ab.sh: $1 needs a value (see --help)" >&2; exit 2; }
  case $1 in
    --arms) arms=$2 ;; --concurrency) conc=$2 ;; --waves) waves=$2 ;; --rounds) rounds=$2 ;;
    *) echo "small-ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
[[ "$conc" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "small-ab.sh: --concurrency '$conc' must be numbers joined by commas" >&2; exit 2; }
[[ "$waves" =~ ^[1-9][0-9]*$ ]] || { echo "small-ab.sh: --waves '$waves' must be a positive whole number" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "small-ab.sh: --rounds '$rounds' must be a positive whole number" >&2; exit 2; }
IFS=, read -r -a labelled <<< "$arms"
for a in "${labelled[@]}"; do
  [[ "$a" == *+t ]] || { echo "small-ab.sh: arm '$a' needs the label +t (host timer)" >&2; exit 2; }
done
root=${GPU_HOST_ROOT:-/tmp/gpuhost} small=${SMALL_DIR:-/tmp/small} here=scripts/gpu-host
[[ -f $root/env.sh ]] || { echo "small-ab.sh: no staged root at $root: stage the bundle first (docs/gpu-host.md)" >&2; exit 2; }
[[ -d .gpu-bundles/prompts ]] || { echo "small-ab.sh: no .gpu-bundles/prompts: carry it with this call" >&2; exit 2; }
[[ -n "${OUT:-}" ]] || { echo "small-ab.sh: OUT is not set: run it on the device (run's \$OUT)" >&2; exit 2; }
# shellcheck source=/dev/null
source "$root/env.sh"
if [[ "$(cat "$small/done" 2>/dev/null)" == 0 ]]; then
  chain="the small pair's chain of this host (done: 0)"
else
  GPU_HOST_ROOT=$root SMALL_DIR=$small bash "$here/small-start.sh"
  chain="started: the small pair's chain"
fi
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
T=$(ab_arm_options "$arms")
GPU_HOST_ROOT=$root AB_TIMEOUT_S=900 AB_WAIT_FILE=$small/done AB_WAIT_S=600 \
  bash "$here/ab-start.sh" "$name" -- --models "$root/models" --target smollm2-135m \
  --draft smollm2-l4-self --prompts .gpu-bundles/prompts --concurrency "$conc" \
  --max-tokens 256 --waves "$waves" --base-requests 8 --engine "$E" \
  --out abab.json --arms "$arms" --arm-options "$T" --rounds "$rounds" \
  --warm-rounds 1 --dsl-starts-alone > "$small/ab-start-$name.log" 2>&1 \
  || { cat "$small/ab-start-$name.log" >&2; exit 1; }
tar czf "$OUT/small.tgz" -C "$(dirname "$small")" "$(basename "$small")"
echo "$chain; queued on $small/done: $name ($arms at $conc, $rounds rounds of $waves wave(s))"
