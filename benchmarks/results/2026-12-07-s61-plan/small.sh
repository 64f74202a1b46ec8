#!/usr/bin/env bash
# Session 61's plan, part 2 (only once s62p has ended and > 900 s are left): the
# small pair's A/B on the already staged root, the same prompts every round.
# Run from the checkout's root with .gpu-bundles/prompts carried (no chunk: the
# root staged for s62p is reused); returns in a few seconds; collect with
#   bash scripts/gpu-host/ab-collect.sh s62s --wait <left - 40>
# Arms fixed here: SD K=3 and K=4 (session 42's base was K=4), DSL's default
# config (cap 4), each with host timers; c = 1 then 8; 1 warm + 8 rounds. The
# chain builds SmolLM2-135M and distils its 4-layer draft from the kept rows
# (~170 s in session 58), then three engines start (~60 s each).
set -euo pipefail
[[ "${1:-}" != -h && "${1:-}" != --help ]] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
# What this file wrote out in session 61 is scripts/gpu-host/small-ab.sh's
# defaults (its test checks the A/B's arguments against this run's).
exec bash scripts/gpu-host/small-ab.sh s62s
