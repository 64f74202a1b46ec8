#!/usr/bin/env bash
# Usage: scripts/pr-doc.sh [--check]
#
# Generate the upstream PR descriptions from their templates, the patches in
# patches/series and the committed GPU and benchmark results:
#   docs/upstream-pr.md  the whole series (docs/upstream-pr.template.md)
#   docs/prs/pr-N.md     PR N of patches/stack.toml (docs/prs/pr-N.template.md)
# Each is checked first: no empty section, no reference to this project outside
# <!-- --> comments, and every measured number in a template's prose traced to a
# committed file by a <!-- from PATH --> comment. A failed check names the
# template and what to fix.
#
#   --check   fail if a description is stale
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
for arg in "$@"; do
  case "$arg" in --check) ;; *) die "unknown argument '$arg' (see --help)" ;; esac
done
python3 "$ROOT/scripts/lib/pr_doc.py" "$ROOT" "$@"
