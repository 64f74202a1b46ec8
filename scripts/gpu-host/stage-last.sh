#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/stage-last.sh LOG_DIR CHUNK_DIR [WIP_TGZ...] | --help
#
# On the GPU host, at the start of a session's first long command (the other
# chunks staged one call each, docs/gpu-host.md): stages the bundle's last
# chunk and checks the staged vllm (scripts/install-offline.sh CHUNK_DIR, then
# check; log in LOG_DIR/stage-<chunk>.log, its tail on failure), writes what
# the host is to LOG_DIR/host.txt (GPU, driver, clocks, power limit, cores,
# the CPU model and which CPUs share a core, the cpufreq governor,
# uptime, torch / CUDA / Triton versions), and prints the root to run on, for
# GPU_HOST_ROOT of ab-start.sh, suite.sh and the caller's `source ROOT/env.sh`:
#   - the staged root ($GPU_HOST_ROOT, default /tmp/gpuhost), or
#   - with WIP_TGZ...: a wip root at ROOT-wip, the tarballs laid over a copy of
#     the staged package (scripts/gpu-host/wip-root.sh), with ROOT/models
#     linked in (the models the session builds are shared by both roots).
# The distillation's kept rows need no staging here: proxies-start.sh and
# small-start.sh unpack benchmarks/gpu-rows/ into the models themselves.
#   root=$(bash scripts/gpu-host/stage-last.sh /tmp/s30 .gpu-bundles/b6 .gpu-bundles/wip/some.tgz) || exit 1
# Exit status: 0, or 1 with what failed on stderr.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -ge 2 ]] || { echo "stage-last.sh: LOG_DIR and CHUNK_DIR are needed (see --help)" >&2; exit 2; }
logs=$1 chunk=$2; shift 2
[[ -d "$chunk" ]] || { echo "stage-last.sh: no chunk folder $chunk: carry it (carry=[\"$chunk\"])" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
here=$(dirname "${BASH_SOURCE[0]}")
mkdir -p "$logs"
log=$logs/stage-$(basename "$chunk").log
if ! { bash "$here/../install-offline.sh" --root "$root" "$chunk" \
       && bash "$here/../install-offline.sh" --root "$root" check; } > "$log" 2>&1; then
  tail -n 5 "$log" >&2
  echo "stage-last.sh: staging $chunk failed (log: $log)" >&2
  exit 1
fi
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv || true
  nproc; uptime || true
  # Which CPUs share a core (abab.py --pin-engines) and how the host sets their speed.
  grep -m1 "model name" /proc/cpuinfo || true
  lscpu -e=CPU,CORE,SOCKET,NODE 2>/dev/null || true
  echo "cpufreq governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo none visible)"
  (source "$root/env.sh" && python3 -c \
    "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)") || true
} > "$logs/host.txt" 2>&1
if [[ $# -eq 0 ]]; then
  echo "$root"
  exit 0
fi
wip=$(GPU_HOST_ROOT=$root bash "$here/wip-root.sh" --root "$root-wip" "$@") || {
  echo "stage-last.sh: the wip root failed (wip-root.sh says why above)" >&2; exit 1; }
mkdir -p "$root/models"
ln -sfn "$root/models" "$wip/models"
echo "$wip"
