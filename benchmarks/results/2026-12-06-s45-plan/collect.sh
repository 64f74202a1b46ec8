#!/usr/bin/env bash
# Session 45's plan: the collecting calls after a-main.sh (this folder), each
# issued the moment the one before answers (read the files afterwards: the
# host goes back ~30 s after a call, and after calls of ~540-585 s it was gone
# 5 times in 6 by the next call, docs/gpu-host.md). Each call is short by
# default (WAIT 280 s) and returns as soon as there is something new:
#   - until the suite's part has ended (/tmp/s46/after.done): waits for it,
#     then returns /tmp/s46 (a.tgz: host, chain logs, the suite's results);
#   - after that: waits for the A/B s46p (on an H100 then s46q) up to what is
#     left of WAIT and returns what it has (s46p.tgz, s46q.tgz; abab.json is
#     written after every point); an A/B returned once it had ended is not
#     returned again.
# Later plans run it with PLAN_DIR (default /tmp/s46) and PLAN_RUNS (the A/Bs
# in order, default "s46p s46q"), as ../2026-12-06-s47-plan/collect.sh does.
set -uo pipefail
T0=$(date +%s); W=${WAIT:-280}; R=${PLAN_DIR:-/tmp/s46}
left() { echo $(( W - ($(date +%s) - T0) )); }
state() {
  echo "proxies: $({ tr '\n' ' ' < /tmp/proxies/chain.log; } 2>/dev/null); suite rc: $(cat $R/suite.rc 2>/dev/null || { [[ -f $R/after.skipped ]] && echo "none run"; } || echo running); kernels: $(cat $R/kernels.rc 2>/dev/null || echo -); intree: $(cat $R/intree.rc 2>/dev/null || echo -); go: $([[ -f $R/go ]] && echo yes || echo no)"
}
if [[ ! -f $R/.suite-sent ]]; then
  while [[ ! -f $R/after.done ]] && (( $(left) > 5 )); do sleep 2; done
  cp /tmp/proxies/*.log "$R/" 2>/dev/null
  tar czf "$OUT/a.tgz" -C "$(dirname "$R")" "$(basename "$R")"
  [[ -f $R/after.done ]] && touch "$R/.suite-sent"
  state; tail -n 2 "$R/suite.out" 2>/dev/null
  exit 0
fi
state
# The first A/B not yet returned in full (an H100 runs s46p, then s46q).
for name in ${PLAN_RUNS:-s46p s46q}; do
  [[ -d /tmp/ab/$name ]] || continue
  [[ -f $R/.$name-sent ]] && continue
  (( $(left) > 5 )) || break
  bash scripts/gpu-host/ab-collect.sh "$name" --wait "$(left)" 2>&1 | grep -v INFO | tail -n 25
  [[ -f /tmp/ab/$name/rc ]] && touch "$R/.$name-sent"
  break
done
true
