#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/wip-root.sh [--root WIP_ROOT] TGZ... | --help
#
# On a staged GPU host: a root for work-in-progress series without repacking.
# Copies the staged vllm package ($GPU_HOST_ROOT/vsrc) to WIP_ROOT/vsrc, lays each
# TGZ over the copy (the files a wip's patches change, tarred from the vllm
# checkout: `git -C vllm archive <wip branch> $(git -C vllm diff --name-only
# --diff-filter=AM dsl <wip branch> -- vllm)`, carried in an ignored
# .gpu-bundles/wip/), deletes from the copy the files a TGZ's top-level REMOVED
# lists (one vllm/ path a line: what the wip's tree lacks, `git -C vllm diff
# --name-only --diff-filter=D dsl <wip branch> -- vllm`; e.g. an earlier prefix
# of the series, which has none of the later patches' new modules), and writes
# WIP_ROOT/env.sh: the staged env.sh with
# PYTHONPATH on the copy. Several wips may be laid together only where they
# change different files (each is a diff against the series, not against the
# others). Then run what needs them with GPU_HOST_ROOT=WIP_ROOT (ab-run.sh,
# ab-start.sh, suite.sh source its env.sh). Every engine the wips' env starts
# runs their code, SD and target-only arms included (the parent process builds
# every engine's config). Prints WIP_ROOT; checks that the copy's vllm imports
# from the copy.
#
#   --root WIP_ROOT  default /tmp/gpuhost-wip (replaced if it exists)
# Environment: GPU_HOST_ROOT  staged root (default /tmp/gpuhost)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
wip=/tmp/gpuhost-wip
if [[ "$1" == --root ]]; then
  [[ $# -ge 3 ]] || { echo "wip-root.sh: --root DIR, then at least one TGZ" >&2; exit 2; }
  wip=$2; shift 2
fi
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
seen=$(mktemp)
trap 'rm -f "$seen"' EXIT
to_remove=""  # every tarball's REMOVED, checked below
for tgz in "$@"; do
  [[ -f "$tgz" ]] || {
    echo "wip-root.sh: no $tgz: carry the wip's tarball (.gpu-bundles/wip/<name>.tgz)" >&2; exit 2; }
  members=$(tar tzf "$tgz")
  files=$(grep -v '/$' <<< "$members" | grep -vx REMOVED || true)
  bad=$(grep -v '^vllm/' <<< "$files" | grep . | head -1 || true)
  [[ -z "$bad" ]] || {
    echo "wip-root.sh: $tgz holds $bad: only files of the vllm package (vllm/...) may be laid over it" >&2; exit 2; }
  if grep -qx REMOVED <<< "$members"; then
    removed=$(tar xzf "$tgz" -O REMOVED | grep . || true)
    bad=$(grep -v '^vllm/' <<< "$removed" | grep . | head -1 || true)
    [[ -z "$bad" ]] && bad=$(grep -E '(^|/)\.\.(/|$)' <<< "$removed" | head -1 || true)
    [[ -z "$bad" ]] || {
      echo "wip-root.sh: $tgz's REMOVED lists $bad: only files of the vllm package (vllm/...) may be removed" >&2; exit 2; }
    files=$(printf '%s\n%s' "$files" "$removed" | grep .)
    to_remove+="$removed"$'\n'
  fi
  both=$(grep -Fxf "$seen" <<< "$files" | head -1 || true)
  [[ -z "$both" ]] || {
    echo "wip-root.sh: $tgz and an earlier tarball both change $both: lay wips together only where they change different files" >&2; exit 2; }
  echo "$files" >> "$seen"
done
[[ -f "$root/env.sh" && -d "$root/vsrc/vllm" ]] || {
  echo "wip-root.sh: no staged package in $root: stage the bundle first (docs/gpu-host.md)" >&2; exit 1; }
rm -rf "$wip"
mkdir -p "$wip"
cp -a "$root/vsrc" "$wip/vsrc"
for tgz in "$@"; do tar xzf "$tgz" -C "$wip/vsrc" --exclude=REMOVED; done
# No tarball lays a file another removes (the check above), so the order is free.
while IFS= read -r path; do
  [[ -n "$path" ]] && rm -f "$wip/vsrc/$path"
done <<< "$to_remove"
site=$(. "$root/env.sh" && printf '%s' "${PYTHONPATH:-}" | tr ':' '\n' | { grep -vx "$root/vsrc" || true; } | paste -sd: -)
{ echo "source $root/env.sh"; echo "export PYTHONPATH=$wip/vsrc${site:+:$site}"; } > "$wip/env.sh"
got=$(. "$wip/env.sh" && cd / && python3 -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')
[[ "$got" == "$wip/vsrc/vllm" ]] || {
  echo "wip-root.sh: vllm imports from $got, not from $wip/vsrc/vllm" >&2; exit 1; }
echo "$wip"
