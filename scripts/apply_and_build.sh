#!/usr/bin/env bash
# Usage: scripts/apply_and_build.sh [--target cpu|cuda] [--force]
#
# The main job: a patched vLLM usable from .venv, from nothing.
#   1. scripts/sync.sh    materialize the pinned upstream in vllm/
#   2. scripts/apply.sh   apply patches/series onto it
#   3. scripts/build.sh   python-only build with the target's precompiled kernels
# Then: `source .venv/bin/activate` and use vllm as usual.
#
#   --target cpu|cuda   build target (default cpu)
#   --force             let apply.sh drop un-exported commits in vllm/
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
build_args=() apply_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) build_args+=(--target "${2:-}"); shift 2 || die "--target needs a value" ;;
    --target=*) build_args+=("$1"); shift ;;
    --force) apply_args+=(--force); shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
start=$SECONDS
step() { log "($(( SECONDS - start ))s) $*"; }
step "sync"
"$ROOT/scripts/sync.sh"
step "apply"
"$ROOT/scripts/apply.sh" "${apply_args[@]}"
step "build"
"$ROOT/scripts/build.sh" "${build_args[@]}"
step "done: patched vLLM in $VENV_DIR (source $VENV_DIR/bin/activate)"
