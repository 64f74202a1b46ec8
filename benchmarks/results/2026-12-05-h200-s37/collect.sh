#!/usr/bin/env bash
# Session 37, commands B...: each issued the moment the one before answers, on
# the same warm host. Brings back /tmp/s37 (a.tgz), the suite's tarball once it
# exists (once), then waits up to WAIT s (default 560) for s37s and s37prof in
# turn, collecting whatever ran (s37s.tgz, s37prof.tgz).
set -uo pipefail
T0=$(date +%s); W=${WAIT:-560}
R=/tmp/s37
left() { echo $(( W - ($(date +%s) - T0) )); }
if [[ ! -f $R/suite-sent ]]; then
  while [[ ! -f $R/after.done ]] && (( $(left) > 30 )); do sleep 2; done
fi
tar czf "$OUT/a.tgz" -C /tmp s37 --exclude=s37/suite-out
echo "suite: $(cat $R/suite.rc 2>/dev/null || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); small draft: $(cat $R/small.rc 2>/dev/null || echo running); go2: $([[ -f $R/go2 ]] && echo yes || echo no)"
grep -h "draft weights sha256\|acceptance after" "$R/distill-l4-self.log" 2>/dev/null
tail -n 3 "$R/kernels.log" "$R/intree.log" 2>/dev/null
[[ -f $R/suite-out/gpu-suite.tgz && ! -f $R/suite-sent ]] && cp $R/suite-out/gpu-suite.tgz "$OUT/" && touch $R/suite-sent
for run in s37s s37prof; do
  [[ -d /tmp/ab/$run ]] || continue
  [[ -f $R/$run-sent ]] && continue
  (( $(left) > 5 )) || break
  bash scripts/gpu-host/ab-collect.sh $run --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
  [[ -f /tmp/ab/$run/rc ]] && touch $R/$run-sent
  [[ -f /tmp/ab/$run/rc ]] || break
done
true
