#!/usr/bin/env bash
# Usage: scripts/check-series.sh [--keep DIR] [--no-prefix-tests]
#
# Series integrity, on a scratch clone of vllm/ (vllm/'s own work tree is not used):
#   1. patches/series applies in order on a clean pinned base (git am --3way)
#   2. every patch carries Signed-off-by:
#   3. no patch adds whitespace errors (git diff --check)
#   4. exporting the applied branch reproduces patches/ byte for byte
#   5. bisectable: at every prefix of the series, vllm and the modules the patch
#      touches import, and the test files the patch adds or changes pass
#   6. every maintained variant (patches-variants/<version>/) was generated from the
#      current patches/ (regenerate: scripts/rebase.sh --onto <version>)
# Prints one PASS/FAIL line per check and exits 1 if any failed.
#
#   --keep DIR          clone into DIR and keep it (fastcheck runs vLLM's tests there)
#   --no-prefix-tests   skip the per-prefix pytest runs (imports are still checked)
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
dir="" prefix_tests=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) dir=${2:-}; shift 2 || die "--keep needs a directory" ;;
    --no-prefix-tests) prefix_tests=0; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
load_lock
require_vllm_repo
[[ -x "$VENV_DIR/bin/python" ]] || die "no build venv at $VENV_DIR: run scripts/build.sh first"
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

junit_dir=$(mktemp -d)
for i in "${!commits[@]}"; do
  c=${commits[$i]}
  name=$(basename "${patches[$i]}")
  git -C "$dir" checkout -q --detach "$c"
  mapfile -t mods < <(git -C "$dir" diff --name-only --diff-filter=AM "$c^" "$c" -- 'vllm/*.py' \
    | sed -e 's/\.py$//' -e 's/\/__init__$//' -e 's/\//./g')
  if (cd "$dir" && PYTHONPATH="$dir" "$VENV_DIR/bin/python" -c '
import importlib, sys
import vllm
for m in sys.argv[1:]:
    importlib.import_module(m)
' "${mods[@]}") >"$junit_dir/import.log" 2>&1; then
    pass "prefix $((i + 1))/$n imports vllm + ${#mods[@]} touched modules ($name)"
  else
    tail -5 "$junit_dir/import.log"
    fail "prefix $((i + 1))/$n does not import ($name)"
    continue
  fi
  [[ $prefix_tests == 1 ]] || continue
  # A documentation-only patch (docs/ and *.md files) needs no tests of its own.
  if [[ -z "$(git -C "$dir" diff --name-only "$c^" "$c" -- . ':(exclude)docs/**' ':(exclude)*.md')" ]]; then
    pass "prefix $((i + 1))/$n changes documentation only ($name)"
    continue
  fi
  mapfile -t tests < <(git -C "$dir" diff --name-only --diff-filter=AM "$c^" "$c" -- 'tests/**test_*.py')
  [[ ${#tests[@]} -gt 0 ]] || { fail "prefix $((i + 1))/$n adds no tests ($name)"; continue; }
  if upstream_pytest "$dir" "$junit_dir/p$i.xml" "${tests[@]}" >"$junit_dir/p$i.log" 2>&1 \
    && summary=$(python3 "$ROOT/scripts/lib/junit_summary.py" "prefix $((i + 1))/$n tests" "$junit_dir/p$i.xml"); then
    pass "$summary ($name)"
  else
    tail -15 "$junit_dir/p$i.log"
    fail "prefix $((i + 1))/$n: its tests fail ($name)"
  fi
done
git -C "$dir" checkout -q --detach "${commits[-1]:-$base}"
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
echo "series check: $passes passed, $fails failed"
[[ $fails == 0 ]]
