#!/usr/bin/env bash
# Usage: scripts/keep-rows.sh DIR
#
# Keep the proxies' distillation rows that a GPU-host command sent back, so that
# later sessions stage them instead of spending ~3 minutes of the H200 generating
# them again. DIR holds the parts `split -b 15M` wrote (self-rows-<key>.pt.aa,
# .ab, ...; a file back from the host is at most 16 MiB) and a sha256 list of the
# whole files (any *.sha256 or SHA256SUMS file in DIR or one folder below it).
# Each file is joined, checked against its sha256, xz-compressed (24 MB of token
# ids become ~1.7 MB) into ROWS_DIR/<name>.xz and its sha256 recorded in
# ROWS_DIR/SHA256SUMS. ROWS_DIR is in the repository because a new session's
# machine keeps nothing but the repository (session 20 lost DSL_CACHE's copy):
# commit what this adds. They travel with every device call in the tree;
# proxies-start.sh and small-start.sh unpack them on the host (offline_bundle.py
# stage-rows). A file whose sha256 does not match is not kept.
#
# Env: ROWS_DIR (default benchmarks/gpu-rows in the repository).
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
[[ $# -eq 1 ]] || die "keep-rows.sh takes one folder (see --help)"
dir=$1
[[ -d "$dir" ]] || die "no folder $dir: pass the files_at folder of the command that sent the rows back"
command -v xz > /dev/null || die "no xz on this machine: install xz-utils, then run keep-rows.sh again"
shopt -s nullglob
firsts=("$dir"/self-rows-*.pt.aa)
sums=("$dir"/*.sha256 "$dir"/SHA256SUM[S] "$dir"/*/*.sha256 "$dir"/*/SHA256SUM[S])
shopt -u nullglob
[[ ${#firsts[@]} -gt 0 ]] || die "no self-rows-*.pt.aa in $dir: the command must split the rows into it (split -b 15M)"
[[ ${#sums[@]} -gt 0 ]] || die "no sha256 list in $dir: the command must write one (sha256sum self-rows-*.pt)"
keep=${ROWS_DIR:-$ROOT/benchmarks/gpu-rows}
mkdir -p "$keep"
for first in "${firsts[@]}"; do
  name=$(basename "${first%.aa}")
  want=$(cat "${sums[@]}" | awk -v n="$name" '$2 == n || $2 == "*" n {print $1; exit}')
  [[ -n "$want" ]] || die "$name is not in the sha256 list (${sums[*]})"
  tmp=$(mktemp "$keep/.$name.XXXXXX")
  cat "${first%.aa}".a? > "$tmp"
  got=$(sha256sum "$tmp" | awk '{print $1}')
  if [[ "$got" != "$want" ]]; then
    rm -f "$tmp"
    die "$name: sha256 $got, expected $want: a part is missing or corrupt; nothing kept"
  fi
  xz -9 -T2 -c "$tmp" > "$tmp.xz" && rm -f "$tmp"
  mv "$tmp.xz" "$keep/$name.xz"
  { [[ -f "$keep/SHA256SUMS" ]] && awk -v n="$name" '$2 != n' "$keep/SHA256SUMS"
    echo "$want  $name"; } > "$keep/.SHA256SUMS.new"
  mv "$keep/.SHA256SUMS.new" "$keep/SHA256SUMS"
  echo "kept $keep/$name.xz ($(stat -c %s "$keep/$name.xz") bytes; $name: sha256 ${want:0:12}...); commit it"
done
