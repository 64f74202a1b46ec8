#!/usr/bin/env bash
# Session 19 (2026-12-03), command C, on the warm host of commands A and B: the same
# arms with all four engines alive, as sessions 13-18 measured (sd3 base, target,
# sd2, dsl4 started alone), c = 64, 32, 4 ABBA rounds (ab.sh). Against A and B: do the
# other engines slow and scatter the speculative arms on one machine (session 18's
# R against P and Q, which ran on different machines)?
# Arms fixed in advance. Code: the 50-patch series, applied (dsl at 5d4abcf).
set -uo pipefail
T0=$(date +%s)
export END=$(( T0 + 585 ))
bash benchmarks/results/2026-12-03-h200-s19/ab.sh four sd3,target,sd2,dsl4 --dsl-starts-alone
echo "[$(( $(date +%s) - T0 ))s] done"
