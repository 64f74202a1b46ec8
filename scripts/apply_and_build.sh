#!/usr/bin/env bash
# Usage: scripts/apply_and_build.sh [--target cpu|cuda] [--force]
#
# The main job: a patched vLLM usable from .venv, from nothing.
#   1. scripts/sync.sh    materialize the pinned upstream in vllm/
#   2. scripts/apply.sh   apply patches/series onto it
#   3. scripts/build.sh   python-only build with the target's precompiled kernels
# Then: `source .venv/bin/activate` and use vllm as usual.
#
#   --target cpu|cuda   build target (default cpu); cuda builds here without a GPU
#                       (python3.12, CUDA torch: see vllm.lock.toml); switching the
#                       target rebuilds .venv
#   --force             let apply.sh drop un-exported commits in vllm/
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
apply_args=() target=cpu
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target=${2:-}; shift 2 || die "--target needs a value (cpu|cuda)" ;;
    --target=*) target=${1#*=}; shift ;;
    --force) apply_args+=(--force); shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$target" == cpu || "$target" == cuda ]] || die "--target must be cpu or cuda, not '$target'"
# A venv that sync.sh makes (to read the registry sdist) is made for this target.
export DSL_BUILD_TARGET=$target
start=$SECONDS
step() { log "($(( SECONDS - start ))s) $*"; }
step "sync"
"$ROOT/scripts/sync.sh"
step "apply"
"$ROOT/scripts/apply.sh" "${apply_args[@]}"
step "build"
"$ROOT/scripts/build.sh" --target "$target"
step "done: patched vLLM in $VENV_DIR (source $VENV_DIR/bin/activate)"
