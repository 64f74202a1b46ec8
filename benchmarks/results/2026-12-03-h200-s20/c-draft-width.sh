#!/usr/bin/env bash
# Session 20 (2026-12-03), command C, issued at once after B on the same warm host:
# the draft width per batch size (patches-wip/dsl-draft-width, both patches: vllm
# branch wip-draft-width, tree 2f379755; its ten changed files of the vllm package,
# carried as .gpu-bundles/wip/draft-width.tgz, laid over a copy of the staged series
# package, as session 18's q-draft-width.sh). Every arm runs the wip's code (SD does
# not reach its paths). DSL at cap 4 (base) against SD K=3, c = 1, 64, 32, 3 ABBA
# rounds, only these two engines alive. Arms fixed in advance. Back: draft-width.tgz.
set -uo pipefail
T0=$(date +%s)
rm -rf /tmp/vsrc-w /tmp/gpuhost-w && cp -a /tmp/gpuhost/vsrc /tmp/vsrc-w \
  && tar xzf .gpu-bundles/wip/draft-width.tgz -C /tmp/vsrc-w || exit 1
mkdir -p /tmp/gpuhost-w
printf 'source /tmp/gpuhost/env.sh\nexport PYTHONPATH=/tmp/vsrc-w:/tmp/gpuhost/site\n' > /tmp/gpuhost-w/env.sh
GPU_HOST_ROOT=/tmp/gpuhost-w bash -c 'source /tmp/gpuhost-w/env.sh; python3 -c "import vllm.v1.spec_decode.dynamic.verify_width as v; print(v.__file__)"'
GPU_HOST_ROOT=/tmp/gpuhost-w AB_END=$(( T0 + 585 )) bash benchmarks/results/2026-12-03-h200-s20/ab.sh draft-width \
  --arms dsl4,sd3 --concurrency 1,64,32 --rounds 3 --dsl-starts-alone
rc=$?; echo "[$(( $(date +%s) - T0 ))s] rc=$rc"
