#!/usr/bin/env bash
# Session 19 (2026-12-03), command B, on the warm host of command A (proxies built):
# two more pairs with only their two engines alive, c = 64, 32, 4 ABBA rounds
# (ab.sh): the series' default DSL (dsl4: cost-aware stop at cap 4, started alone
# after SD K=3 so that it times its step costs on an idle GPU) against SD K=3, then
# SD K=2 against target-only. With command A's SD K=3 / target-only this gives, at
# each load, every arm against a common base with no other engine alive.
# Arms fixed in advance. Code: the 50-patch series, applied (dsl at 5d4abcf).
set -uo pipefail
T0=$(date +%s)
export END=$(( T0 + 585 ))
bash benchmarks/results/2026-12-03-h200-s19/ab.sh pair-dsl4-sd3 dsl4,sd3 --dsl-starts-alone
bash benchmarks/results/2026-12-03-h200-s19/ab.sh pair-sd2-target sd2,target
echo "[$(( $(date +%s) - T0 ))s] done"
