#!/usr/bin/env bash
# Usage: scripts/rebase.sh --onto <version|git-ref> [--report FILE] [--export DIR] [--allow-conflicts]
#
# Re-apply patches/series onto a newer upstream and write a report: for every
# patch, whether it applied cleanly, needed a 3-way merge, or conflicted (with the
# conflicting files). A conflicted patch is skipped and the next ones are tried.
# The new base is tagged upstream/v<version> (or upstream/<ref>) in vllm/ and the
# result is kept on branch <series-branch>-on-<version>; vllm/ is left on the
# series branch afterwards, clean.
#
#   --onto X            a release version (0.33.0; registry sdist when the git remote
#                       is unreachable), `latest` (the newest release on the package
#                       registry), or a git ref of the upstream remote
#   --report FILE       where to write the markdown report
#                       (default: rebase-reports/<pin>-onto-<X>.md)
#   --export DIR        also export the rebased branch as a series into DIR
#   --allow-conflicts   exit 0 even when a patch conflicts (the report says so)
#
# Exit status: 0 all patches applied; 3 some conflicted (report written); 1 error.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
onto="" report="" export_dir="" allow=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --onto) onto=${2:-}; shift 2 || die "--onto needs a value" ;;
    --onto=*) onto=${1#*=}; shift ;;
    --report) report=${2:-}; shift 2 || die "--report needs a value" ;;
    --export) export_dir=${2:-}; shift 2 || die "--export needs a value" ;;
    --allow-conflicts) allow=1; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$onto" ]] || die "--onto is required (e.g. --onto 0.33.0)"
load_lock
if [[ "$onto" == latest ]]; then
  onto=$(python3 -m pip index versions vllm 2>/dev/null | sed -n 's/^vllm (\(.*\))$/\1/p')
  [[ -n "$onto" ]] || die "cannot resolve the newest vllm release (is the package registry reachable?)"
  log "newest vllm release: $onto"
fi
require_clean_vllm
mapfile -t patches < <(series_patches)
label=${onto#v}
if [[ "$label" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]]; then new_tag="upstream/v$label"; else new_tag="upstream/$onto"; fi
branch="$LOCK_BRANCH-on-${label//\//-}"
report=${report:-$ROOT/rebase-reports/$LOCK_VERSION-onto-${label//\//-}.md}
mkdir -p "$(dirname "$report")"

log "materializing $onto as $new_tag"
materialize_base "$label" "$new_tag" "$VLLM_DIR" ""
git_vllm checkout -q -B "$branch" "$new_tag"

rows=() n_clean=0 n_merged=0 n_conflict=0
for p in "${patches[@]}"; do
  name=$(basename "$p")
  if git_vllm apply --check "$p" >/dev/null 2>&1; then
    git_vllm am -q --keep-non-patch --committer-date-is-author-date "$p"
    rows+=("| \`$name\` | clean | |"); n_clean=$((n_clean + 1))
    echo "  clean       $name"
  elif git_vllm am -q --3way --keep-non-patch --committer-date-is-author-date "$p" >/dev/null 2>&1; then
    rows+=("| \`$name\` | 3-way merged | |"); n_merged=$((n_merged + 1))
    echo "  3-way       $name"
  else
    files=$(git_vllm diff --name-only --diff-filter=U | sed 's/.*/`&`/' | paste -sd, - | sed 's/,/, /g')
    [[ -n "$files" ]] || files=$(git_vllm apply --check "$p" 2>&1 | sed -nE 's/^error: (patch failed: )?([^:]+):.*/`\2`/p' | sort -u | paste -sd, -)
    git_vllm am --abort >/dev/null 2>&1 || true
    git_vllm reset -q --hard
    rows+=("| \`$name\` | **conflicted** (skipped) | ${files:-?} |"); n_conflict=$((n_conflict + 1))
    echo "  CONFLICT    $name: ${files:-?}"
  fi
done
if [[ -n "$export_dir" ]]; then
  export_series "$VLLM_DIR" "$new_tag" "$branch" "$export_dir"
  log "exported the rebased series to $export_dir"
fi
sdist_sha=$(sha256sum "$DSL_CACHE/dl/vllm-$label.tar.gz" 2>/dev/null | cut -d' ' -f1 || true)
{
  echo "# Rebase report: $LOCK_VERSION series onto $onto"
  echo
  echo "- from: \`$LOCK_BASE_TAG\` ($LOCK_DESCRIBE), ${#patches[@]} patches in \`patches/series\`"
  echo "- onto: \`$new_tag\` at \`$(git_vllm rev-parse --short=12 "$new_tag")\`${sdist_sha:+ (registry sdist sha256 \`$sdist_sha\`)}"
  echo "- result branch in vllm/: \`$branch\` ($(git_vllm rev-list --count "$new_tag..$branch") commits)"
  echo "- command: \`scripts/rebase.sh --onto $onto\`"
  echo "- summary: $n_clean clean, $n_merged 3-way merged, $n_conflict conflicted"
  echo
  echo "| patch | result | conflicting files |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
} >"$report"
git_vllm checkout -q "$LOCK_BRANCH"
log "report: $report ($n_clean clean, $n_merged 3-way, $n_conflict conflicted)"
if [[ $n_conflict -gt 0 && $allow == 0 ]]; then
  exit 3
fi
