#!/usr/bin/env bash
# Usage: scripts/check-series.sh [--keep DIR] [--no-prefix-tests] [--jobs N]
#                                [--last-prefix-tests-elsewhere] [--no-cache]
#
# Series integrity, on a scratch clone of vllm/ (vllm/'s own work tree is not used):
#   1. patches/series applies in order on a clean pinned base (git am --3way)
#   2. every patch carries Signed-off-by:
#   3. no patch adds whitespace errors (git diff --check)
#   4. exporting the applied branch reproduces patches/ byte for byte
#   5. bisectable: at every prefix of the series, vllm and the modules the patch
#      touches import, and the test files the patch adds or changes pass (each prefix
#      runs only its own patch's tests, in the same process as its import check;
#      prefixes run side by side in separate work trees, --jobs at a time)
#   6. every maintained variant (patches-variants/<version>/) was generated from the
#      current patches/ (regenerate: scripts/rebase.sh --onto <version>)
#   7. the lines the series adds name no path or name of this project (result
#      folders, scripts, its name: scripts/lib/series_refs.py)
#   8. patches/stack.toml, when present, groups patches/series into PRs: every patch
#      in exactly one PR, in series order (scripts/lib/stack.py)
# A prefix that passed step 5 before with the same inputs is not run again: the result
# is kept under $DSL_CACHE/prefix-results, keyed on the prefix's git tree, the build
# venv and the harness (this script, scripts/lib/, tests/upstream/). Appending a patch
# then re-checks only the new prefix; changing one re-checks it and every later prefix.
# Prints one PASS/FAIL line per check and exits 1 if any failed.
#
#   --keep DIR          clone into DIR and keep it (fastcheck runs vLLM's tests there)
#   --no-prefix-tests   skip the per-prefix pytest runs (imports are still checked)
#   --jobs N            prefixes checked side by side (default: the number of CPUs)
#   --last-prefix-tests-elsewhere
#                       do not run the last prefix's own tests (its imports are still
#                       checked): fastcheck's stage (b) runs them on the same tree
#   --no-cache          re-run every prefix, even one that passed with the same inputs
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
dir="" prefix_tests=1 jobs=$(nproc) last_in_b=0 use_cache=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) dir=${2:-}; shift 2 || die "--keep needs a directory" ;;
    --no-prefix-tests) prefix_tests=0; shift ;;
    --jobs) jobs=${2:-}; shift 2 || die "--jobs needs a number" ;;
    --last-prefix-tests-elsewhere) last_in_b=1; shift ;;
    --no-cache) use_cache=0; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number, not '$jobs'"
load_lock
require_vllm_repo
[[ -x "$VENV_DIR/bin/python" ]] || die "no build venv at $VENV_DIR: run scripts/build.sh first"
require_cpu_venv "scripts/check-series.sh"
if [[ -z "$dir" ]]; then
  dir=$(mktemp -d)/vllm
  trap 'rm -rf "$(dirname "$dir")"' EXIT
fi
fails=0 passes=0
pass() { echo "PASS  $*"; passes=$((passes + 1)); }
fail() { echo "FAIL  $*"; fails=$((fails + 1)); }

mapfile -t patches < <(series_patches)
n=${#patches[@]}
if clone_series "$dir"; then
  pass "series applies: $n patches on $LOCK_BASE_TAG"
else
  fail "series applies"
  echo "series check: $passes passed, $fails failed"
  exit 1
fi
base=$LOCK_BASE_TAG
mapfile -t commits < <(git -C "$dir" rev-list --reverse "$base..HEAD")

unsigned=$(git -C "$dir" log --format='%h %s' --invert-grep --grep='^Signed-off-by: ' "$base..HEAD")
if [[ -z "$unsigned" ]]; then pass "Signed-off-by on every patch"; else fail "missing Signed-off-by: $unsigned"; fi

ws_bad=""
for c in "${commits[@]}"; do
  git -C "$dir" diff --check "$c^" "$c" >/dev/null 2>&1 || ws_bad+=" $(git -C "$dir" log -1 --format=%h "$c")"
done
if [[ -z "$ws_bad" ]]; then pass "no whitespace errors"; else fail "whitespace errors in:$ws_bad"; fi

if patches_match "$dir" "$base" HEAD 20 2>&1; then
  pass "export round trip is a no-op"
else
  fail "export round trip changes patches/ (re-run scripts/export.sh)"
fi

# prefix_check I LANE OUT: check prefix I (1-based: I+1) in the work tree LANE; write its
# PASS/FAIL lines to OUT.res and its logs to OUT.log. One python process per prefix: the
# import check (tests/upstream/prefix_imports.py) runs in the pytest run of its tests.
prefix_check() {
  local i=$1 lane=$2 out=$3 c name rc=0 label
  local -a mods tests
  c=${commits[$i]} name=$(basename "${patches[$i]}") label="prefix $((i + 1))/$n"
  git -C "$lane" checkout -q --detach "$c"
  mapfile -t mods < <(git -C "$lane" diff --name-only --diff-filter=AM "$c^" "$c" -- 'vllm/*.py' \
    | sed -e 's/\.py$//' -e 's/\/__init__$//' -e 's/\//./g')
  mapfile -t tests < <(git -C "$lane" diff --name-only --diff-filter=AM "$c^" "$c" -- 'tests/**test_*.py')
  local docs_only=0
  [[ -n "$(git -C "$lane" diff --name-only "$c^" "$c" -- . ':(exclude)docs/**' ':(exclude)*.md')" ]] || docs_only=1
  local deferred=0
  [[ $last_in_b == 0 || $i != $((n - 1)) ]] || deferred=1
  if [[ $prefix_tests == 0 || $docs_only == 1 || ${#tests[@]} -eq 0 || $deferred == 1 ]]; then
    # Imports only (no tests to run with them).
    if (cd "$lane" && PYTHONPATH="$lane" tree_python \
      "$ROOT/tests/upstream/prefix_imports.py" "${mods[@]}") >"$out.log" 2>&1; then
      echo "PASS  $label imports vllm + ${#mods[@]} touched modules ($name)"
    else
      tail -5 "$out.log"
      echo "FAIL  $label does not import ($name)"
      return 0
    fi
    [[ $prefix_tests == 1 ]] || return 0
    if [[ $deferred == 1 ]]; then
      echo "  $label tests: left to fastcheck stage (b), which runs them on this same tree ($name)"
      return 0
    fi
    # A documentation-only patch (docs/ and *.md files) needs no tests of its own.
    if [[ $docs_only == 1 ]]; then
      echo "PASS  $label changes documentation only ($name)"
    else
      echo "FAIL  $label adds no tests ($name)"
    fi
    return 0
  fi
  DSL_PREFIX_IMPORTS="${mods[*]}" OMP_NUM_THREADS=1 \
    upstream_pytest "$lane" "$out.xml" "${tests[@]}" >"$out.log" 2>&1 || rc=$?
  if [[ $rc == 9 ]]; then
    tail -5 "$out.log"
    echo "FAIL  $label does not import ($name)"
    return 0
  fi
  echo "PASS  $label imports vllm + ${#mods[@]} touched modules ($name)"
  if [[ $rc == 0 ]] && summary=$(python3 "$ROOT/scripts/lib/junit_summary.py" "$label tests" "$out.xml"); then
    echo "PASS  $summary ($name)"
  else
    tail -15 "$out.log"
    echo "FAIL  $label: its tests fail ($name)"
  fi
}

# Passing prefix results, by inputs: the prefix's tree, the venv, the harness and the
# options that change what a prefix runs.
cache_dir=$DSL_CACHE/prefix-results
harness_key=$( { echo "$VENV_DIR $prefix_tests"
  cat "$0" "$ROOT"/scripts/lib/*.sh "$ROOT"/scripts/lib/junit_summary.py
  find "$ROOT/tests/upstream" -type f | sort | xargs cat; } | sha256sum | cut -c1-16)
# cached_check I LANE OUT: prefix_check, or the stored result of a run with the same
# inputs that passed; stores a result that passed. The last prefix under
# --last-prefix-tests-elsewhere runs no tests here: it is neither read nor stored.
cached_check() {
  local i=$1 label="prefix $(($1 + 1))/$n" key=""
  if [[ $use_cache == 1 && ( $last_in_b == 0 || $i != $((n - 1)) ) ]]; then
    key="$cache_dir/$harness_key-$(git -C "$dir" rev-parse "${commits[$i]}^{tree}").res"
  fi
  if [[ -n "$key" && -s "$key" ]]; then
    sed -e "s|@PREFIX@|$label|" -e 's/$/ [cached: this tree passed before]/' "$key"
    return 0
  fi
  prefix_check "$@" >"$3.res.tmp"
  cat "$3.res.tmp"
  if [[ -n "$key" ]] && ! grep -q '^FAIL' "$3.res.tmp"; then
    mkdir -p "$cache_dir"
    sed "s|$label|@PREFIX@|" "$3.res.tmp" >"$key.tmp$$" && mv "$key.tmp$$" "$key"
  fi
}

# The prefixes run in $jobs lanes side by side (each lane a work tree of its own, with
# the kernels linked in), each lane taking the next unchecked prefix; the results are
# printed in series order once all are done (progress goes to stderr).
junit_dir=$(mktemp -d)
echo 0 >"$junit_dir/next"
# take: print the index of the next prefix to check, nothing when none is left.
take() {
  local i
  {
    flock 9
    i=$(<"$junit_dir/next")
    echo $((i + 1)) >"$junit_dir/next"
  } 9>"$junit_dir/next.lock"
  if ((i < n)); then echo "$i"; fi
}
lanes=()
t0=$SECONDS
for ((l = 0; l < jobs && l < n; l++)); do
  lane="$junit_dir/lane$l"
  git -C "$dir" worktree add -q --detach "$lane" "${commits[$l]}"
  link_kernels "$VLLM_DIR" "$lane"
  (
    while i=$(take) && [[ -n "$i" ]]; do
      cached_check "$i" "$lane" "$junit_dir/p$i" >"$junit_dir/p$i.res"
      printf '  prefix %d/%d checked (%ds): %s\n' $((i + 1)) "$n" $((SECONDS - t0)) \
        "$(grep -c '^FAIL' "$junit_dir/p$i.res" | sed 's/^0$/ok/; s/^[1-9].*/FAILED/')" >&2
    done
  ) &
  lanes+=($!)
done
for pid in "${lanes[@]}"; do wait "$pid" || true; done
for i in "${!commits[@]}"; do
  if [[ ! -s "$junit_dir/p$i.res" ]]; then
    fail "prefix $((i + 1))/$n was not checked (its lane stopped: $(tail -n 1 "$junit_dir/p$i.log" 2>/dev/null || echo 'no log'))"
    continue
  fi
  while IFS= read -r line; do
    case "$line" in
      "PASS  "*) pass "${line#PASS  }" ;;
      "FAIL  "*) fail "${line#FAIL  }" ;;
      *) echo "$line" ;;
    esac
  done <"$junit_dir/p$i.res"
done
git -C "$dir" checkout -q --detach "${commits[-1]:-$base}"
for ((l = 0; l < ${#lanes[@]}; l++)); do git -C "$dir" worktree remove --force "$junit_dir/lane$l"; done
rm -rf "$junit_dir"
for variant in "$VARIANTS_ROOT"/*/; do
  [[ -d "$variant" ]] || continue
  if out=$(variant_check "${variant%/}"); then
    pass "variant $(basename "$variant") is current with patches/"
  else
    echo "$out"
    fail "variant $(basename "$variant") is stale"
  fi
done
if out=$(python3 "$ROOT/scripts/lib/series_refs.py" "$PATCH_DIR"); then
  pass "the series adds no path or name of this project to vLLM"
else
  echo "$out"
  fail "the series adds paths or names of this project to vLLM (reword them in vllm/, then export)"
fi
if [[ -f "$PATCH_DIR/stack.toml" ]]; then
  if out=$(python3 "$ROOT/scripts/lib/stack.py" check "$PATCH_DIR"); then
    pass "PR stack (patches/stack.toml) groups the series in order"
  else
    echo "$out"
    fail "PR stack (patches/stack.toml) does not match patches/series"
  fi
fi
echo "series check: $passes passed, $fails failed"
[[ $fails == 0 ]]
