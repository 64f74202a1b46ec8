#!/usr/bin/env bash
# Usage: scripts/apply.sh [--force]
#
# Reset the series branch of vllm/ to the pinned base tag and `git am --3way` the
# patches listed in patches/series, in order. On failure it names the patch and
# the conflicting files and leaves vllm/ clean on its previous commit.
# Refuses to drop commits of the branch that are not exported to patches/.
#
#   --force   apply even if the branch holds un-exported commits (they are lost,
#             but stay reachable through 'git -C vllm reflog')
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
load_lock
require_clean_vllm
mapfile -t patches < <(series_patches)

orig=$(git_vllm rev-parse -q --verify "refs/heads/$LOCK_BRANCH" || true)
if [[ -n "$orig" && $force == 0 && "$orig" != "$(git_vllm rev-parse "$LOCK_BASE_TAG")" ]]; then
  patches_match "$VLLM_DIR" "$LOCK_BASE_TAG" "$orig" \
    || die "branch '$LOCK_BRANCH' holds commits that differ from patches/: run scripts/export.sh to keep them, or --force to drop them"
fi

git_vllm checkout -q -B "$LOCK_BRANCH" "$LOCK_BASE_TAG"
log "applying ${#patches[@]} patches onto $LOCK_BASE_TAG"
if ! am_series "$VLLM_DIR" "${patches[@]}"; then
  if [[ -n "$orig" ]]; then git_vllm checkout -q -B "$LOCK_BRANCH" "$orig"; fi
  die "the series does not apply; vllm/ is unchanged (branch '$LOCK_BRANCH' at ${orig:0:12})"
fi
log "applied: '$LOCK_BRANCH' is $(git_vllm rev-list --count "$LOCK_BASE_TAG..HEAD") commits on $LOCK_BASE_TAG"
