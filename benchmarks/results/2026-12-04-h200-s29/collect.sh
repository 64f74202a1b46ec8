#!/usr/bin/env bash
# Session 29 (2026-12-04), commands B...: each issued at once after the one
# before on the same warm host. Brings back A's logs (proxies, suite so far),
# the suite's tarball once it has ended, then collects the A/B s29 and, once
# that has ended and been sent, the tune sweep s29tune, within WAIT s
# (default 280) in all. Back: a.tgz, gpu-suite.tgz (once), s29.tgz,
# s29tune.tgz.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-280}
cp /tmp/proxies/*.log /tmp/s29/ 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s29
echo "suite: $(cat /tmp/s29/suite.rc 2>/dev/null || echo running) $(tail -n 1 /tmp/gpu-suite/times.log 2>/dev/null); go: $([[ -f /tmp/s29/go ]] && echo yes || echo no); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null)"
[[ -f /tmp/s29/suite-out/gpu-suite.tgz && ! -f /tmp/s29/suite-sent ]] && cp /tmp/s29/suite-out/gpu-suite.tgz "$OUT/" && touch /tmp/s29/suite-sent
if [[ ! -f /tmp/s29/ab-sent ]]; then
  bash scripts/gpu-host/ab-collect.sh s29 --wait "$W" 2>&1 | tail -n 30
  [[ -f /tmp/ab/s29/rc ]] && touch /tmp/s29/ab-sent
fi
left=$(( T0 + W - $(date +%s) ))
if [[ -f /tmp/s29/ab-sent ]]; then
  bash scripts/gpu-host/ab-collect.sh s29tune --wait $(( left > 0 ? left : 0 )) 2>&1 | tail -n 25
fi
