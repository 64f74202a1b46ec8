#!/usr/bin/env bash
# Session 27 (2026-12-04), commands B...: each issued at once after the one
# before on the same warm host. Brings back the profile s27prof (as it is) and
# A's logs with the proxies' logs, then collects the A/B s27 to WAIT s
# (default 280). Back: a.tgz, s27prof.tgz, s27.tgz.
set -uo pipefail
cp /tmp/proxies/*.log /tmp/s27/ 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s27
[[ -d /tmp/ab/s27prof ]] && bash scripts/gpu-host/ab-collect.sh s27prof --wait 0 > /dev/null 2>&1
echo "prof rc: $(cat /tmp/ab/s27prof/rc 2>/dev/null || echo running); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null)"
bash scripts/gpu-host/ab-collect.sh s27 --wait "${WAIT:-280}" 2>&1 | tail -n 30
