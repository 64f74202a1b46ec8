#!/usr/bin/env bash
# Written in session 40 for the next session's first long command (issue 29,
# Next 0b): where the DSL step's extra host time beyond DSL's own calls
# goes. Session 40 (README here, item 4) measured DSL's named calls to a few
# µs, but the rest of the DSL step's extra time over SD K=4's (a median 225 µs
# at c = 1, 580 µs at c = 8) in ranges over the rounds that span zero.
# ab_hooks.HostTimer now also times the garbage collector per step (gc0-gc2):
# more allocation per DSL step would show there. The arms add
# target-only and SD K=2 (the issue's bar is best-K SD and, where it wins,
# target-only; the small pair's draft accepts ~0.6 tokens a draft of 4).
#
# Before, here: scripts/pack-offline.sh --all --cap 24MB (b9's MANIFEST
# git_head must be the series' vllm dsl head), then
#   bash scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts
# Device: b1-b8 and the rows one call each (docs/gpu-host.md), then this with
# carry .gpu-bundles/b9 and .gpu-bundles/prompts (returns in ~20 s), then
#   bash scripts/gpu-host/ab-collect.sh s41 --wait 560
# each call issued the moment the one before answers, until it says s41 ended.
#
# What runs (the series as the bundle has it; no GPU suite: session 40's ran
# on this code): the small pair with its 600-step draft (small-start.sh),
# then the A/B s41, c = 1 and 8, 1 warm + 8 ABBA rounds, arms fixed in
# advance, all under ab_hooks.HostTimer: target+t, sd2+t, sd4+t, dsl4+t (the
# series' default config, cap 4). Engines pinned to two CPUs of two
# different cores, the client kept off those cores (in session 40 the same
# arm's step ranged 2.8-4.2 ms between rounds, every call scaling with it: a
# busy hyperthread beside the stepping thread would do that; host.txt now
# lists which CPUs share a core).
# Device time ~19 min: staging ~4, small pair ~4, start-ups ~5, rounds ~6.
#   read: python3 benchmarks/host_timer_table.py abab.json.gz (gc0-gc2 beside
#         the calls) and --pair sd4+t dsl4+t (each call's own time, DSL less
#         SD, round by round); python3 benchmarks/results/2026-12-05-h200-s38/steps.py
#         abab.json.gz; python3 benchmarks/verdict.py --label t --dsl-arm dsl4
#         --out verdict.json small=abab.json.gz.
set -uo pipefail
R=/tmp/s41; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source "$root/env.sh"
GPU_HOST_ROOT=$root SMALL_DIR=$R/small bash scripts/gpu-host/small-start.sh || exit 1
# Two CPUs of two different cores for the engines (the highest CPU of each of
# the two highest cores), and every CPU of the other cores for the client
# (abab.py --pin-client): nothing of the run shares the engines' cores.
read -r CPUS OTHERS < <(python3 - <<'PY'
import os
from pathlib import Path
cores = {}
for cpu in sorted(os.sched_getaffinity(0)):
    topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
    try:
        core = (topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip()
    except OSError:
        core = ("?", str(cpu))
    cores.setdefault(core, []).append(cpu)
chosen = sorted(cores, key=lambda c: max(cores[c]))[-2:]
engines = [max(cores[c]) for c in chosen]
others = [cpu for c in cores if c not in chosen for cpu in cores[c]]
print(",".join(map(str, engines)), ",".join(map(str, others)))
PY
)
echo "engines pinned to CPUs $CPUS; the client to $OTHERS" >> "$R/host.txt"
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "cudagraph_metrics": true}'
O='{"t": {"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/small/done AB_WAIT_S=600 \
  bash scripts/gpu-host/ab-start.sh s41 -- --models "$root/models" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'target+t,sd2+t,sd4+t,dsl4+t' --arm-options "$O" \
  --rounds 8 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" ${OTHERS:+--pin-client "$OTHERS"} \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 5
tar czf "$OUT/a.tgz" -C /tmp s41
echo "started: small pair, then s41 (after $R/small/done); pinned $CPUS"
