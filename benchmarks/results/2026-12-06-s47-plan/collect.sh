#!/usr/bin/env bash
# Session 47's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (read the files afterwards: the
# host goes back ~30 s after a call, and after calls of ~540-585 s it was gone
# 5 times in 6 by the next call, docs/gpu-host.md). Each call is short by
# default (WAIT 280 s) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s48/after.done): waits for it,
#     then returns /tmp/s48 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s48p (on an H100 then s48q) up to what is
#     left of WAIT and returns what it has (s48p.tgz, s48q.tgz; abab.json is
#     written after every point); an A/B returned once it had ended is not
#     returned again.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-280}; R=/tmp/s48
left() { echo $(( W - ($(date +%s) - T0) )); }
state() {
  echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); suite rc: $(cat $R/suite.rc 2>/dev/null || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); go: $([[ -f $R/go ]] && echo yes || echo no)"
}
if [[ ! -f $R/.suite-sent ]]; then
  while [[ ! -f $R/after.done ]] && (( $(left) > 5 )); do sleep 2; done
  cp /tmp/proxies/*.log "$R/" 2>/dev/null
  tar czf "$OUT/a.tgz" -C /tmp s48
  [[ -f $R/after.done ]] && touch "$R/.suite-sent"
  state; tail -n 2 "$R/suite.out" 2>/dev/null
  exit 0
fi
state
# The first A/B not yet returned in full (an H100 runs s48p, then s48q).
for name in s48p s48q; do
  [[ -d /tmp/ab/$name ]] || continue
  [[ -f $R/.$name-sent ]] && continue
  (( $(left) > 5 )) || break
  bash scripts/gpu-host/ab-collect.sh "$name" --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
  [[ -f /tmp/ab/$name/rc ]] && touch "$R/.$name-sent"
  break
done
true
