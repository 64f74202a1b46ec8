#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-06-s52-plan/read.sh DEST S53F_TGZ S53P_TGZ | --help
#
# Here, after the device session of this plan: unpacks the profile (s53f.tgz)
# and the A/B (s53p.tgz) that collect.sh returned into DEST (a new
# benchmarks/results/<date>-<gpu>-s53 folder) and writes beside them what the
# plan's README reads: report.txt (profile_step's, copied up), full-steps
# (full_steps.py against sd2+t and against dsl4@1-64:2+t), host-timer
# (host_timer_table.py --pair for sd2+t vs each DSL arm, dsl4@ vs dsl4) and
# the verdicts of dsl4 and dsl4@1-64:2 (verdict.py --label t). Either tarball may be
# "-" when it did not come back. The README of DEST is the reader's to write.
# Later plans run it with RUN_F and RUN_P (the profile's and the A/B's names,
# default s53f and s53p), as ../2026-12-06-s53-plan/read.sh does.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
[[ $# -eq 3 ]] || { echo "read.sh: DEST S53F_TGZ S53P_TGZ (see --help)" >&2; exit 2; }
dest=$1 prof=$2 ab=$3
f=${RUN_F:-s53f} p=${RUN_P:-s53p}
bench=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest"
if [[ "$prof" != - ]]; then
  mkdir -p "$dest/$f" && tar xzf "$prof" -C "$dest/$f"
  cp "$dest/$f/prof/report.txt" "$dest/profile-report.txt" 2>/dev/null \
    || echo "read.sh: no prof/report.txt in $prof (the profile did not finish; see $f/profile_step.log)"
  rm -f "$dest/$f"/prof/*.prof  # cProfile dumps: large, and report.txt has their diff
fi
if [[ "$ab" != - ]]; then
  unpack_ab_run "$ab" "$dest" "$p"
  cd "$dest"
  { python3 "$bench/full_steps.py" --base sd2+t "$p-abab.json.gz"
    echo; python3 "$bench/full_steps.py" --base dsl4@1-64:2+t "$p-abab.json.gz"; } > full-steps.txt || true
  { for arm in dsl2@1-64:2+t dsl4@1-64:2+t dsl4+t; do
      python3 "$bench/host_timer_table.py" --pair sd2+t "$arm" "$p-abab.json.gz" 2>/dev/null || true
    done
    python3 "$bench/host_timer_table.py" --pair dsl4@1-64:2+t dsl4+t "$p-abab.json.gz" || true
  } > host-timer.txt
  for arm in dsl4 dsl4@1-64:2; do
    python3 "$bench/verdict.py" --label t --dsl-arm "$arm" --out "verdict-$p-${arm//[@:]/_}.json" \
      proxies="$p-abab.json.gz" > "verdict-$p-${arm//[@:]/_}.txt" || true
  done
  cat full-steps.txt
fi
