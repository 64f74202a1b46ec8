#!/usr/bin/env bash
# Session 20 (2026-12-03), command B, issued at once after A on the same warm host (A
# built the proxies). First the width against the rule: DSL at cap 3 (the same 4-slot
# verify as SD K=3; started alone after SD) against SD K=3, c = 64, 32, 3 ABBA rounds,
# only these two engines alive, to T0 + 250 s. Then, to the deadline: which of the host, a DSL engine alive, or its device-side loops
# make the large-load A/B noisy (docs/dsl-at-batch-size.md, Next 0). SD K=3 (base)
# against SD K=2 at c = 64, 2 ABBA rounds a phase: alone; beside an idle SD K=4 engine;
# also beside an idle DSL engine (cap 4) whose host drives its draft loop
# (ab_hooks.DeviceLoopOff: its conditional-node WHILE graphs freed); also beside an
# idle DSL engine with its device loops. Each round's long-step share, step split and
# spread are the measure. Arms fixed in advance. Back: pair-dsl3-sd3.tgz, bystanders.tgz.
# Code: the 50-patch series (vllm branch dsl at 5d4abcf).
set -uo pipefail
T0=$(date +%s)
AB_END=$(( T0 + 250 )) bash benchmarks/results/2026-12-03-h200-s20/ab.sh pair-dsl3-sd3 \
  --arms dsl3,sd3 --concurrency 64,32 --rounds 3 --dsl-starts-alone
rc=$?; echo "[$(( $(date +%s) - T0 ))s] pair rc=$rc"
AB_END=$(( T0 + 585 )) bash benchmarks/results/2026-12-03-h200-s20/ab.sh bystanders \
  --arms sd3,sd2 --concurrency 64 --rounds 2 --dsl-starts-alone \
  --bystanders sd4/dsl4+hostloop/dsl4 \
  --arm-options '{"hostloop": {"engine": {"worker_extension_cls": "ab_hooks.DeviceLoopOff"}, "rpc": "dsl_close_device_loops"}}'
rc=$?; echo "[$(( $(date +%s) - T0 ))s] rc=$rc"
