#!/usr/bin/env bash
# Usage: scripts/fastcheck.sh [--skip-e2e] [--no-prefix-tests]
#
# The project's test command (README). Needs a synced vllm/ and a build venv
# (scripts/apply_and_build.sh). Three stages, each printing pass/fail counts:
#   (a) series integrity: scripts/check-series.sh (applies on a clean base,
#       Signed-off-by, whitespace, export round trip, every prefix imports and
#       passes its own tests)
#   (b) vLLM's own CPU-runnable tests for the areas the series touches
#       (tests/upstream/cpu-tests.txt + test files the series adds or changes),
#       run from the applied series, offline (vendored hub configs), minus the
#       known CPU failures of the unpatched base (tests/upstream/cpu-deselect.txt)
#   (c) the project's tests (tests/): tooling, fixtures, CPU end-to-end
#   (d) vLLM's own pre-commit hooks from the pin (ruff, ruff-format, typos, mypy,
#       SPDX, config docstrings, test tethering, ...) on the files the series changes
# Exits 1 if any stage failed; a stage that runs no test fails too.
#
#   --skip-e2e          skip the CPU end-to-end tests (pytest marker e2e) in (c)
#   --no-prefix-tests   (a) checks imports per prefix but not each patch's tests
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
series_args=() project_args=()
for arg in "$@"; do
  case "$arg" in
    --skip-e2e) project_args+=(-m "not e2e") ;;
    --no-prefix-tests) series_args+=(--no-prefix-tests) ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
load_lock
require_vllm_repo
[[ -x "$VENV_DIR/bin/python" ]] || die "no build venv at $VENV_DIR: run scripts/apply_and_build.sh first"
work="$ROOT/build/fastcheck"
mkdir -p "$work"
rm -f "$work"/*.xml
declare -A result
start=$SECONDS

log "(a) series integrity"
if "$ROOT/scripts/check-series.sh" --keep "$work/vllm" "${series_args[@]}" | tee "$work/series.log"; then
  result[a]=ok
else
  result[a]=FAILED
fi
series_line=$(grep -E '^series check:' "$work/series.log" | tail -1 || echo "series check: no result")

log "($(( SECONDS - start ))s) (b) vLLM's own CPU tests, from the applied series"
upstream_line="upstream tests: not run (the series does not apply)"
if grep -q "^PASS  series applies" "$work/series.log"; then
  mapfile -t up_tests < <(grep -vE '^\s*(#|$)' "$ROOT/tests/upstream/cpu-tests.txt")
  mapfile -t touched < <(git -C "$work/vllm" diff --name-only --diff-filter=AM "$LOCK_BASE_TAG" HEAD -- 'tests/**test_*.py')
  mapfile -t up_tests < <(printf '%s\n' "${up_tests[@]}" "${touched[@]}" | awk 'NF && !seen[$0]++')
  upstream_pytest "$work/vllm" "$work/upstream.xml" "${up_tests[@]}" || true
  upstream_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "upstream tests" "$work/upstream.xml") \
    && result[b]=ok || result[b]=FAILED
else
  result[b]=FAILED
fi

log "($(( SECONDS - start ))s) (c) project tests"
(cd "$ROOT" && "$VENV_DIR/bin/python" -m pytest -q -p no:cacheprovider -rfE \
  --junitxml="$work/project.xml" "${project_args[@]}" tests) || true
project_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "project tests" "$work/project.xml") \
  && result[c]=ok || result[c]=FAILED

log "($(( SECONDS - start ))s) (d) vLLM's pre-commit hooks on the series' files"
hooks_line="upstream hooks: not run (the series does not apply)"
result[d]=FAILED
if grep -q "^PASS  series applies" "$work/series.log"; then
  "$VENV_DIR/bin/python" "$ROOT/scripts/lib/upstream_hooks.py" "$work/vllm" "$LOCK_BASE_TAG" \
    | tee "$work/hooks.log" && result[d]=ok
  n_pass=$(grep -c '^PASS' "$work/hooks.log" || true)
  n_fail=$(grep -c '^FAIL' "$work/hooks.log" || true)
  hooks_line="upstream hooks: $n_pass passed, $n_fail failed"
fi

echo
echo "fastcheck summary ($(( SECONDS - start ))s):"
echo "  (a) ${result[a]}  $series_line"
echo "  (b) ${result[b]}  $upstream_line"
echo "  (c) ${result[c]}  $project_line"
echo "  (d) ${result[d]}  $hooks_line"
total_pass=0 total_fail=0
for line in "$series_line" "$upstream_line" "$project_line" "$hooks_line"; do
  p=$(sed -nE 's/.*: ([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
  e=$(sed -nE 's/.* ([0-9]+) errors.*/\1/p' <<<"$line")
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0} + ${e:-0}))
done
for s in a b c d; do [[ "${result[$s]}" == ok ]] || total_fail=$((total_fail > 0 ? total_fail : 1)); done
echo "fastcheck: $total_pass passed, $total_fail failed"
[[ "${result[a]}" == ok && "${result[b]}" == ok && "${result[c]}" == ok && "${result[d]}" == ok ]]
