#!/usr/bin/env bash
# Session 31 (written in session 30, not yet run), commands B...: each issued
# at once after the one before on the same warm host. Brings back A's logs
# (proxies with the draft's sha256, suite so far), the suite's tarball once it
# has ended, then collects the A/B s31 within WAIT s (default 280).
# Back: a.tgz, gpu-suite.tgz (once), s31.tgz.
set -uo pipefail
cp /tmp/proxies/*.log /tmp/s31/ 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s31
echo "suite: $(cat /tmp/s31/suite.rc 2>/dev/null || echo running) $(tail -n 1 /tmp/gpu-suite/times.log 2>/dev/null); go: $([[ -f /tmp/s31/go ]] && echo yes || echo no); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); $(grep -h 'draft weights sha256' /tmp/proxies/distill-*.log 2>/dev/null)"
[[ -f /tmp/s31/suite-out/gpu-suite.tgz && ! -f /tmp/s31/suite-sent ]] && cp /tmp/s31/suite-out/gpu-suite.tgz "$OUT/" && touch /tmp/s31/suite-sent
bash scripts/gpu-host/ab-collect.sh s31 --wait "${WAIT:-280}" 2>&1 | tail -n 30
