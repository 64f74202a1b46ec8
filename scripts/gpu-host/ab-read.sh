#!/usr/bin/env bash
# Usage: bash scripts/gpu-host/ab-read.sh DEST A_TGZ RUN_TGZ [options] | --help
#
# Here, after a device session: reads a plan's A/B into DEST (a new
# benchmarks/results/<date>-<gpu>-<session> folder). From A_TGZ (the first
# long command's tarball of the plan's folder) it copies the files named by
# --copy; RUN_TGZ (scripts/gpu-host/ab-collect.sh's tarball of the A/B) is
# unpacked as NAME-*.gz (unpack_ab_run), and then, from it:
#   full-steps.txt      benchmarks/full_steps.py against BASE at each
#                       concurrency the run reached, in the run's order
#   full-steps-mix.txt  full_steps.py --mix: each arm's full steps by width
#                       placed and draft steps run
#   host-timer.txt      benchmarks/host_timer_table.py, BASE against each DSL arm
#   served-widths.txt   benchmarks/served_widths.py, each DSL arm (cap from its
#                       name: dslN serves at most N)
#   verdict-NAME-dslN.json/.txt  benchmarks/verdict.py --label LABEL per DSL arm
#                       (the best SD K of this run at each c, with target-only
#                       where it ran)
# A second run read into the same DEST (one that already holds another run's
# NAME-abab.json.gz) leaves the first's files as they are: its own tables and
# copies get the run's name before their extension (full-steps-NAME.txt,
# ab-plan-NAME.txt, ...). Either tarball may be "-" when it did not come back.
# A reader that finds nothing for an arm (it never ran) writes what the tool
# said and goes on; the README of DEST is the reader's.
#
# Options:
#   --run NAME      the A/B's name (its files' prefix; required)
#   --plan DIR      the folder's name inside A_TGZ (default: NAME less a
#                   trailing 'p', e.g. s57p -> s57)
#   --copy FILES    comma-separated files of A_TGZ to copy (default
#                   host.txt,ab-plan.txt)
#   --base ARM      the arm full steps and host timers compare with (default
#                   sd2+t)
#   --dsl ARMS      comma-separated DSL arms, without the label (default dsl4);
#                   dslN+L names a variant of another label (e.g. dsl4+u, read
#                   against --label's SD arms; its verdict is verdict-NAME-dslN-L)
#   --label LABEL   the arms' label suffix (default t; '' for none)
#   --pair NAME     the model pair the verdict rows name (default proxies;
#                   small for the SmolLM2-135M pair)
#   bash scripts/gpu-host/ab-read.sh benchmarks/results/2026-12-07-h200-s57 a.tgz s57p.tgz --run s57p --dsl dsl4,dsl8
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
help_or_usage "$@"
[[ $# -ge 3 ]] || { echo "ab-read.sh: DEST, A_TGZ and RUN_TGZ are needed (see --help)" >&2; exit 2; }
dest=$1 a=$2 ab=$3; shift 3
run='' plan='' copy=host.txt,ab-plan.txt base=sd2+t dsl=dsl4 label=t pair=proxies
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || { echo "ab-read.sh: $1 needs a value (see --help)" >&2; exit 2; }
  case $1 in
    --run) run=$2 ;; --plan) plan=$2 ;; --copy) copy=$2 ;;
    --base) base=$2 ;; --dsl) dsl=$2 ;; --label) label=$2 ;; --pair) pair=$2 ;;
    *) echo "ab-read.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
[[ -n "$run" ]] || { echo "ab-read.sh: --run NAME is needed (the A/B's name, e.g. s57p)" >&2; exit 2; }
check_run_name ab-read.sh "$run"
[[ "$pair" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || { echo "ab-read.sh: --pair must be a name of letters, digits, '.', '_' or '-' (e.g. small), not '$pair'" >&2; exit 2; }
plan=${plan:-${run%p}}
for x in "$a" "$ab"; do
  [[ "$x" == - || -f "$x" ]] || { echo "ab-read.sh: no tarball $x (pass - when it did not come back)" >&2; exit 2; }
done
IFS=, read -r -a dsls <<< "$dsl"
for d in "${dsls[@]}"; do
  [[ "$d" =~ ^dsl[0-9]+(\+[a-z0-9]+)?$ ]] || { echo "ab-read.sh: --dsl arm '$d' must be dslN (N its cap), or dslN+LABEL for a variant of another label" >&2; exit 2; }
done
sfx=${label:++$label}
bench=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../benchmarks" && pwd)
mkdir -p "$dest"
# Another run already read here keeps its plain-named files (see --help).
tag=
for x in "$dest"/*-abab.json.gz; do
  [[ -f "$x" && "$x" != "$dest/$run-abab.json.gz" ]] && tag=-$run
done
named() { [[ "$1" == *.* ]] && echo "${1%.*}$tag.${1##*.}" || echo "$1$tag"; }
if [[ "$a" != - ]]; then
  tmp=$(mktemp -d)
  tar xzf "$a" -C "$tmp"
  IFS=, read -r -a files <<< "$copy"
  for x in "${files[@]}"; do
    if [[ -f "$tmp/$plan/$x" ]]; then cp "$tmp/$plan/$x" "$dest/$(named "$x")"
    else echo "ab-read.sh: $x is not in $a ($plan/)" >&2; fi
  done
  rm -rf "$tmp"
fi
[[ "$ab" != - ]] || exit 0
unpack_ab_run "$ab" "$dest" "$run"
cd "$dest"
json=$run-abab.json.gz
python3 "$bench/full_steps.py" --base "$base" "$json" > "$(named full-steps.txt)" 2>&1 || true
python3 "$bench/full_steps.py" --base "$base" --mix "$json" > "$(named full-steps-mix.txt)" 2>&1 || true
arm() { [[ "$1" == *+* ]] && echo "$1" || echo "$1$sfx"; }
for d in "${dsls[@]}"; do
  python3 "$bench/host_timer_table.py" --pair "$base" "$(arm "$d")" "$json" 2>&1 || true
done > "$(named host-timer.txt)"
for d in "${dsls[@]}"; do
  cap=${d#dsl}
  python3 "$bench/served_widths.py" "$run-abab.log.gz" --cap "${cap%%+*}" --exact --arm "$(arm "$d")" 2>&1 || true
done > "$(named served-widths.txt)"
for d in "${dsls[@]}"; do
  python3 "$bench/verdict.py" ${label:+--label "$label"} --dsl-arm "$d" --out "verdict-$run-${d/+/-}.json" \
    "$pair=$json" 2>&1 | tee "verdict-$run-${d/+/-}.txt" || true
done
