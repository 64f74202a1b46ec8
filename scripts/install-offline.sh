#!/usr/bin/env bash
# Usage: scripts/install-offline.sh [--root DIR] [stage] CHUNK_DIR... [--reapply]
#        scripts/install-offline.sh [--root DIR] status|env|check
#
# Runs on the offline GPU host (bash and python3's standard library; pip for the wheels).
# Stages chunk folders written by scripts/pack-offline.sh into ROOT, one transfer at a
# time and in any order. A chunk is verified completely (SHA256SUMS, manifest) before
# anything is staged from it. Once all parts of a logical file are staged, it is
# reassembled, checked against the manifest's sha256 and applied:
#   wheels          pip install --no-index --no-deps --target ROOT/site (all at once)
#   vllm package    ROOT/vsrc/vllm, plus ROOT/vsrc/vllm-<version>.dist-info
#   kernels         ROOT/kernels, linked into ROOT/vsrc/vllm (kept across code bundles)
#   model, data     ROOT/models
# Re-staging a chunk is a no-op; files already applied from a bundle are not applied
# again (--reapply forces it, e.g. to go back to an older code bundle).
#
#   stage   (default) stage CHUNK_DIR..., then write ROOT/env.sh and report what is missing
#   status  bundles seen, what is complete, which chunks are still missing
#   env     print the env file (PYTHONPATH, PATH, VLLM_USE_FLASHINFER_SAMPLER=0, ...)
#   check   import the staged vllm, its dist-info version and its kernels
#
#   --root DIR   staging root (default: $GPU_HOST_ROOT, else /tmp/gpuhost)
#
# Then: source ROOT/env.sh (or eval "$(scripts/install-offline.sh env)").
# Env: GPU_HOST_ROOT, PYTHON (default python3).
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
root=${GPU_HOST_ROOT:-/tmp/gpuhost} verb="" rest=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root=${2:-}; shift 2 || die "--root needs a value" ;;
    --root=*) root=${1#*=}; shift ;;
    stage|status|env|check) [[ -z "$verb" ]] || die "two commands: $verb and $1"; verb=$1; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
verb=${verb:-stage}
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || die "$PY not found"
OB="$ROOT/scripts/lib/offline_bundle.py"
case "$verb" in
  stage)
    [[ ${#rest[@]} -gt 0 ]] || die "name the chunk folder(s) to stage, e.g. .gpu-bundles/b1 (see --help)"
    exec "$PY" "$OB" stage "$root" "${rest[@]}" ;;
  *)
    [[ ${#rest[@]} -eq 0 ]] || die "unexpected arguments for $verb: ${rest[*]}"
    exec "$PY" "$OB" "$verb" "$root" ;;
esac
