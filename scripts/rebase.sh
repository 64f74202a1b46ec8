#!/usr/bin/env bash
# Usage: scripts/rebase.sh --onto <version|git-ref> [--record SRC] [--test] [--keep DIR [--stop]]
#                          [--report FILE] [--export DIR] [--allow-conflicts] [--allow-unpinned]
#
# Re-apply patches/series onto a newer upstream in a scratch clone of vllm/ (vllm/'s
# work tree and checked-out branch are not touched) and write a report: for every
# patch, clean, 3-way merged, resolved from record, or NEW CONFLICT (with its files;
# the patch is skipped and the next ones are tried).
#
# Recorded resolutions of version X live in rebase-resolutions/X/ (see CONTRIBUTING.md):
#   rr-cache/        git rerere's cache, keyed by conflict hunk: known textual conflicts
#   fixups/<patch>   a diff applied after <patch> and squashed into it: the semantic
#                    fixes upstream's changes need where the patch applies without conflict
# When X has recorded resolutions and no patch has a new conflict, the rebased series
# is exported (normalized, like patches/) to patches-variants/X/, with SOURCE: the
# sha256 of the patches/ files it was made from (scripts/check-series.sh fails when
# patches/ changed since). The result is fetched into vllm/ as branch <branch>-on-X,
# the new base tagged upstream/vX.
#
#   --onto X            a release version (0.33.0; registry sdist when the git remote
#                       is unreachable), `latest` (the newest release on the package
#                       registry), or a git ref of the upstream remote
#   --record SRC        first record rebase-resolutions/X/ from a resolved series: SRC is
#                       a branch of vllm/ or a git work tree (its HEAD) with one commit per
#                       patch of patches/series (or per patch of a prefix of it: the later
#                       patches keep their record), same subjects, on top of the new base
#   --test              run the test files the series adds or changes on the rebased tree,
#                       with the compiled kernels of vllm/ (the pin's CPU build) linked in;
#                       the result is printed and goes into the report. The committed
#                       report is made with --test (CONTRIBUTING.md); without it the
#                       report says that no tests ran (a previous run's results would
#                       no longer describe the regenerated variant)
#   --keep DIR          rebase in DIR and keep it (default: a temporary clone)
#   --stop              with --keep: stop at the first NEW CONFLICT, leaving its `git am`
#                       in progress in DIR (resolve, `git am --continue`, then --record DIR)
#   --report FILE       where to write the markdown report
#                       (default: rebase-reports/<pin>-onto-<X>.md)
#   --export DIR        also export the rebased series into DIR
#   --allow-conflicts   exit 0 even when a patch has a new conflict (the report says so)
#   --allow-unpinned    when the git remote is unreachable, download the registry sdist of
#                       a release that vllm.lock.toml does not pin ([releases]), unverified
#                       (without it such a release is refused before downloading)
#
# Exit status: 0 every patch applied (and, with --test, the tests passed); 3 a NEW
# CONFLICT (report written); 4 tests failed on the rebased tree; 1 error.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
onto="" report="" export_dir="" allow=0 record="" run_tests=0 keep="" stop=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --onto) onto=${2:-}; shift 2 || die "--onto needs a value" ;;
    --onto=*) onto=${1#*=}; shift ;;
    --record) record=${2:-}; shift 2 || die "--record needs a branch or directory" ;;
    --test) run_tests=1; shift ;;
    --keep) keep=${2:-}; shift 2 || die "--keep needs a directory" ;;
    --stop) stop=1; shift ;;
    --report) report=${2:-}; shift 2 || die "--report needs a value" ;;
    --export) export_dir=${2:-}; shift 2 || die "--export needs a value" ;;
    --allow-conflicts) allow=1; shift ;;
    --allow-unpinned) export DSL_ALLOW_UNPINNED=1; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$onto" ]] || die "--onto is required (e.g. --onto 0.33.0)"
[[ $stop == 0 || -n "$keep" ]] || die "--stop needs --keep DIR"
[[ -z "$keep" || -z "$record" || "$(realpath -m "$keep")" != "$(realpath -m "$record")" ]] \
  || die "--keep would delete the --record work tree: use another directory"
load_lock
if [[ "$onto" == latest ]]; then
  onto=$(python3 -m pip index versions vllm 2>/dev/null | sed -n 's/^vllm (\(.*\))$/\1/p')
  [[ -n "$onto" ]] || die "cannot resolve the newest vllm release (is the package registry reachable?)"
  log "newest vllm release: $onto"
fi
require_vllm_repo
mapfile -t patches < <(series_patches)
label=${onto#v}
if [[ "$label" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]]; then new_tag="upstream/v$label"; else new_tag="upstream/$onto"; fi
slug=${label//\//-}
branch="$LOCK_BRANCH-on-$slug"
report=${report:-$ROOT/rebase-reports/$LOCK_VERSION-onto-$slug.md}
res_dir=$RESOLUTIONS_ROOT/$slug
variant_dir=$VARIANTS_ROOT/$slug
mkdir -p "$(dirname "$report")"

log "materializing $onto as $new_tag"
materialize_base "$label" "$new_tag" "$VLLM_DIR" ""
if [[ -n "$keep" ]]; then
  dir=$(mkdir -p "$(dirname "$keep")" && cd "$(dirname "$keep")" && pwd)/$(basename "$keep")
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  dir=$tmp/vllm
fi
rebase_clone "$dir" "$new_tag" "$branch"

if [[ -n "$record" ]]; then
  src_repo=$VLLM_DIR src_ref=$record
  if [[ -e "$record/.git" ]]; then src_repo=$(cd "$record" && pwd) src_ref=HEAD; fi
  git -C "$dir" fetch -q "$src_repo" "$src_ref" || die "cannot read '$record' (a branch of vllm/ or a git work tree)"
  log "recording the resolutions of $label from $record into ${res_dir#"$ROOT"/}/"
  record_resolutions "$dir" patches "$(git -C "$dir" rev-parse FETCH_HEAD)" "$res_dir"
  git -C "$dir" checkout -q -B "$branch" "$new_tag"
fi
load_resolutions "$dir" "$res_dir"
n_records=$(find "$res_dir/rr-cache" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l || true)
n_fixups=$(find "$res_dir/fixups" -type f 2>/dev/null | wc -l || true)
for f in "$res_dir"/fixups/*; do
  [[ -e "$f" ]] || continue
  [[ -f "$PATCH_DIR/$(basename "$f")" ]] || die "recorded fixup $(basename "$f") names no patch of patches/series: re-record (--record)"
done

rows=() n_clean=0 n_merged=0 n_recorded=0 n_conflict=0 n_fixed=0 stopped=""
for i in "${!patches[@]}"; do
  p=${patches[$i]} name=$(basename "${patches[$i]}")
  fixup=""
  [[ -f "$res_dir/fixups/$name" ]] && fixup=$res_dir/fixups/$name
  am_recorded "$dir" "$p" "$fixup" "$stop"
  files=""
  [[ -z "$AM_FILES" ]] || files=$(sed -E 's/([^ ]+)/`\1`/g; s/` `/`, `/g' <<<"$AM_FILES")
  fixed=""
  if [[ -n "$AM_FIXUP" && $AM_RESULT != conflict ]]; then
    fixed="fixup: $(sed -E 's/([^ ]+)/`\1`/g; s/` `/`, `/g' <<<"$AM_FIXUP")"
    n_fixed=$((n_fixed + 1))
  fi
  case $AM_RESULT in
    clean) result="clean"; n_clean=$((n_clean + 1)) ;;
    3-way) result="3-way merged"; n_merged=$((n_merged + 1)) ;;
    recorded) result="resolved from record"; n_recorded=$((n_recorded + 1)) ;;
    conflict) result="**NEW CONFLICT** (skipped)"; n_conflict=$((n_conflict + 1)) ;;
  esac
  rows+=("| \`$name\` | $result | $files | $fixed |")
  printf '  %-22s %s%s\n' "$AM_RESULT" "$name" "${AM_FILES:+: $AM_FILES}" >&2
  if [[ $AM_RESULT == conflict && $stop == 1 ]]; then
    stopped=$name
    break
  fi
done

variant_note="not written: $label has no recorded resolutions (\`${res_dir#"$ROOT"/}/\`)"
if [[ -n "$stopped" ]]; then
  variant_note="not written (stopped at $stopped)"
elif [[ $n_conflict -gt 0 ]]; then
  variant_note="not written: new conflicts (the committed one, if any, is now stale)"
elif [[ -d "$res_dir" ]]; then
  export_series "$dir" "$new_tag" "$branch" "$variant_dir"
  series_fingerprint >"$variant_dir/SOURCE"
  variant_note="regenerated: \`${variant_dir#"$ROOT"/}/\` (${#patches[@]} patches)"
  log "exported the rebased series to $variant_dir"
fi
if [[ -n "$export_dir" && -z "$stopped" ]]; then
  export_series "$dir" "$new_tag" "$branch" "$export_dir"
  log "exported the rebased series to $export_dir"
fi

tests_md=() test_rc=0
if [[ $run_tests == 0 && -z "$stopped" ]]; then
  tests_md+=("## Tests on the rebased tree" ""
    "Not run: this report was written without \`--test\` (\`scripts/rebase.sh --onto $onto --test\` runs them).")
  if grep -q '^- result: ' "$report" 2>/dev/null; then
    warn "$(basename "$report") had test results from an earlier --test run; this run has none, so the report now says 'Not run'. Run 'scripts/rebase.sh --onto $onto --test' before committing the report."
  fi
fi
if [[ $run_tests == 1 && -z "$stopped" ]]; then
  [[ -x "$VENV_DIR/bin/python" ]] || die "--test needs the build venv $VENV_DIR: run scripts/apply_and_build.sh"
  require_cpu_venv "scripts/rebase.sh --test"
  link_kernels "$VLLM_DIR" "$dir"
  kernels=$(cd "$dir" && git ls-files -o -i --exclude-standard -- vllm | grep -cE '\.so$' || true)
  mapfile -t tests < <(git -C "$dir" diff --name-only --diff-filter=AM "$new_tag..$branch" -- 'tests/**test_*.py')
  mapfile -t mods < <(git -C "$dir" diff --name-only --diff-filter=AM "$new_tag..$branch" -- 'vllm/*.py' \
    | sed -e 's/\.py$//' -e 's/\/__init__$//' -e 's/\//./g')
  junit=$(mktemp -d)
  tests_md+=("## Tests on the rebased tree" ""
    "- kernels: the compiled files of vllm/ (vLLM $LOCK_VERSION, $kernels \`.so\` files) linked into the $label tree; python code is $label's"
    "- what: the test files the series adds or changes, run by \`upstream_pytest\` as in fastcheck (CPU, offline)")
  if (cd "$dir" && PYTHONPATH="$dir" "$VENV_DIR/bin/python" -c '
import importlib, sys
import vllm, vllm._custom_ops
for m in sys.argv[1:]:
    importlib.import_module(m)
' "${mods[@]}") >"$junit/import.log" 2>&1; then
    tests_md+=("- imports: \`vllm\`, \`vllm._custom_ops\` and the ${#mods[@]} modules the series touches import")
  else
    test_rc=4
    tests_md+=("- imports: **FAILED**:" "" '```' "$(tail -n 15 "$junit/import.log")" '```')
    tail -n 15 "$junit/import.log" >&2
  fi
  log "tests on the rebased tree: imports $([[ $test_rc == 0 ]] && echo ok || echo FAILED) (${#mods[@]} modules)"
  if [[ ${#tests[@]} -eq 0 ]]; then
    tests_md+=("- no test files in the series")
  else
    upstream_pytest "$dir" "$junit/t.xml" "${tests[@]}" >"$junit/t.log" 2>&1 || true
    summary=$(python3 "$ROOT/scripts/lib/junit_summary.py" "tests" "$junit/t.xml") || test_rc=4
    log "tests on the rebased tree: $summary"
    tests_md+=("- result: $summary" "")
    mapfile -t -O "${#tests_md[@]}" tests_md < <(python3 "$ROOT/scripts/lib/junit_summary.py" --by-file "$junit/t.xml")
    [[ $test_rc == 0 ]] || { tests_md+=("" '```' "$(grep -E '^(FAILED|ERROR) ' "$junit/t.log" | head -n 30)" '```'); tail -n 30 "$junit/t.log" >&2; }
  fi
  tests_md+=("" "Not run against $label: vLLM's own CPU tests of the touched areas (fastcheck stage b, needs $label's kernels), the per-prefix bisectability and pre-commit hooks (fastcheck stage a), the GPU e2e tests (\`tests/gpu\`, CUDA host).")
  rm -rf "$junit"
fi

sdist_sha=$(sha256sum "$DSL_CACHE/dl/vllm-$label.tar.gz" 2>/dev/null | cut -d' ' -f1 || true)
if [[ -n "$sdist_sha" ]]; then
  if [[ "$sdist_sha" == "$(python3 "$ROOT/scripts/lib/lock.py" sdist-sha256 "$label" 2>/dev/null)" ]]; then
    sdist_sha+="\`, pinned in \`vllm.lock.toml"
  else
    sdist_sha+="\`, NOT pinned in \`vllm.lock.toml"
  fi
fi
{
  echo "# Rebase report: $LOCK_VERSION series onto $onto"
  echo
  echo "- from: \`$LOCK_BASE_TAG\` ($LOCK_DESCRIBE), ${#patches[@]} patches in \`patches/series\`"
  echo "- onto: \`$new_tag\` at \`$(git -C "$dir" rev-parse --short=12 "$new_tag")\`${sdist_sha:+ (registry sdist sha256 \`$sdist_sha\`)}"
  echo "- result branch in vllm/: \`$branch\` ($(git -C "$dir" rev-list --count "$new_tag..HEAD") commits)"
  echo "- recorded resolutions: \`${res_dir#"$ROOT"/}/\` ($n_records conflict resolutions, $n_fixups fixups)$([[ ! -f "$res_dir/README.md" ]] || echo "; what each one does: \`${res_dir#"$ROOT"/}/README.md\`")"
  echo "- variant: $variant_note"
  echo "- command: \`scripts/rebase.sh --onto $onto$([[ $run_tests == 0 ]] || echo " --test")\`"
  echo "- summary: $n_clean clean, $n_merged 3-way merged, $n_recorded resolved from record, $n_conflict NEW CONFLICT; $n_fixed with a recorded fixup"
  echo
  echo "| patch | result | conflicting files | semantic fixup |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  if [[ ${#tests_md[@]} -gt 0 ]]; then echo; printf '%s\n' "${tests_md[@]}"; fi
} >"$report"
if [[ -z "$stopped" ]]; then
  git_vllm fetch -q "$dir" "+refs/heads/$branch:refs/heads/$branch" 2>/dev/null \
    || warn "could not update branch $branch in vllm/ (checked out there?)"
fi
log "report: $report ($n_clean clean, $n_merged 3-way, $n_recorded from record, $n_conflict NEW CONFLICT)"
if [[ -n "$stopped" ]]; then
  log "stopped at $stopped in $dir: resolve, 'git am --continue', then" \
    "scripts/rebase.sh --onto $onto --record $dir"
fi
if [[ $n_conflict -gt 0 && $allow == 0 ]]; then
  echo "error: NEW CONFLICT onto $label: resolve and record it (CONTRIBUTING.md, 'Maintained variants')" >&2
  exit 3
fi
exit "$test_rc"
