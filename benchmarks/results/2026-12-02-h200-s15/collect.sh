#!/usr/bin/env bash
# Session 15 (2026-12-02), commands E and F: wait for the A/B that command D started
# (ab.sh, in its own process session) to finish or for WAIT_S (default 580 s) to pass,
# then tar what it has: $OUT/<name>.tgz (logs/abab.log, logs/dsl-lines.txt: the DSL
# engine's "Dynamic speculation lookahead" lines with its cost table and widths,
# abab/abab-x8b.json as of the last finished point). Measures nothing itself.
set -uo pipefail
R=/tmp/s15
T_START=$(date +%s)
[ -d "$R" ] || { echo "no /tmp/s15: the host is not the one command D ran on"; exit 1; }
while [ ! -f "$R/ab.done" ] && [ $(( $(date +%s) - T_START )) -lt ${WAIT_S:-580} ]; do sleep 3; done
cat "$R/ab.done" 2>/dev/null || echo "A/B still running after $(( $(date +%s) - T_START ))s"
grep -h "Dynamic speculation lookahead" "$R/logs/abab.log" > "$R/logs/dsl-lines.txt" 2>/dev/null
cut -c1-400 "$R/logs/dsl-lines.txt" | tail -n 8
grep -h "^\[abab\]\|^c=\|^  " "$R/logs/abab.log" | tail -n 40
tar czf "$OUT/${NAME:-e}.tgz" -C "$R" logs abab
