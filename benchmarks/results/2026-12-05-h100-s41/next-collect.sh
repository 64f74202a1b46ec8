#!/usr/bin/env bash
# Next session's commands after next-served-gate.sh (or, with R=/tmp/s42p
# AB=s42p, next-proxies-gate.sh) in this folder, each issued the moment the
# one before answers, on the same warm host: brings back R (a.tgz), the
# suite's tarball once it exists (once), then waits up to WAIT s (default 560)
# for the A/B AB, collecting what ran (AB.tgz). (Session 40's, for s42.)
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
R=${R:-/tmp/s42}; AB=${AB:-s42}; n=$(basename "$R")
left() { echo $(( W - ($(date +%s) - T0) )); }
if [[ ! -f $R/suite-sent ]]; then
  while [[ ! -f $R/after.done ]] && (( $(left) > 30 )); do sleep 2; done
fi
tar czf "$OUT/a.tgz" --exclude="$n/suite-out" -C "$(dirname "$R")" "$n"
echo "suite: $(cat $R/suite.rc 2>/dev/null || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); small draft: $(cat $R/small/done 2>/dev/null || echo -); go: $([[ -f $R/go ]] && echo yes || echo no)"
tail -n 3 "$R/kernels.log" "$R/intree.log" 2>/dev/null
[[ -f $R/suite-out/gpu-suite.tgz && ! -f $R/suite-sent ]] && cp $R/suite-out/gpu-suite.tgz "$OUT/" && touch $R/suite-sent
if [[ -d /tmp/ab/$AB ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh "$AB" --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
true
