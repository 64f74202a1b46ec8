#!/usr/bin/env bash
# Session 39's first long command (issue 29, Next 0b), on the series at vllm
# c4dc72a (the bundle's MANIFEST git_head). Session 38's
# next-timer-ab.sh as written (the small pair, then the A/B s39h: sd2, sd4,
# target and dsl4 under ab_hooks.HostTimer, dsl4+keep; c = 1 and 8, engines
# pinned), then, queued behind it on the same GPU (AB_WAIT_FILE = s39h's rc),
# profile_step.py's torch-profiler pass of sd4 and dsl4 at one request (s39p):
# host launches by kind per engine step beside the timer's call times.
# Collect: ab-collect.sh s39h --wait 560 until it ends, then s39p.
set -uo pipefail
bash benchmarks/results/2026-12-05-h200-s38/next-timer-ab.sh
GPU_HOST_ROOT=/tmp/gpuhost AB_SCRIPT=profile_step.py AB_TIMEOUT_S=600 \
  AB_WAIT_FILE=/tmp/ab/s39h/rc AB_WAIT_S=1700 \
  bash scripts/gpu-host/ab-start.sh s39p -- --models /tmp/gpuhost/models \
  --target smollm2-135m --draft smollm2-l4-self --prompts .gpu-bundles/prompts \
  --out prof --arms sd4,dsl4 --concurrency 1 --requests 8 --max-tokens 128
