#!/usr/bin/env bash
# Written in session 40 for the next session's first long command (issue 29,
# Next 0b), in the pattern of session 39's next-graph-launches.sh:
#   1. the GPU checks of patches-wip/dsl-drafted-counts-snapshot (the drafted
#      counts handed to the output as a one-copy snapshot read on the host,
#      instead of DraftedTokenCounts.gather's Triton launch, 52-75 µs a step
#      in session 40): the GPU suite on the wip, its changed CUDA tests among
#      the in-tree ones;
#   2. where the DSL step's host time beyond DSL's named calls goes. Session 40
#      (README here, item 4) measured the named calls to a few µs (151 and
#      167 µs a step), but the DSL step's median was 376 µs (c = 1) and 750 µs
#      (c = 8) longer than SD K=4's, the large calls' differences in ranges
#      over the rounds that span zero.
#      ab_hooks.HostTimer now also times the garbage collector per step
#      (gc0-gc2) and the snapshot by name.
#
# Before, here:
#   git -C vllm branch -f wip-gather-snapshot dsl && git -C vllm checkout -q wip-gather-snapshot \
#     && git -C vllm am -q -3 --keep-non-patch "$PWD"/patches-wip/dsl-drafted-counts-snapshot/0*.patch
#   scripts/gpu-host/pack-intree.sh            # the wip's CUDA tests with the series'
#   mkdir -p .gpu-bundles/wip && rm -f .gpu-bundles/wip/*.tgz && git -C vllm archive wip-gather-snapshot \
#     $(git -C vllm diff --name-only --diff-filter=AM dsl wip-gather-snapshot -- vllm) \
#     | gzip > .gpu-bundles/wip/dsl-drafted-counts-snapshot.tgz
#   git -C vllm checkout -q dsl
#   (b9's MANIFEST git_head must be vllm dsl's head, e81ffaf when written; else
#    scripts/pack-offline.sh --all --cap 24MB)
#   bash scripts/gpu-host/call-size.sh .gpu-bundles/b9 .gpu-bundles/prompts .gpu-bundles/intree .gpu-bundles/wip
# Device: b1-b8 and the rows one call each (docs/gpu-host.md), then this with
# carry .gpu-bundles/b9, .gpu-bundles/prompts, .gpu-bundles/intree and
# .gpu-bundles/wip (returns in ~60 s), then
#   bash benchmarks/results/2026-12-05-h200-s40/next-collect.sh
# each call issued the moment the one before answers, until it says s41 ended
# (the host goes back after 30 s idle).
#
# What runs, all on the wip's root (the bundle's series with the wip's files
# laid over it, stage-last.sh): the GPU suite with the small pair's 600-step
# draft distilled beside it; then, alone on the GPU, the A/B s41 on the small
# pair, c = 1 and 8, 1 warm + 7 ABBA rounds, arms fixed in advance, all under
# ab_hooks.HostTimer: target+t, sd2+t, sd4+t (the issue's bar is best-K SD
# and, where it wins, target-only; the draft accepts ~0.6 tokens a draft of
# 4), dsl4+t (the default config, cap 4). Engines pinned to two CPUs of two
# different cores, the client (abab.py --pin-client) kept off those cores: in
# session 40 the same arm's step ranged 2.8-4.2 ms between rounds, every call
# scaling with it. (Session 40's second host showed 16 CPUs, each its own core,
# no cpufreq: whatever shares a core with the engines is the hypervisor's; the
# client at least is kept off their CPUs.)
# Device time ~25 min: staging ~4, suite ~7, start-ups ~5, rounds ~8.
#   read: python3 benchmarks/host_timer_table.py abab.json.gz (gc0-gc2 and
#         snapshot beside the calls; session 40's gather: 52-75 µs) and
#         --pair sd4+t dsl4+t; python3 benchmarks/results/2026-12-05-h200-s38/steps.py
#         abab.json.gz; python3 benchmarks/verdict.py --label t --dsl-arm dsl4
#         --out verdict.json small=abab.json.gz.
set -uo pipefail
R=/tmp/s41; mkdir -p "$R/suite-out"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9 \
  .gpu-bundles/wip/dsl-drafted-counts-snapshot.tgz) || exit 1
echo "$root" > "$R/root.txt"
source "$root/env.sh"
M=$root/models; ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
export R M root
setsid bash -c 'OUT=$R/suite-out GPU_HOST_ROOT=$root DSL_GPU_PARALLEL=15 SUITE_DRAFT_LAYERS=4 \
    SUITE_TIMEOUT_S=420 PYTEST_ARGS="$(bash scripts/gpu-host/after-suite.sh --ignores)" \
    bash scripts/gpu-host/suite.sh > "$R/suite.out" 2>&1; echo $? > "$R/suite.rc"
  pkill -f "tests/gpu/engine_worke[r]"; sleep 2; pkill -9 -f "tests/gpu/engine_worke[r]"
  bash scripts/gpu-host/after-suite.sh "$R" 150; touch "$R/after.done"' \
  < /dev/null > /dev/null 2>&1 &
setsid bash -c 'end=$(( $(date +%s) + 300 ))
  while [[ ! -f "$M/smollm2-l4/.built" ]] && (( $(date +%s) < end )); do sleep 1; done
  DATA=self NL=4 python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1
  echo $? > "$R/small.rc"
  cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json" 2>/dev/null
  ' < /dev/null > /dev/null 2>&1 &
setsid bash scripts/gpu-host/go-when-quiet.sh "$R/go2" --after "$R/after.done" --after "$R/small.rc" \
  < /dev/null > /dev/null 2>&1 &
# Two CPUs of two different cores for the engines (the highest CPU of each of
# the two highest cores), and every CPU of the other cores for the client.
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
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1200 AB_WAIT_FILE=$R/go2 AB_WAIT_S=1500 \
  bash scripts/gpu-host/ab-start.sh s41 -- --models "$M" \
  --target smollm2-135m --draft smollm2-l4-self --concurrency 1,8 \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --repeats-at 1:2,8:6 --engine "$E" --out abab.json \
  --arms 'target+t,sd2+t,sd4+t,dsl4+t' --arm-options "$O" \
  --rounds 7 --warm-rounds 1 --dsl-starts-alone --pin-engines "$CPUS" ${OTHERS:+--pin-client "$OTHERS"} \
  > "$R/ab-start.log" 2>&1 || cat "$R/ab-start.log"
sleep 15
tar czf "$OUT/a.tgz" --exclude=s41/suite-out -C /tmp s41
echo "started: suite + small draft, then s41 (after $R/go2); engines on $CPUS, client on $OTHERS"
