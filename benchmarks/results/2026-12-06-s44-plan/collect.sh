#!/usr/bin/env bash
# Session 44's plan: the collect call after a-main.sh (this folder), each
# issued the moment the one before answers, on the same warm host: brings back
# /tmp/s45p (a.tgz: host, chain logs), then waits up to WAIT s (default 560)
# for the A/B s45p, collecting what ran (s45p.tgz).
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
left() { echo $(( W - ($(date +%s) - T0) )); }
tar czf "$OUT/a.tgz" -C /tmp s45p
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); go: $([[ -f /tmp/s45p/go ]] && echo yes || echo no)"
if [[ -d /tmp/ab/s45p ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh s45p --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
true
