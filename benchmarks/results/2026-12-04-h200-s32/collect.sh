#!/usr/bin/env bash
# Session 32 (written in session 31, not yet run), commands B...: each issued
# the moment the one before answers, on the same warm host (it goes back after
# ~30 s without a command: session 31 lost its last points reading an output
# in between). Brings back A's logs (the draft shas), the suite's tarball once,
# then waits up to WAIT s (default 560) for the proxies' A/B s32p and, once
# that has ended, for the small pair's s32s, collecting whatever ran.
# Back: a.tgz, gpu-suite.tgz (once), s32p.tgz, s32s.tgz (once started), and
# pr2.tgz (PR 2 alone, queued after s32s, session 33) once s32s has ended.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
R=/tmp/s32
cp /tmp/proxies/*.log "$R/" 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s32
echo "suite: $(cat $R/suite.rc 2>/dev/null || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); small draft: $(cat $R/small.rc 2>/dev/null || echo running); calibration: $(cat $R/calibration.rc 2>/dev/null || echo -); go2: $([[ -f $R/go2 ]] && echo yes || echo no); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null)"
grep -h "draft weights sha256\|non-deterministic op\|acceptance after" /tmp/proxies/distill-*.log "$R/distill-l4-self.log" 2>/dev/null
[[ -f $R/suite-out/gpu-suite.tgz && ! -f $R/suite-sent ]] && cp $R/suite-out/gpu-suite.tgz "$OUT/" && touch $R/suite-sent
left() { echo $(( W - ($(date +%s) - T0) )); }
if [[ ! -f /tmp/ab/s32p/rc ]] || [[ ! -f $R/p-sent ]]; then
  bash scripts/gpu-host/ab-collect.sh s32p --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
  [[ -f /tmp/ab/s32p/rc ]] && touch $R/p-sent
fi
if [[ -d /tmp/ab/s32s ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh s32s --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
if [[ -d /tmp/ab/pr2 && -f /tmp/ab/s32s/rc ]] && (( $(left) > 5 )); then
  bash scripts/gpu-host/ab-collect.sh pr2 --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
fi
true
