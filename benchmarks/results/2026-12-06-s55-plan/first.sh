#!/usr/bin/env bash
# Written in session 55 (issue 29) for the next device session's first call,
# on a bare host (nothing staged): carry .gpu-bundles/b1 (with b1 the tree
# leaves ~0.6 MB of the call's 64 MiB, so the binary built here,
# .gpu-bundles/wnc, travels only where the host's nvcc failed: then run this
# again carrying .gpu-bundles/wnc instead of b1, and stage b1 after). Runs benchmarks/while_node_cost.cu's part 2
# (which node kind of a torch-captured decode step makes the WHILE body's
# start cost ~42 us: one process a kind, so a kind the driver refuses fails
# alone), then part 1 again as this run's reference (~30 s in all), into
# /tmp/s56/while_node_cost.txt and $OUT; then stages b1.
set -euo pipefail
mkdir -p /tmp/s56
bin=/tmp/while_node_cost
if ! nvcc -O2 -arch=sm_90 -o "$bin" benchmarks/while_node_cost.cu 2> /tmp/s56/nvcc.log; then
  if [[ -x .gpu-bundles/wnc/while_node_cost ]]; then
    cp .gpu-bundles/wnc/while_node_cost "$bin"
  else
    tail -n 3 /tmp/s56/nvcc.log
    echo "first.sh: the host's nvcc failed; call again carrying .gpu-bundles/wnc" >&2
    bin=
  fi
fi
[[ -n "$bin" ]] || { bash scripts/install-offline.sh .gpu-bundles/b1 2>&1 | tail -n 2; exit 0; }
{ for kind in memcpy memset funcs params cluster pdl fork chain; do
    timeout 90 "$bin" 200 "$kind" 2>&1 || echo "# $kind: rc=$?"
  done; } > /tmp/s56/while_node_cost.txt
cp /tmp/s56/while_node_cost.txt "${OUT:-/tmp}/"
grep -v '^# \(NVIDIA\|H\)' /tmp/s56/while_node_cost.txt | grep -v 'body     N' || true
bash scripts/install-offline.sh .gpu-bundles/b1 2>&1 | tail -n 2
