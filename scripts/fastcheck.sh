#!/usr/bin/env bash
# Usage: scripts/fastcheck.sh [--quick] [--skip-e2e] [--no-prefix-tests] [--jobs N]
#
# The project's test command (README). Needs a synced vllm/ and a build venv
# (scripts/apply_and_build.sh); builds the real-model fixtures itself when they are
# missing (scripts/fixtures.sh: about a minute once, then seconds). Four stages, each
# printing pass/fail counts:
#   (a) series integrity: scripts/check-series.sh (applies on a clean base,
#       Signed-off-by, whitespace, export round trip, every prefix imports and
#       passes its own tests, prefixes side by side)
#   (b) vLLM's own CPU-runnable tests for the areas the series touches
#       (tests/upstream/cpu-tests.txt + test files the series adds or changes),
#       run from the applied series, offline (vendored hub configs), minus the
#       known CPU failures of the unpatched base (tests/upstream/cpu-deselect.txt)
#   (c) the project's tests (tests/): tooling and fixtures, and the CPU end-to-end
#       tests (pytest marker e2e: the real engine on the fixture models, `vllm serve`),
#       which run in the background beside (a)-(d), from the moment the fixtures are
#       there (log: build/fastcheck/e2e.log). A skipped test fails here
#       (DSL_NO_SKIP=1, tests/conftest.py), except the GPU host's suite tests/gpu/,
#       which needs CUDA
#   (d) vLLM's own pre-commit hooks from the pin (ruff, ruff-format, typos, mypy,
#       SPDX, config docstrings, test tethering, ...) on the files the series changes
# The closing line counts the e2e tests separately. Exits 1 if any stage failed; a
# stage that runs no test fails too.
#
#   --quick             the inner loop (about a minute here) instead: the project's
#                       tests without e2e, and in vllm/ as it is (uncommitted edits
#                       included) the test files of the patches being changed: the
#                       commits of vllm/'s branch that differ from patches/ (else the
#                       last patch) plus test files edited in vllm/'s work tree.
#                       Run the full command before pushing.
#   --skip-e2e          skip the CPU end-to-end tests (pytest marker e2e) in (c)
#   --no-prefix-tests   (a) checks imports per prefix but not each patch's tests
#   --jobs N            (a) checks N prefixes side by side (default: the number of CPUs)
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
series_args=() e2e=1 quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --skip-e2e) e2e=0; shift ;;
    --no-prefix-tests) series_args+=(--no-prefix-tests); shift ;;
    --jobs) series_args+=(--jobs "${2:-}"); shift 2 || die "--jobs needs a number" ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
load_lock
require_vllm_repo
[[ -x "$VENV_DIR/bin/python" ]] || die "no build venv at $VENV_DIR: run scripts/apply_and_build.sh first"
require_cpu_venv "scripts/fastcheck.sh"
work="$ROOT/build/fastcheck"
mkdir -p "$work"
rm -f "$work"/*.xml
declare -A result
start=$SECONDS

# project_pytest JUNIT ARGS...: the project's tests (tests/), from the project root.
project_pytest() {
  local junit=$1; shift
  (cd "$ROOT" && "$VENV_DIR/bin/python" -m pytest -q -p no:cacheprovider -rfEs \
    --junitxml="$junit" "$@" tests)
}

if [[ $quick == 1 ]]; then
  # The test files of the patches being changed, in vllm/ as it is.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  export_series "$VLLM_DIR" "$LOCK_BASE_TAG" HEAD "$tmp/export"
  mapfile -t commits < <(git_vllm rev-list --reverse "$LOCK_BASE_TAG..HEAD")
  mapfile -t exported < <(cat "$tmp/export/series")
  changed=()
  for i in "${!commits[@]}"; do
    cmp -s "$tmp/export/${exported[$i]}" "$PATCH_DIR/${exported[$i]}" || changed+=("${commits[$i]}")
  done
  what="patches changed since the export: ${#changed[@]}"
  patch_tests() { git_vllm diff --name-only --diff-filter=AM "$1^" "$1" -- 'tests/**test_*.py'; }
  docs_only() { ! git_vllm diff --name-only "$1^" "$1" | grep -qvE '^docs/|\.md$'; }
  only_docs=1
  for c in "${changed[@]}"; do docs_only "$c" || only_docs=0; done
  if [[ ${#commits[@]} -gt 0 && $only_docs == 1 ]]; then
    # Nothing changed, or only documentation patches (which have no tests: the
    # user docs are the series' last patch): the last patch that has tests.
    for ((i = ${#commits[@]} - 1; i >= 0; i--)); do
      [[ -z "$(patch_tests "${commits[$i]}")" ]] || break
    done
    ((i >= 0)) || i=$((${#commits[@]} - 1))
    [[ ${#changed[@]} -eq 0 ]] && what="no patch differs from patches/"
    what+="; the last patch with tests"
    changed+=("${commits[$i]}")
  fi
  tests=()
  for c in "${changed[@]}"; do
    mapfile -t -O "${#tests[@]}" tests < <(patch_tests "$c")
    what+=$'\n'"  $(git_vllm log -1 --format='%h %s' "$c")"
  done
  mapfile -t -O "${#tests[@]}" tests < <(git_vllm status --porcelain --untracked-files=all -- tests \
    | sed -E 's/^...//' | grep -E '(^|/)test_[^/]*\.py$' || true)
  mapfile -t tests < <(printf '%s\n' "${tests[@]}" | awk 'NF && !seen[$0]++' | while read -r t; do [[ -f "$VLLM_DIR/$t" ]] && echo "$t"; done)
  log "quick: the project's tests (no e2e) and the tests of the patches being changed ($what)"
  [[ ${#tests[@]} -gt 0 ]] || die "no test files found in the patches being changed: a patch needs its own tests (CONTRIBUTING.md)"
  printf '  %s\n' "${tests[@]}"
  # Side by side: the two python processes are mostly imports, one core each.
  project_pytest "$work/project.xml" -m "not e2e" >"$work/project.log" 2>&1 &
  pid=$!
  upstream_pytest "$VLLM_DIR" "$work/patch.xml" "${tests[@]}" >"$work/patch.log" 2>&1 || true
  wait "$pid" || true
  rc=0
  patch_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "patch tests" "$work/patch.xml") || { rc=1; tail -n 30 "$work/patch.log"; }
  project_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "project tests" "$work/project.xml") || { rc=1; tail -n 30 "$work/project.log"; }
  echo
  echo "fastcheck --quick ($(( SECONDS - start ))s): not the full check (run scripts/fastcheck.sh before pushing)"
  echo "  $patch_line"
  echo "  $project_line"
  exit $rc
fi

log "fixtures (the e2e tests need them)"
"$ROOT/scripts/fixtures.sh" >"$work/fixtures.log" 2>&1 || {
  tail -n 20 "$work/fixtures.log"
  die "scripts/fixtures.sh failed (log: $work/fixtures.log): the e2e tests cannot run without the fixtures"
}
tail -n 1 "$work/fixtures.log"
export FIXTURES_DIR=${FIXTURES_DIR:-$DSL_CACHE/fixtures}

# The CPU end-to-end tests need only the fixtures and vllm/ (not the scratch clone of
# (a)), so they run in the background from here on, beside (a), (b), (c) and (d). Alone
# they keep about 1.5 of the 2 cores busy for 5.5 minutes (one engine at a time, much of
# it single-threaded python); beside the other stages both cores stay busy throughout.
# Their engines wait passively at OpenMP barriers: by default a thread spins there, and
# with the other stages on the same cores a draft_l4 case took 315 s instead of 99 s
# (OMP_WAIT_POLICY=passive; binding the engine to one core instead: 328 s).
e2e_pid=""
trap '[[ -z "$e2e_pid" ]] || kill_tree "$e2e_pid"' EXIT
if [[ $e2e == 1 ]]; then
  log "($(( SECONDS - start ))s) (c) CPU end-to-end tests: started in the background, beside (a)-(d) (log: $work/e2e.log)"
  (
    e2e_start=$SECONDS
    rc=0
    DSL_NO_SKIP=1 OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} project_pytest "$work/e2e.xml" -m e2e || rc=$?
    echo "== e2e: done in $(( SECONDS - e2e_start ))s"
    exit $rc
  ) >"$work/e2e.log" 2>&1 &
  e2e_pid=$!
fi

log "($(( SECONDS - start ))s) (a) series integrity"
# The last prefix is the applied series that (b) tests: its own tests run there.
if "$ROOT/scripts/check-series.sh" --keep "$work/vllm" --last-prefix-tests-elsewhere "${series_args[@]}" \
  | tee "$work/series.log"; then
  result[a]=ok
else
  result[a]=FAILED
fi
series_line=$(grep -E '^series check:' "$work/series.log" | tail -1 || echo "series check: no result")

# (b) runs as two pytest processes side by side (its test files split in two halves of
# about equal size), then (c)'s tests without e2e beside (d); the e2e tests run beside
# all of them.
applied=0
grep -q "^PASS  series applies" "$work/series.log" && applied=1
export DSL_NO_SKIP=1
upstream_line="upstream tests: not run (the series does not apply)"
result[b]=FAILED
if [[ $applied == 1 ]]; then
  log "($(( SECONDS - start ))s) (b) vLLM's own CPU tests, from the applied series (2 processes)"
  mapfile -t up_tests < <(grep -vE '^\s*(#|$)' "$ROOT/tests/upstream/cpu-tests.txt")
  mapfile -t touched < <(git -C "$work/vllm" diff --name-only --diff-filter=AM "$LOCK_BASE_TAG" HEAD -- 'tests/**test_*.py')
  # The test files (directories expanded), minus the --ignore'd ones, in two halves.
  python3 - "$work/vllm" "$work" "$ROOT/tests/upstream/cpu-deselect.txt" "${up_tests[@]}" "${touched[@]}" <<'PYEOF'
import sys
from pathlib import Path
tree, work, deselect, entries = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
ignored = {l.split("=", 1)[1].strip() for l in open(deselect) if l.startswith("--ignore=")}
files = []
for e in entries:
    p = tree / e
    found = sorted(p.rglob("test_*.py")) if p.is_dir() else [p]
    for f in found:
        rel = str(f.relative_to(tree))
        if rel not in ignored and rel not in files:
            files.append(rel)
halves = [[], []]
sizes = [0, 0]
for rel in sorted(files, key=lambda r: -(tree / r).stat().st_size):
    i = sizes.index(min(sizes))
    halves[i].append(rel)
    sizes[i] += (tree / rel).stat().st_size
for i, h in enumerate(halves):
    (work / f"upstream-{i}.txt").write_text("".join(f"{r}\n" for r in sorted(h)))
PYEOF
  mapfile -t half0 <"$work/upstream-0.txt"
  mapfile -t half1 <"$work/upstream-1.txt"
  upstream_pytest "$work/vllm" "$work/upstream-1.xml" "${half1[@]}" >"$work/upstream-1.log" 2>&1 &
  other=$!
  upstream_pytest "$work/vllm" "$work/upstream-0.xml" "${half0[@]}" || true
  wait "$other" || true
  echo "== the other half of (b):"
  tail -n 25 "$work/upstream-1.log"
  upstream_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "upstream tests" "$work/upstream-0.xml" "$work/upstream-1.xml") \
    && result[b]=ok
fi

log "($(( SECONDS - start ))s) (c) project tests without e2e; beside it (d) vLLM's pre-commit hooks on the series' files"
if [[ $applied == 1 ]]; then
  "$VENV_DIR/bin/python" "$ROOT/scripts/lib/upstream_hooks.py" "$work/vllm" "$LOCK_BASE_TAG" >"$work/hooks.log" 2>&1 &
  hooks=$!
fi
project_pytest "$work/project.xml" -m "not e2e" || true
project_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "project tests" "$work/project.xml") \
  && result[c]=ok || result[c]=FAILED
hooks_line="upstream hooks: not run (the series does not apply)"
result[d]=FAILED
if [[ $applied == 1 ]]; then
  wait "$hooks" && result[d]=ok
  echo "== (d) vLLM's pre-commit hooks:"
  cat "$work/hooks.log"
  hooks_line="upstream hooks: $(grep -c '^PASS' "$work/hooks.log" || true) passed, $(grep -c '^FAIL' "$work/hooks.log" || true) failed"
fi

e2e_line="e2e tests: not run (--skip-e2e)" e2e_result="--"
if [[ $e2e == 1 ]]; then
  e2e_result=ok
  log "($(( SECONDS - start ))s) (c) project tests: CPU end-to-end (waiting for the background run)"
  wait "$e2e_pid" || true
  e2e_pid=""
  # Its failures (the first 200 lines), then its table of cases and summary; the whole
  # log stays in $work/e2e.log.
  sed -n '/^=* FAILURES =*$/,/^=* \(warnings summary\|short test summary info\) =*$/p' "$work/e2e.log" | head -n 200
  if grep -q ' e2e spec-decode cases ' "$work/e2e.log"; then
    sed -n '/ e2e spec-decode cases /,$p' "$work/e2e.log"
  else
    tail -n 40 "$work/e2e.log"
  fi
  e2e_line=$(python3 "$ROOT/scripts/lib/junit_summary.py" "e2e tests" "$work/e2e.xml") \
    || { result[c]=FAILED; e2e_result=FAILED; }
fi

echo
echo "fastcheck summary ($(( SECONDS - start ))s):"
echo "  (a) ${result[a]}  $series_line"
echo "  (b) ${result[b]}  $upstream_line"
echo "  (c) ${result[c]}  $project_line"
# The e2e line has its own mark: a failed non-e2e project test marks (c), not it.
echo "      $e2e_result  $e2e_line"
echo "  (d) ${result[d]}  $hooks_line"
# count FIELD LINE: the number before FIELD ("passed", "failed", ...) in a summary line.
count() { local n; n=$(sed -nE "s/.*[^0-9]([0-9]+) $1.*/\1/p" <<<"$2" | head -n 1); echo "${n:-0}"; }
total_pass=0 total_fail=0
for line in "$series_line" "$upstream_line" "$project_line" "$e2e_line" "$hooks_line"; do
  total_pass=$((total_pass + $(count passed "$line")))
  total_fail=$((total_fail + $(count failed "$line") + $(count errors "$line")))
done
for s in a b c d; do [[ "${result[$s]}" == ok ]] || total_fail=$((total_fail > 0 ? total_fail : 1)); done
if [[ $e2e == 1 ]]; then
  e2e_part="e2e: $(count passed "$e2e_line") passed, $(( $(count failed "$e2e_line") + $(count errors "$e2e_line") )) failed, $(count skipped "$e2e_line") skipped"
else
  e2e_part="e2e: not run (--skip-e2e)"
fi
echo "fastcheck: $total_pass passed, $total_fail failed; $e2e_part; skipped: $(count skipped "$upstream_line") of vLLM's own tests (by themselves on CPU), $(count skipped "$project_line") GPU-only (tests/gpu)"
[[ "${result[a]}" == ok && "${result[b]}" == ok && "${result[c]}" == ok && "${result[d]}" == ok ]]
