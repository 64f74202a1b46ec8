#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/send-draft.sh N [NAME] [--help]
#
# On a staged GPU host whose proxies' chain distilled NAME (default
# smollm2-l16-self, in GPU_HOST_ROOT/models): sends back group N (1, 2, ...) of
# what keeps that draft for later sessions, into $OUT. The first call exports it
# (scripts/gpu-host/kept_draft.py export: every tensor but the frozen embedding,
# ~110 MB for the 16-layer draft, and a small meta tarball with its distill.json)
# into SEND_DIR/NAME (default /tmp/kept-draft) and splits the weights into 15 MiB
# parts; each call sends 3 parts (a call brings back at most 64 MiB in 16 MiB
# files), the first also the meta tarball and SHA256SUMS. It prints which group
# comes next, or that all were sent. Here, then:
# scripts/keep-draft.sh <files_at of each call> (then commit its record).
# Env: GPU_HOST_ROOT (default /tmp/gpuhost), SEND_DIR, SEND_PART (split's part
# size, default 15M).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage_from_header "$0"
  exit 0
fi
[[ $# -ge 1 && $# -le 2 ]] || { echo "send-draft.sh: N [NAME] (see --help)" >&2; exit 2; }
n=$1 name=${2:-smollm2-l16-self}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "send-draft.sh: N '$n' is not a group number (1, 2, ...)" >&2; exit 2; }
[[ -n "${OUT:-}" && -d "$OUT" ]] || { echo "send-draft.sh: OUT is not a folder: run it as a device call's command" >&2; exit 2; }
root=${GPU_HOST_ROOT:-/tmp/gpuhost}
require_staged_root send-draft.sh "$root"
dir=${SEND_DIR:-/tmp/kept-draft}/$name
if [[ ! -f "$dir/SHA256SUMS" ]]; then
  rm -rf "$dir.new"
  (source "$root/env.sh" && GPU_HOST_ROOT=$root \
    python3 scripts/gpu-host/kept_draft.py export "$name" "$dir.new")
  split -b "${SEND_PART:-15M}" "$dir.new/$name.safetensors" "$dir.new/$name.safetensors."
  rm "$dir.new/$name.safetensors"
  rm -rf "$dir" && mv "$dir.new" "$dir"
fi
mapfile -t parts < <(cd "$dir" && ls "$name".safetensors.[a-z][a-z] | sort)
per=3
groups=$(( (${#parts[@]} + per - 1) / per ))
(( n <= groups )) || { echo "send-draft.sh: group $n of $groups: nothing left to send" >&2; exit 2; }
send=("${parts[@]:$(( (n - 1) * per )):$per}")
(( n == 1 )) && send+=("$name.meta.tar.gz" SHA256SUMS)
for f in "${send[@]}"; do cp "$dir/$f" "$OUT/"; done
if (( n < groups )); then
  echo "send-draft.sh: sent group $n of $groups (${send[*]}); next: bash scripts/gpu-host/send-draft.sh $(( n + 1 ))${2:+ $name}"
else
  echo "send-draft.sh: sent group $n of $groups (${send[*]}): all sent; here: scripts/keep-draft.sh <files_at of each call>"
fi
