#!/usr/bin/env bash
# Usage: scripts/pr-doc.sh [--check]
#
# Generate docs/upstream-pr.md (the upstream PR description) from
# docs/upstream-pr.template.md, the patches in patches/series and the committed
# GPU and benchmark results.
#
#   --check   fail if docs/upstream-pr.md is stale
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
for arg in "$@"; do
  case "$arg" in --check) ;; *) die "unknown argument '$arg' (see --help)" ;; esac
done
python3 "$ROOT/scripts/lib/pr_doc.py" "$ROOT" "$@"
