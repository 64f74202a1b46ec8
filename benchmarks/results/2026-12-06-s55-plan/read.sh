#!/usr/bin/env bash
# Usage: bash benchmarks/results/2026-12-06-s55-plan/read.sh DEST A_TGZ S56P_TGZ | --help
#
# Here, after the device session of this plan: copies the WHILE-node
# benchmarks' output (while_node_cost.txt from first.sh's call, which the
# reader copies into DEST; while_body_torch.txt from a.tgz) into DEST (a new
# benchmarks/results/<date>-<gpu>-s56 folder), unpacks the A/B (s56p.tgz)
# (with the DSL arm's draft loop graphs, draft-loop-*.dot.gz, and the torch
# bodies' loop graphs, torch-loop-*.dot.gz) and writes full-steps.txt (full_steps.py against sd2+t at each c),
# host-timer.txt (sd2+t and sd3+t against dsl4+t) and the verdict of dsl4
# (verdict.py --label t: the best of sd2 and sd3 at each c). Either tarball
# may be "-" when it did not come back. The README of DEST is the reader's.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../../../scripts/lib/common.sh"
help_or_usage "$@"
[[ $# -eq 3 ]] || { echo "read.sh: DEST A_TGZ S56P_TGZ (see --help)" >&2; exit 2; }
dest=$1 a=$2 ab=$3 p=s56p
bench=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest"
if [[ "$a" != - ]]; then
  tmp=$(mktemp -d); tar xzf "$a" -C "$tmp"
  for x in while_body_torch.txt host.txt ab-plan.txt; do
    [[ -f "$tmp/s56/$x" ]] && cp "$tmp/s56/$x" "$dest/"
  done
  for x in "$tmp"/s56/dot-torch/*.dot; do
    [[ -f "$x" ]] && gzip -c "$x" > "$dest/torch-$(basename "$x").gz"
  done
  rm -rf "$tmp"
fi
if [[ "$ab" != - ]]; then
  unpack_ab_run "$ab" "$dest" "$p"
  cd "$dest"
  for c in 1 2 4 32; do
    python3 "$bench/full_steps.py" --base sd2+t --concurrency "$c" "$p-abab.json.gz" || true
  done > full-steps.txt
  { for arm in sd2+t sd3+t; do
      python3 "$bench/host_timer_table.py" --pair "$arm" dsl4+t "$p-abab.json.gz" || true
    done; } > host-timer.txt
  python3 "$bench/verdict.py" --label t --dsl-arm dsl4 --out "verdict-$p-dsl4.json" \
    proxies="$p-abab.json.gz" | tee "verdict-$p-dsl4.txt" || true
fi
