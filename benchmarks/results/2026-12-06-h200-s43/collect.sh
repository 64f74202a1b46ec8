#!/usr/bin/env bash
# Session 43's collect call after a-main.sh (this folder), each issued the
# moment the one before answers, on the same warm host: brings back /tmp/s43p
# (a.tgz: host, chain logs, the traces once written), then waits up to WAIT s
# (default 560) for the A/B s43p, collecting what ran (s43p.tgz).
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
left() { echo $(( W - ($(date +%s) - T0) )); }
if [[ ! -d /tmp/ab/s43p ]]; then  # the traces alone (CONC=none): wait for them
  while [[ ! -f /tmp/s43p/traces.rc ]] && (( $(left) > 10 )); do sleep 2; done
fi
tar czf "$OUT/a.tgz" -C /tmp s43p
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); traces: $(cat /tmp/s43p/traces.rc 2>/dev/null || echo -); go: $([[ -f /tmp/s43p/go ]] && echo yes || echo no)"
tail -n 3 /tmp/s43p/calibration-*.log 2>/dev/null
if [[ -d /tmp/ab/s43p ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh s43p --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
true
