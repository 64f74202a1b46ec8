#!/usr/bin/env bash
# Session 35, commands B...: each issued the moment the one before answers, on
# the same warm host. Brings back A's logs, the suite's tarball once, then
# waits up to WAIT s (default 560) for pr2, s35prof and s35s in turn,
# collecting whatever ran. Back: a.tgz, gpu-suite.tgz (once), pr2.tgz,
# s35prof.tgz, s35s.tgz.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
R=/tmp/s35
cp /tmp/proxies/*.log "$R/" 2>/dev/null; tar czf "$OUT/a.tgz" -C /tmp s35
echo "suite: $(cat $R/suite.rc 2>/dev/null || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); small draft: $(cat $R/small.rc 2>/dev/null || echo running); go2: $([[ -f $R/go2 ]] && echo yes || echo no); proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null)"
grep -h "draft weights sha256\|non-deterministic op\|acceptance after" /tmp/proxies/distill-*.log "$R/distill-l4-self.log" 2>/dev/null
[[ -f $R/suite-out/gpu-suite.tgz && ! -f $R/suite-sent ]] && cp $R/suite-out/gpu-suite.tgz "$OUT/" && touch $R/suite-sent
left() { echo $(( W - ($(date +%s) - T0) )); }
for run in pr2 s35prof s35s; do
  [[ -d /tmp/ab/$run ]] || continue
  [[ -f $R/$run-sent ]] && continue
  (( $(left) > 5 )) || break
  bash scripts/gpu-host/ab-collect.sh $run --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
  [[ -f /tmp/ab/$run/rc ]] && touch $R/$run-sent
  [[ -f /tmp/ab/$run/rc ]] || break
done
true
