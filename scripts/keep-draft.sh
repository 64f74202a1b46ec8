#!/usr/bin/env bash
# Usage: scripts/keep-draft.sh DIR [DIR ...]
#
# Keep a distilled draft that scripts/gpu-host/send-draft.sh sent back, so that
# later bundles carry it (scripts/pack-offline.sh --with-drafts, in --all) and
# the proxies' chain rebuilds it on the host instead of distilling it again
# (~5 minutes of the GPU a session, and a different draft each time: distill.py's
# weights do not repeat across sessions). The DIRs (the files_at folders of the
# send-draft.sh calls, in any order) hold <name>.safetensors.aa, .ab, ... (split
# -b 15M), <name>.meta.tar.gz and SHA256SUMS of the whole files. The parts are
# joined and every file is checked against SHA256SUMS; then the files go into
# KEPT_DRAFTS/<name>/ (default DSL_CACHE/kept-drafts: ~110 MB a draft, too large
# to travel in the tree) and their sha256 and the draft's distill.json into
# benchmarks/gpu-drafts/<name>.json, the record pack-offline.sh packs by: commit
# it. A file whose sha256 does not match is not kept, and nothing is recorded.
#
# Env: KEPT_DRAFTS, DSL_CACHE, DRAFT_RECORDS (default benchmarks/gpu-drafts).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
[[ $# -ge 1 ]] || die "keep-draft.sh takes the folders send-draft.sh's calls came back in (see --help)"
for d in "$@"; do
  [[ -d "$d" ]] || die "no folder $d: pass the files_at folder of each send-draft.sh call"
done
shopt -s nullglob
metas=(); sums=()
for d in "$@"; do
  metas+=("$d"/*.meta.tar.gz)
  if [[ -f "$d/SHA256SUMS" ]]; then sums+=("$d/SHA256SUMS"); fi
done
shopt -u nullglob
[[ ${#metas[@]} -gt 0 ]] || die "no <name>.meta.tar.gz in $*: it comes back with send-draft.sh 1"
[[ ${#sums[@]} -gt 0 ]] || die "no SHA256SUMS in $*: it comes back with send-draft.sh 1"
name=$(basename "${metas[0]}" .meta.tar.gz)
records=${DRAFT_RECORDS:-$ROOT/benchmarks/gpu-drafts}
store=${KEPT_DRAFTS:-$DSL_CACHE/kept-drafts}/$name
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keep-draft.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Parts in name order (aa, ab, ...) across the folders, each name taken once.
mapfile -t parts < <(for d in "$@"; do
  for f in "$d/$name".safetensors.[a-z][a-z]; do [[ -f "$f" ]] && echo "${f##*/} $f"; done
done | sort -u -k1,1 | cut -d' ' -f2-)
[[ ${#parts[@]} -gt 0 ]] || die "no $name.safetensors.aa, .ab, ... in $*: send-draft.sh sends them (one call per group)"
cat "${parts[@]}" > "$tmp/$name.safetensors"
cp "${metas[0]}" "$tmp/$name.meta.tar.gz"
verified=()
for f in "$name.safetensors" "$name.meta.tar.gz"; do
  want=$(awk -v n="$f" '$2 == n || $2 == "*" n {print $1; exit}' "${sums[0]}")
  [[ -n "$want" ]] || die "$f is not in ${sums[0]}"
  got=$(sha256sum "$tmp/$f" | awk '{print $1}')
  [[ "$got" == "$want" ]] || die "$f: sha256 $got, expected $want: a part is missing or corrupt (${#parts[@]} part(s) joined); nothing kept"
  verified+=("$f=$want")
done
# The record (written to a temp file first: a meta tarball without distill.json
# keeps nothing) with the sha256 just checked, then the files into the store.
python3 - "$tmp" "$name" "$tmp/record.json" "${verified[@]}" <<'PY' || die "$name.meta.tar.gz has no readable distill.json; nothing kept"
import json, sys, tarfile
from pathlib import Path
tmp, name, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
sums = dict(arg.split("=", 1) for arg in sys.argv[4:])
with tarfile.open(tmp / f"{name}.meta.tar.gz") as tar:
    distill = json.load(tar.extractfile("distill.json"))
out.write_text(json.dumps({"name": name, "files": sums,
                           "weights_sha256": distill["weights_sha256"],
                           "distill": distill}, indent=1) + "\n")
PY
mkdir -p "$store" "$records"
mv "$tmp/$name.safetensors" "$tmp/$name.meta.tar.gz" "$store/"
mv "$tmp/record.json" "$records/$name.json"
echo "kept $name in $store ($(du -sh "$store" | cut -f1)); recorded in $records/$name.json: commit the record"
