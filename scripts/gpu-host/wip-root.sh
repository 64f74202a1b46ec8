#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/wip-root.sh TGZ [WIP_ROOT] | --help
#
# On a staged GPU host: a root for a work-in-progress series without repacking.
# Copies the staged vllm package ($GPU_HOST_ROOT/vsrc) to WIP_ROOT/vsrc, lays TGZ
# over the copy (the files the wip's patches change, tarred from the vllm
# checkout: `git -C vllm archive <wip branch> $(git -C vllm diff --name-only
# --diff-filter=AM dsl <wip branch> -- vllm)`, carried in an ignored
# .gpu-bundles/wip/), and writes WIP_ROOT/env.sh: the staged env.sh with
# PYTHONPATH on the copy. Then run what needs the wip with
# GPU_HOST_ROOT=WIP_ROOT (ab-run.sh, ab-start.sh, suite.sh source its env.sh).
# Every engine the wip's env starts runs the wip's code, SD and target-only
# arms included (the parent process builds every engine's config). Prints
# WIP_ROOT; checks that the copy's vllm imports from the copy.
#
#   WIP_ROOT       default /tmp/gpuhost-wip (replaced if it exists)
# Environment: GPU_HOST_ROOT  staged root (default /tmp/gpuhost)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
tgz=$1
wip=${2:-/tmp/gpuhost-wip}
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
[[ -f "$tgz" ]] || {
  echo "wip-root.sh: no $tgz: carry the wip's tarball (.gpu-bundles/wip/<name>.tgz)" >&2; exit 2; }
[[ -f "$root/env.sh" && -d "$root/vsrc/vllm" ]] || {
  echo "wip-root.sh: no staged package in $root: stage the bundle first (docs/gpu-host.md)" >&2; exit 1; }
bad=$(tar tzf "$tgz" | grep -v '^vllm/' | head -1 || true)
[[ -z "$bad" ]] || {
  echo "wip-root.sh: $tgz holds $bad: only files of the vllm package (vllm/...) may be laid over it" >&2; exit 2; }
rm -rf "$wip"
mkdir -p "$wip"
cp -a "$root/vsrc" "$wip/vsrc"
tar xzf "$tgz" -C "$wip/vsrc"
site=$(. "$root/env.sh" && printf '%s' "${PYTHONPATH:-}" | tr ':' '\n' | grep -vx "$root/vsrc" | paste -sd: -)
{ echo "source $root/env.sh"; echo "export PYTHONPATH=$wip/vsrc${site:+:$site}"; } > "$wip/env.sh"
got=$(. "$wip/env.sh" && cd / && python3 -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')
[[ "$got" == "$wip/vsrc/vllm" ]] || {
  echo "wip-root.sh: vllm imports from $got, not from $wip/vsrc/vllm" >&2; exit 1; }
echo "$wip"
