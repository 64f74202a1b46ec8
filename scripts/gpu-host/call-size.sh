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
dirs = set()


def sent(size):
    return 512 + -(-size // 512) * 512


def parents(path):
    d = os.path.dirname(path)
    while d and d not in dirs:
        dirs.add(d)
        d = os.path.dirname(d)


names = [n.decode() for n in sys.stdin.buffer.read().split(b"\0") if n]
tree = tree_sent = 0
for n in names:
    if os.path.lexists(n):
        size = os.lstat(n).st_size
        tree += size
        tree_sent += sent(size)
        parents(n)
tree_sent += 512 * len(dirs)
total = tree_sent
print(f"tree (tracked and untracked-not-ignored files): {tree:,} bytes ({tree_sent:,} as sent)")
for path in sys.argv[2:]:
    size = size_sent = 0
    before = len(dirs)
    parents(path)
    if os.path.isdir(path) and not os.path.islink(path):
        for d, _, files in os.walk(path):
            dirs.add(d)
            for f in files:
                n = os.lstat(os.path.join(d, f)).st_size
                size += n
                size_sent += sent(n)
    else:
        size = os.lstat(path).st_size
        size_sent = sent(size)
    size_sent += 512 * (len(dirs) - before)
    total += size_sent
    print(f"carry {path}: {size:,} bytes ({size_sent:,} as sent)")
print(f"total {total:,} of {limit:,} bytes as sent ({limit - total:,} left)")
if total > limit:
    print(f"call-size.sh: {total - limit:,} bytes over the limit: carry less with this "
          "call or pack the chunks with a lower --cap (scripts/pack-offline.sh)", file=sys.stderr)
    sys.exit(1)
' "$limit" "$@"
