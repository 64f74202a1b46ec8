#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-07-s56-plan/read.sh DEST A_TGZ S57P_TGZ | --help
#
# Here, after the device session of this plan: copies host.txt and
# ab-plan.txt from a.tgz into DEST (a new benchmarks/results/<date>-<gpu>-s57
# folder), unpacks the A/B (s57p.tgz) and writes full-steps.txt (full_steps.py
# against sd2+t at each c), host-timer.txt (sd2+t against each DSL arm),
# served-widths.txt (each DSL arm's served widths) and the verdicts of dsl4
# and dsl8 (verdict.py --label t: the best SD K of this run at each c, with
# target-only where it ran). Either tarball may be "-" when it did not come
# back. The README of DEST is the reader's.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
[[ $# -eq 3 ]] || { echo "read.sh: DEST A_TGZ S57P_TGZ (see --help)" >&2; exit 2; }
dest=$1 a=$2 ab=$3 p=s57p
bench=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest"
if [[ "$a" != - ]]; then
  tmp=$(mktemp -d); tar xzf "$a" -C "$tmp"
  for x in host.txt ab-plan.txt; do
    [[ -f "$tmp/s57/$x" ]] && cp "$tmp/s57/$x" "$dest/"
  done
  rm -rf "$tmp"
fi
[[ "$ab" != - ]] || exit 0
unpack_ab_run "$ab" "$dest" "$p"
cd "$dest"
for c in 1 2 4 8 16 32 64; do
  python3 "$bench/full_steps.py" --base sd2+t --concurrency "$c" "$p-abab.json.gz" || true
done > full-steps.txt
for dsl in dsl4 dsl8; do
  python3 "$bench/host_timer_table.py" --pair sd2+t "$dsl+t" "$p-abab.json.gz" || true
done > host-timer.txt
for dsl in dsl4 dsl8; do
  python3 "$bench/served_widths.py" "$p-abab.log.gz" --cap "${dsl#dsl}" --exact --arm "$dsl+t" || true
done > served-widths.txt
for dsl in dsl4 dsl8; do
  python3 "$bench/verdict.py" --label t --dsl-arm "$dsl" --out "verdict-$p-$dsl.json" \
    proxies="$p-abab.json.gz" | tee "verdict-$p-$dsl.txt" || true
done
