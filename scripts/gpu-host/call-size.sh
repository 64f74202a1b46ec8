#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/call-size.sh [CARRY_PATH...] | --help
#
# Here, before a device call: the bytes that call would send. A device command
# carries the checkout's tracked files that exist and its untracked files git
# does not ignore (a nested repository such as vllm/ travels without its
# files), plus each ignored path named in its carry, 64 MiB (67,108,864
# bytes) in all. Prints the tree's bytes, each CARRY_PATH's, the total and
# what is left; exits 1 when the call would exceed the limit, saying what to
# do. The tracked tree grows with every session's committed results (23.3 MB
# in session 26, 25.6 MB in session 27), so a chunk packed to fit beside it
# once may not fit later (docs/gpu-host.md).
#
# Environment: CALL_LIMIT_BYTES (default 67108864).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
handle_help "$@"
limit=${CALL_LIMIT_BYTES:-67108864}
[[ "$limit" =~ ^[0-9]+$ ]] || die "CALL_LIMIT_BYTES '$limit' is not a number of bytes"
cd "$ROOT"
for path in "$@"; do
  [[ -e "$path" ]] || die "carry path '$path' does not exist here (paths are relative to $ROOT)"
done
git ls-files -z --cached --others --exclude-standard \
  | python3 -c '
import os, sys
limit = int(sys.argv[1])
names = [n for n in sys.stdin.buffer.read().split(b"\0") if n]
tree = sum(os.lstat(n).st_size for n in names if os.path.lexists(n))
total = tree
print(f"tree (tracked and untracked-not-ignored files): {tree:,} bytes")
for path in sys.argv[2:]:
    size = 0
    if os.path.isdir(path) and not os.path.islink(path):
        for d, _, files in os.walk(path):
            size += sum(os.lstat(os.path.join(d, f)).st_size for f in files)
    else:
        size = os.lstat(path).st_size
    total += size
    print(f"carry {path}: {size:,} bytes")
print(f"total {total:,} of {limit:,} bytes ({limit - total:,} left)")
if total > limit:
    print(f"call-size.sh: {total - limit:,} bytes over the limit: carry less with this "
          "call, pack the chunks with a lower --cap (scripts/pack-offline.sh), or move a "
          "tracked folder the command does not need (e.g. benchmarks/gpu-rows) out of the "
          "working tree for the call and back after", file=sys.stderr)
    sys.exit(1)
' "$limit" "$@"
