#!/usr/bin/env bash
# Session 28 (2026-12-04), commands B...: each issued at once after the one
# before on the same warm host. Brings back A's logs (proxies, suite so far),
# the suite's tarball once it has ended, then collects the A/B s28 to WAIT s
# (default 280). Back: a.tgz, gpu-suite.tgz (once), s28.tgz.
set -uo pipefail
cp /tmp/proxies/*.log /tmp/s28/ 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s28
echo "suite: $(cat /tmp/s28/suite.rc 2>/dev/null || echo running) $(tail -n 1 /tmp/gpu-suite/times.log 2>/dev/null); go: $([[ -f /tmp/s28/go ]] && echo yes || echo no); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null)"
[[ -f /tmp/s28/suite-out/gpu-suite.tgz && ! -f /tmp/s28/suite-sent ]] && cp /tmp/s28/suite-out/gpu-suite.tgz "$OUT/" && touch /tmp/s28/suite-sent
bash scripts/gpu-host/ab-collect.sh s28 --wait "${WAIT:-280}" 2>&1 | tail -n 30
