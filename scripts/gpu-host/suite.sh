#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/suite.sh [--help]
#
# On a staged GPU host (scripts/install-offline.sh: bundle staged, `check` passed,
# /tmp/gpuhost/env.sh written), from the checkout's root with .gpu-bundles/prompts
# carried: builds the models the GPU suite needs and runs tests/gpu BESIDE the
# builds; each engine group starts once its models are built (DSL_GPU_WAIT_MODELS).
#
#   models (in the background, one after the other):
#     build_models.py  DRAFT_LAYERS=4: smollm2-135m (target) + smollm2-l4 (~30 s)
#     build_eagle.py   smollm2-eagle, smollm2-eagle3 (300 steps each, ~50 s)
#   No distillation: the suite's draft is the undistilled 4-layer truncation
#   (DSL_GPU_DRAFT=smollm2-l4). No suite test depends on its acceptance (greedy
#   output is the target's for any draft; the exit tests need exits, which a
#   weaker draft only makes more frequent).
#
# Results: $OUT/gpu-suite.tgz (pytest.log, junit.xml, raw/ per-group JSON and
# logs, models/*.log, times.log); exit status: pytest's.
#
# Environment (all optional):
#   GPU_HOST_ROOT     staged root (default /tmp/gpuhost)
#   SUITE_DIR         work folder on the host (default /tmp/gpu-suite)
#   SUITE_TIMEOUT_S   limit on pytest (default 480; the tar runs after it)
#   DSL_GPU_PARALLEL  engine groups at once (default 14: every group)
#   SUITE_DRAFT_LAYERS  truncated drafts build_models.py writes (default 4; e.g.
#                     4,16 when a benchmark distils the 16-layer draft beside the
#                     suite: each smollm2-l<N> gets its .built marker)
#   PYTEST_ARGS       extra pytest arguments, split as a shell splits words
#                     (quotes group them: "-k 'not eagle and not v1'")
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage_from_header "$0"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "suite.sh: unknown argument '$1' (see --help)" >&2; exit 2; }

root=${GPU_HOST_ROOT:-/tmp/gpuhost}
R=${SUITE_DIR:-/tmp/gpu-suite}
OUT=${OUT:?suite.sh: \$OUT is not set (the device command sets it)}
[[ -f "$root/env.sh" ]] || { echo "suite.sh: no $root/env.sh: stage the bundle first (docs/gpu-host.md)" >&2; exit 1; }
[[ -f .gpu-bundles/prompts/sharegpt-test.jsonl ]] || {
  echo "suite.sh: no .gpu-bundles/prompts: carry it (carry=[\".gpu-bundles/prompts\"])" >&2; exit 1; }
# shellcheck disable=SC1091
source "$root/env.sh"
M=$root/models S=scripts/gpu-host
# PYTEST_ARGS as a shell would split it (shlex), so a quoted -k expression
# reaches pytest as one argument.
split_args='import shlex, sys; sys.stdout.write("".join(a + "\0" for a in shlex.split(sys.argv[1])))'
pytest_args=()
mapfile -d '' -t pytest_args < <(python3 -c "$split_args" "${PYTEST_ARGS:-}" 2> /dev/null)
wait $! || {
  echo "suite.sh: PYTEST_ARGS does not split as shell words (an unclosed quote?): ${PYTEST_ARGS:-}" >&2
  exit 2; }
rm -rf "$R" && mkdir -p "$R/raw" "$R/models"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/times.log"; }

# A model counts as built for the suite once its folder has .built (written
# here after its build script exited 0); stale markers of an earlier run go.
rm -f "$M"/*/.built
(
  layers=${SUITE_DRAFT_LAYERS:-4}
  DRAFT_LAYERS=$layers python3 "$S/build_models.py" > "$R/models/build_models.log" 2>&1
  touch "$M/smollm2-135m/.built"
  for n in ${layers//,/ }; do touch "$M/smollm2-l$n/.built"; done
  stamp "build_models done"
  python3 "$S/build_eagle.py" > "$R/models/build_eagle.log" 2>&1
  touch "$M/smollm2-eagle/.built" "$M/smollm2-eagle3/.built"
  stamp "build_eagle done"
) &
builder=$!

stamp "suite started (models building beside it)"
rc=0
DSL_GPU_MODELS=$M DSL_GPU_DRAFT=smollm2-l4 DSL_GPU_WAIT_MODELS=300 \
DSL_GPU_PROMPTS=.gpu-bundles/prompts DSL_GPU_RESULTS=$R/raw \
DSL_GPU_PARALLEL=${DSL_GPU_PARALLEL:-14} \
  timeout "${SUITE_TIMEOUT_S:-480}" python3 -m pytest -q -rfEs -p no:cacheprovider \
  --junitxml="$R/junit.xml" "${pytest_args[@]}" tests/gpu > "$R/pytest.log" 2>&1 || rc=$?
stamp "suite done rc=$rc"
brc=0
wait "$builder" || brc=$?
stamp "model builds rc=$brc"
tar czf "$OUT/gpu-suite.tgz" -C "$R" .
tail -n 40 "$R/pytest.log"
[[ $brc == 0 ]] || echo "suite.sh: a model build failed (models/*.log in the tarball)" >&2
exit $rc
