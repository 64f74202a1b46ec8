#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/call-size.sh [CARRY_PATH...] | --help
#
# Here, before a device call: the bytes that call would send. A device command
# carries the checkout's tracked files that exist and its untracked files git
# does not ignore (a nested repository such as vllm/ travels without its
# files), plus each ignored path named in its carry, 64 MiB (67,108,864
# bytes) in all, counted as a tar archive counts them: a 512-byte header per
# file and per folder, each file's bytes padded to a multiple of 512. (Session
# 44: a call of 65,608,860 file bytes, 66,886,656 so counted, went; one of
# 66,051,540, 67,326,464 so counted, was refused as over 64 MiB. With ~1,500
# tracked files the headers and padding add ~1.3 MB to the file bytes.)
# Prints the tree's bytes, each CARRY_PATH's, both ways, the total as sent and
# what is left; exits 1 when the call would exceed the limit, saying what to
# do. The tracked tree grows with every session's committed results, so a
# chunk packed to fit beside it once may not fit later (docs/gpu-host.md).
#
# The counting is scripts/lib/call_size.py's, which scripts/pack-offline.sh
# --cap fit uses too.
#
# Environment: CALL_LIMIT_BYTES (default 67108864).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
handle_help "$@"
limit=$(env_bytes CALL_LIMIT_BYTES "$CALL_LIMIT_DEFAULT")
cd "$ROOT"
for path in "$@"; do
  [[ -e "$path" ]] || die "carry path '$path' does not exist here (paths are relative to $ROOT)"
done
python3 "$ROOT/scripts/lib/call_size.py" count "$limit" "$@"
