#!/usr/bin/env bash
# Usage: scripts/gpu-host/pack-prefix.sh SERIES_DIR N NAME | --help
#
# Runs here. Makes .gpu-bundles/wip/NAME.tgz, a tarball for wip-root.sh that turns
# the staged vllm package (the series branch of vllm/) into the tree of the first N
# patches of SERIES_DIR/series applied onto the pin's base tag (N = all: every
# patch): the vllm/ files that tree adds or changes, and a top-level REMOVED that
# lists the ones it lacks. SERIES_DIR is patches/, a patches-wip/ folder, or a
# rebuilt stack; e.g. one PR of a stack alone, or a rebuilt series whose tree
# differs from the staged one in a few files. The patches are applied in a
# scratch clone of vllm/ (vllm/ itself is only read). Prints the tarball's path
# and what it holds.
#
#   scripts/gpu-host/pack-prefix.sh patches 7 pr2-alone        # PRs 1-2 of the stack alone
#   scripts/gpu-host/pack-prefix.sh patches-wip/some-wip all some-wip
#
# Environment: WIP_DIR  where the tarball goes (default .gpu-bundles/wip, ignored)
# Exit status: 0; 1 where a patch does not apply or vllm/ is missing; 2 for bad
# arguments.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -eq 3 ]] || { echo "pack-prefix.sh: SERIES_DIR, N and NAME are needed (see --help)" >&2; exit 2; }
dir=$1 n=$2 name=$3
check_run_name pack-prefix.sh "$name"
[[ -f "$dir/series" ]] || { echo "pack-prefix.sh: no $dir/series: SERIES_DIR is a folder of patches with their series" >&2; exit 2; }
PATCH_DIR=$(cd "$dir" && pwd)
mapfile -t all < <(series_patches)
if [[ "$n" == all ]]; then
  n=${#all[@]}
fi
[[ "$n" =~ ^[0-9]+$ ]] && (( n >= 1 && n <= ${#all[@]} )) || {
  echo "pack-prefix.sh: N must be 1..${#all[@]} (the patches of $dir/series) or 'all', not '$n'" >&2; exit 2; }
load_lock
require_vllm_repo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --shared "$VLLM_DIR" "$work/v"
git -C "$work/v" checkout -q --detach "$LOCK_BASE_TAG"
am_series "$work/v" "${all[@]:0:$n}" || die "$(basename "$AM_FAILED_PATCH") does not apply onto the patches before it"
staged=$(git -C "$VLLM_DIR" rev-parse "$LOCK_BRANCH")
changed=$(git -C "$work/v" diff --name-only --diff-filter=AM "$staged" HEAD -- vllm)
git -C "$work/v" diff --name-only --diff-filter=D "$staged" HEAD -- vllm > "$work/REMOVED"
[[ -n "$changed" || -s "$work/REMOVED" ]] || die "the first $n patches give the staged tree ($LOCK_BRANCH) itself: nothing to lay over it"
wip_dir=${WIP_DIR:-$ROOT/.gpu-bundles/wip}
mkdir -p "$wip_dir"
out=$wip_dir/$name.tgz
# shellcheck disable=SC2086  # one path a word: git prints no spaces in vllm/ paths
git -C "$work/v" archive --format=tar HEAD $changed > "$work/files.tar"
tar rf "$work/files.tar" -C "$work" REMOVED
gzip -n < "$work/files.tar" > "$out"
echo "$out"
echo "  the first $n of ${#all[@]} patches of $dir: $(grep -c . <<< "$changed" || true) file(s) added or changed, $(grep -c . "$work/REMOVED" || true) removed, against $LOCK_BRANCH ($(git -C "$VLLM_DIR" rev-parse --short "$staged"))"
