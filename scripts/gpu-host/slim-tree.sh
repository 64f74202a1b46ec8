#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/slim-tree.sh [KEEP...] | --restore | --help
#
# Here, before a device session's first call: leaves the committed results
# (benchmarks/results/) out of this checkout's working tree, so that they stop
# travelling with every device call. A call sends the tracked files that exist
# (call-size.sh), and by session 68 the results were 38.6 MB of the 51.5 MB
# tree: `pack-offline.sh --all --cap fit` then made 26 chunks of 12.6 MB, one
# call each, and a staged host is lost ~30 s after a call. Slimmed, the same
# bundle is 7 chunks of ~51 MB (session 69). Nothing the host runs reads the
# results (the collecting calls are scripts/gpu-host/plan-collect.sh); a plan
# with scripts of its own in its results folder names that folder as KEEP (paths
# under benchmarks/results/).
#
# It is git's sparse checkout (`git sparse-checkout set --no-cone`): git status
# stays clean and commits are unchanged, but new files cannot be added under
# the results while slim. So: slim, pack (`--cap fit` measures the tree as it
# is now), run the device session, then `--restore` (git sparse-checkout
# disable: every file back) before committing the session's results.
# Refuses while benchmarks/results/ has uncommitted changes.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
handle_help "$@"
cd "$ROOT"
results=benchmarks/results
if [[ "${1:-}" == "--restore" ]]; then
  (( $# == 1 )) || die "--restore takes no other argument"
  git sparse-checkout disable
  log "every file is back ($(git ls-files | wc -l) tracked)"
  exit 0
fi
patterns=('/*' "!/$results/")
for keep in "$@"; do
  [[ "$keep" == -* ]] && die "unknown option '$keep' (see --help)"
  keep=${keep%/}
  [[ "$keep" == "$results"/?* ]] || die "KEEP '$keep' is not under $results/"
  [[ -n "$(git ls-tree HEAD -- "$keep")" ]] || die "KEEP '$keep' is not in HEAD's tree"
  # A folder's pattern ends with '/', a file's does not.
  [[ -n "$(git ls-tree -d HEAD -- "$keep")" ]] && keep+=/
  patterns+=("/$keep")
done
dirty=$(git status --porcelain --untracked-files=all -- "$results")
[[ -z "$dirty" ]] || die "$results/ has uncommitted changes; commit them first:
$dirty"
git sparse-checkout set --no-cone "${patterns[@]}"
log "slim: $results/ left out$( (( $# )) && echo " but for $*"); 'slim-tree.sh --restore' brings it back"
sizes=$(bash "$ROOT/scripts/gpu-host/call-size.sh") || true
echo "${sizes%%$'\n'*}"
