#!/usr/bin/env bash
# Session 19 (2026-12-03), command D2, on D1's warm host (proxies built): the quiet
# harness, with only the pair under comparison alive (ab.sh, c = 64, 32, 3 ABBA
# rounds): first the series' default DSL (dsl4: cost-aware stop at cap 4, started
# alone after SD K=3 so it times its step costs on an idle GPU) against SD K=3, then
# SD K=3 against target-only, until END (the device time left). Everything comes
# back as d2.tgz. Arms fixed in advance.
# Code: the 50-patch series, applied (dsl at 5d4abcf).
set -uo pipefail
: "${END:?END: the deadline, seconds since the epoch}"
T0=$(date +%s)
export CONC=${CONC:-64,32} ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT/d2"
OUT="$OUT/d2" bash benchmarks/results/2026-12-03-h200-s19/ab.sh pair-dsl4-sd3 dsl4,sd3 --dsl-starts-alone
OUT="$OUT/d2" bash benchmarks/results/2026-12-03-h200-s19/ab.sh pair-sd3-target sd3,target
echo "[$(( $(date +%s) - T0 ))s] done"
tar czf "$OUT/d2.tgz" -C "$OUT" d2 && rm -rf "$OUT/d2"
