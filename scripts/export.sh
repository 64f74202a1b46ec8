#!/usr/bin/env bash
# Usage: scripts/export.sh [--check]
#
# Export the series branch of vllm/ (commits on top of the pinned base tag) into
# patches/ as `git format-patch` files plus patches/series, normalized so that
# re-exporting an unchanged branch is a no-op (zero commit ids, full blob ids,
# no git-version signature).
#
#   --check   do not write: fail if patches/ differs from what would be exported
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
load_lock
require_clean_vllm
git_vllm rev-parse -q --verify "refs/heads/$LOCK_BRANCH" >/dev/null \
  || die "vllm/ has no branch '$LOCK_BRANCH': run scripts/sync.sh and scripts/apply.sh"
git_vllm merge-base --is-ancestor "$LOCK_BASE_TAG" "$LOCK_BRANCH" \
  || die "branch '$LOCK_BRANCH' is not based on $LOCK_BASE_TAG: rebase it first"
missing=$(git_vllm log --format='%h %s' --invert-grep --grep='^Signed-off-by: ' "$LOCK_BASE_TAG..$LOCK_BRANCH")
[[ -z "$missing" ]] || die "commits without Signed-off-by (use 'git commit -s --amend'):"$'\n'"$missing"
if [[ $check == 1 ]]; then
  patches_match "$VLLM_DIR" "$LOCK_BASE_TAG" "$LOCK_BRANCH" 40 \
    || die "patches/ differs from branch '$LOCK_BRANCH': run scripts/export.sh"
  log "patches/ is up to date with '$LOCK_BRANCH' ($(wc -l <"$PATCH_DIR/series") patches)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export_series "$VLLM_DIR" "$LOCK_BASE_TAG" "$LOCK_BRANCH" "$tmp"
n=$(wc -l <"$tmp/series")
mkdir -p "$PATCH_DIR"
rm -f "$PATCH_DIR"/[0-9][0-9][0-9][0-9]-*.patch "$PATCH_DIR/series"
cp "$tmp"/*.patch "$tmp/series" "$PATCH_DIR"/ 2>/dev/null || cp "$tmp/series" "$PATCH_DIR"/
record_series_sync
log "exported $n patches from '$LOCK_BRANCH' to patches/"
