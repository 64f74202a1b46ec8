#!/usr/bin/env bash
# Usage: scripts/apply.sh [--force]
#
# Reset the series branch of vllm/ to the pinned base tag and `git am --3way` the
# patches listed in patches/series, in order. On failure it names the patch, the
# conflicting files and the hunk that does not apply, and leaves vllm/ clean on its
# previous commit.
# apply.sh and export.sh record when vllm/'s branch and patches/ were last in step,
# so it tells an edited patch file from commits not exported yet:
#   - patches/ changed (a patch file edited, added or removed), branch unchanged:
#     applies the edited series (nothing of the branch is lost);
#   - the branch holds commits not in patches/: refuses (scripts/export.sh keeps
#     them; --force drops them);
#   - both: refuses, and names the patch files and the commits (exporting would
#     overwrite the edit, applying would drop the commits).
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
if [[ -n "$orig" && $force == 0 && "$orig" != "$(git_vllm rev-parse "$LOCK_BASE_TAG")" ]] \
  && ! patches_match "$VLLM_DIR" "$LOCK_BASE_TAG" "$orig"; then
  series_changes "$orig"
  edited="" commits=""
  [[ -z "$SERIES_EDITED" ]] || edited=$(sed 's/^/    /' <<<"$SERIES_EDITED")
  [[ -z "$SERIES_UNEXPORTED" ]] || commits=$(sed 's/^/    /' <<<"$SERIES_UNEXPORTED")
  if [[ -z "$SERIES_UNEXPORTED" ]]; then
    log "patches/ differs from branch '$LOCK_BRANCH', which holds nothing un-exported: applying patches/${edited:+ (changed:$'\n'$edited)}"
  elif [[ -n "$SERIES_EDITED" ]]; then
    die "patches/ has edited patch files and branch '$LOCK_BRANCH' of vllm/ holds commits that patches/ lacks$([[ $SERIES_KNOWN == 1 ]] || echo " (maybe: vllm/ was applied by an older apply.sh)").
  edited in patches/:
$edited
  commits not exported:
$commits
Do not run scripts/export.sh: it would overwrite the edited patch files with the branch.
To keep both: save the commits (git -C vllm branch $LOCK_BRANCH-saved $LOCK_BRANCH), apply the
edited series (scripts/apply.sh --force), then take back what you need from
$LOCK_BRANCH-saved (git -C vllm cherry-pick ...) and scripts/export.sh."
  else
    die "branch '$LOCK_BRANCH' of vllm/ holds commits that patches/ lacks:
$commits
Run scripts/export.sh to write them to patches/, or scripts/apply.sh --force to drop them (they stay in 'git -C vllm reflog')."
  fi
fi

git_vllm checkout -q -B "$LOCK_BRANCH" "$LOCK_BASE_TAG"
log "applying ${#patches[@]} patches onto $LOCK_BASE_TAG"
if ! am_series "$VLLM_DIR" "${patches[@]}"; then
  if [[ -n "$orig" ]]; then git_vllm checkout -q -B "$LOCK_BRANCH" "$orig"; fi
  failed=${AM_FAILED_PATCH#"$ROOT"/}
  edited=$(git -C "$ROOT" status --porcelain -- "$PATCH_DIR" 2>/dev/null | sed -E 's/^...//' | paste -sd' ' - || true)
  next="Next:"
  if [[ -n "$edited" ]]; then
    next+="
  - patches/ has uncommitted changes ($edited): a patch file is not edited by hand.
    See the edit with 'git diff -- patches/', restore it with 'git checkout -- patches/'
    (or 'git checkout -- $failed'), and run scripts/apply.sh again."
  fi
  next+="
  - to change a patch, change its commit in vllm/ instead: with the committed patches
    applied, 'git -C vllm rebase -i $LOCK_BASE_TAG', edit and amend it, then
    scripts/export.sh writes patches/ (CONTRIBUTING.md, 'The loop').
  - if patches/ came from a pull or merge, the series itself is broken at ${failed##*/}:
    fix it where it was made (vllm/ and scripts/export.sh), not in the .patch file."
  die "the series does not apply; vllm/ is unchanged (branch '$LOCK_BRANCH' at ${orig:0:12})
$next"
fi
record_series_sync
log "applied: '$LOCK_BRANCH' is $(git_vllm rev-list --count "$LOCK_BASE_TAG..HEAD") commits on $LOCK_BASE_TAG"
