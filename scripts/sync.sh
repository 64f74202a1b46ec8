#!/usr/bin/env bash
# Usage: scripts/sync.sh [--force]
#
# Materialize the pinned upstream (vllm.lock.toml) as a git repository in vllm/:
# the base commit is tagged `upstream/v<version>`. The source is the upstream git
# remote when reachable, else the registry sdist (sha256-verified; downloads are
# cached under ~/.cache/vllm-dsl). An existing vllm/ with the base tag is kept.
#
#   --force   delete vllm/ first (loses un-exported commits there)
#
# Env: VLLM_DIR, DSL_CACHE, DSL_OFFLINE_GIT=1 (skip the git remote).
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
if [[ $force == 1 && -e "$VLLM_DIR" ]]; then
  log "removing $VLLM_DIR"
  rm -rf "$VLLM_DIR"
fi
if [[ -e "$VLLM_DIR" && ! -d "$VLLM_DIR/.git" ]]; then
  die "$VLLM_DIR exists but is not a git repository: move it away or use --force"
fi
materialize_base "$LOCK_VERSION" "$LOCK_BASE_TAG" "$VLLM_DIR" "$LOCK_SDIST_SHA256"
version=$(sed -n "s/^__version__ = version = '\(.*\)'/\1/p" "$VLLM_DIR/vllm/_version.py" 2>/dev/null || true)
if [[ -n "$version" && "$version" != "$LOCK_VERSION" ]]; then
  die "vllm/ base reports version $version, the lock pins $LOCK_VERSION"
fi
if ! git_vllm rev-parse -q --verify "refs/heads/$LOCK_BRANCH" >/dev/null; then
  git_vllm branch "$LOCK_BRANCH" "$LOCK_BASE_TAG"
fi
log "vllm/ synced: base $LOCK_BASE_TAG ($LOCK_DESCRIBE) at $(git_vllm rev-parse --short "$LOCK_BASE_TAG"); series branch '$LOCK_BRANCH'"
if [[ -z "$(git_vllm symbolic-ref -q HEAD || true)" ]]; then
  git_vllm checkout -q "$LOCK_BRANCH"
fi
