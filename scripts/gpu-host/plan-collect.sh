#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/plan-collect.sh PLAN_DIR RUN... [--wait SECONDS] | --help
#
# On the GPU host, every call after scripts/gpu-host/proxies-ab.sh NAME PLAN_DIR,
# each issued the moment the one before answers: the host goes back ~30 s after a call, and after calls
# of ~540-585 s it was gone 5 times in 6 by the next (docs/gpu-host.md). Each
# call returns as soon as there is something new, within SECONDS (default 280):
#   - until the chain's part has ended (PLAN_DIR/after.done): waits for it, then
#     returns PLAN_DIR as $OUT/a.tgz (host.txt, ab-plan.txt, the chain's logs
#     from PROXY_DIR, the GPU suite's results where one ran beside);
#   - after that: collects the first RUN not yet returned in full
#     (scripts/gpu-host/ab-collect.sh RUN, $OUT/RUN.tgz, with what is left of
#     SECONDS); abab.json is written after every point, so a call returns the
#     points finished so far. A RUN that had ended when returned is not
#     returned again; a RUN this host never started is passed over.
# Each call first prints one state line: the chain's steps, the suite's exit
# status, after-suite's, and whether the A/B's go file is there.
# Sessions 45-69 ran this as benchmarks/results/2026-12-06-s45-plan/collect.sh
# (PLAN_DIR and PLAN_RUNS in the environment, WAIT for SECONDS).
#
# Environment: PROXY_DIR (the chain's logs, default /tmp/proxies), AB_DIR
# (ab-collect.sh's, default /tmp/ab), OUT (set by the device command).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
plan=${1%/}; shift
[[ "$plan" != -* ]] || die "PLAN_DIR comes first (got '$plan'; see --help)"
runs=() wait_s=280
while [[ $# -gt 0 ]]; do
  case $1 in
    --wait) wait_s=${2:-}; shift 2 || die "--wait needs SECONDS" ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) check_run_name plan-collect.sh "$1"; runs+=("$1"); shift ;;
  esac
done
[[ "$wait_s" =~ ^[0-9]+$ ]] || die "--wait '$wait_s' is not a number of seconds"
(( ${#runs[@]} )) || die "no RUN named: give the A/B names proxies-ab.sh started, in order"
: "${OUT:?plan-collect.sh: \$OUT is not set (the device command sets it)}"
[[ -d "$plan" ]] || die "no $plan: proxies-ab.sh did not run on this host (or the host went back since)"
proxies=${PROXY_DIR:-/tmp/proxies} ab=${AB_DIR:-/tmp/ab}
t0=$(date +%s)
left() { echo $(( wait_s - ($(date +%s) - t0) )); }
rc_of() { cat "$plan/$1.rc" 2>/dev/null || echo -; }
state() {
  local suite=running
  if [[ -f "$plan/suite.rc" ]]; then suite=$(cat "$plan/suite.rc")
  elif [[ -f "$plan/after.skipped" ]]; then suite="none run"; fi
  echo "proxies: $({ tr '\n' ' ' < "$proxies/chain.log"; } 2>/dev/null || true);" \
    "suite rc: $suite; kernels: $(rc_of kernels); intree: $(rc_of intree);" \
    "go: $([[ -f "$plan/go" ]] && echo yes || echo no)"
}
if [[ ! -f "$plan/.suite-sent" ]]; then
  while [[ ! -f "$plan/after.done" ]] && (( $(left) > 5 )); do sleep 2; done
  cp "$proxies"/*.log "$plan/" 2>/dev/null || true
  tar czf "$OUT/a.tgz" -C "$(dirname "$plan")" "$(basename "$plan")"
  [[ -f "$plan/after.done" ]] && touch "$plan/.suite-sent"
  state
  tail -n 2 "$plan/suite.out" 2>/dev/null || true
  exit 0
fi
state
for name in "${runs[@]}"; do
  [[ -d "$ab/$name" ]] || continue
  [[ -f "$plan/.$name-sent" ]] && continue
  (( $(left) > 5 )) || break
  bash "$ROOT/scripts/gpu-host/ab-collect.sh" "$name" --wait "$(left)" 2>&1 \
    | { grep -v INFO || true; } | tail -n 25 || true
  [[ -f "$ab/$name/rc" ]] && touch "$plan/.$name-sent"
  exit 0
done
echo "nothing left to return: ${runs[*]} returned in full or not started on this host"
