#!/usr/bin/env bash
# Session 45: the collect call after a-main.sh (this folder), each issued the
# moment the one before answers, on the same warm host: brings back /tmp/s45
# (a.tgz: host, chain logs, the suite's results and logs once written), then
# waits up to WAIT s (default 560) for the A/B s45p, collecting what ran.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
left() { echo $(( W - ($(date +%s) - T0) )); }
cp /tmp/proxies/*.log /tmp/s45/ 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s45
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite rc: $(cat /tmp/s45/suite.rc 2>/dev/null || echo running); kernels: $(cat /tmp/s45/kernels.rc 2>/dev/null || echo -); intree: $(cat /tmp/s45/intree.rc 2>/dev/null || echo -); go: $([[ -f /tmp/s45/go ]] && echo yes || echo no)"
tail -n 3 /tmp/s45/suite.out 2>/dev/null
if [[ -d /tmp/ab/s45p ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh s45p --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
# Again at the end: the suite's results are written while this call waits
# (session 45's first collect tarred only at its start and brought back none).
cp /tmp/proxies/*.log /tmp/s45/ 2>/dev/null
tar czf "$OUT/a.tgz" -C /tmp s45
true
