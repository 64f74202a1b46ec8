#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/ab-run.sh NAME [--] ABAB_ARGS... | --help
#
# On a staged GPU host, from the checkout's root: runs benchmarks/abab.py
# ABAB_ARGS in the foreground until a deadline, beside two samplers of the host,
# and leaves everything in one file, $OUT/NAME.tgz (a command sends back at most
# 8 files): abab.json (written by abab.py after each point, so a run cut at the
# deadline keeps its finished points), abab.log, summary.txt (abab.py's summary
# lines, or why there is none), top.log (every 2 s: the machine's CPU line and
# the processes over 3% of a core) and gpu.csv (every 0.5 s: SM and memory
# clocks, power, utilisation, temperature), so that a slow or noisy arm can be
# told apart as host contention, GPU clocks or neither. abab.py writes its JSON
# where this script says (do not pass --out). Exits with abab.py's status (124
# when the deadline cut it), after printing the summary.
#
# Environment (all optional):
#   GPU_HOST_ROOT  staged root (default /tmp/gpuhost; its env.sh is sourced)
#   AB_END         the deadline, seconds since the epoch (e.g. the command's
#                  start + 570, so that several runs share one command)
#   AB_BUDGET_S    without AB_END: seconds from now (default 570)
#   AB_MIN_S       a run with less time than this left is not started (exit 0,
#                  a note in the tarball; default 60: engines take longer to
#                  start than that)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=scripts/lib/host_samplers.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/host_samplers.sh"
help_or_usage "$@"
name=$1; shift
check_run_name ab-run.sh "$name"
[[ "${1:-}" == "--" ]] && shift
for a in "$@"; do
  [[ "$a" != --out && "$a" != --out=* ]] || {
    echo "ab-run.sh: do not pass --out: the JSON goes into \$OUT/$name.tgz" >&2; exit 2; }
done
: "${OUT:?ab-run.sh: OUT is not set: run it as a device command}"
budget=${AB_BUDGET_S:-570}
[[ "$budget" =~ ^[0-9]+$ ]] || {
  echo "ab-run.sh: AB_BUDGET_S '$budget' is not a number of seconds" >&2; exit 2; }
min_s=${AB_MIN_S:-60}
[[ "$min_s" =~ ^[0-9]+$ ]] || {
  echo "ab-run.sh: AB_MIN_S '$min_s' is not a number of seconds" >&2; exit 2; }
end=${AB_END:-$(( $(date +%s) + budget ))}
[[ "$end" =~ ^[0-9]+$ ]] || {
  echo "ab-run.sh: AB_END '$end' is not a time in seconds since the epoch" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
require_staged_root ab-run.sh "$root"
# shellcheck disable=SC1091
source "$root/env.sh"
run=$(mktemp -d "${TMPDIR:-/tmp}/ab-run-$name.XXXXXX")
pack() {
  tar czf "$OUT/$name.tgz" -C "$run" . && rm -rf "$run"
}
left=$(( end - $(date +%s) ))
if (( left < min_s )); then
  echo "$name: ${left} s left before the deadline, not started" | tee "$run/summary.txt"
  pack
  exit 0
fi
start_host_samplers "$run"
t0=$(date +%s)
rc=0
PYTHONUNBUFFERED=1 timeout "$left" python3 benchmarks/abab.py "$@" --out "$run/abab.json" \
  > "$run/abab.log" 2>&1 || rc=$?
stop_host_samplers
python3 - "$run/abab.json" "$rc" "$(( $(date +%s) - t0 ))" > "$run/summary.txt" 2>&1 <<'PY' || true
import json, sys
path, rc, secs = sys.argv[1:]
try:
    d = json.load(open(path))
except (OSError, ValueError) as e:
    sys.exit(f"abab.py exit {rc} after {secs} s, no result: {e}")
print(f"abab.py exit {rc} after {secs} s; engines up in {d['init_s']:.0f} s; "
      f"dropped: {d['failed'] or 'none'}")
print("\n".join(d.get("summary", [])))
PY
cat "$run/summary.txt"
pack
exit "$rc"
