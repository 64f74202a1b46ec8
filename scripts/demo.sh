#!/usr/bin/env bash
# Usage: scripts/demo.sh [--draft draft_l20|draft_l4|target] [--k K] [--tau TAU]
#                        [--num-prompts N] [--max-tokens N] [--check]
#
# About a minute on CPU: builds the fixtures if needed (scripts/fixtures.sh), then
# runs vLLM in-process on the bundled pair, the SmolLM2-135M target and its 20-layer
# truncation as draft, with dynamic speculation lookahead (draft_confidence_threshold
# TAU, default 0.6, K=5) when the patched vLLM has it, else plain speculative
# decoding (it says so). Prints per request the drafted/accepted counts and the
# steps that drafted fewer than K tokens (early exits), then the engine's totals.
#
#   --check   also run the target alone and check that the tokens are identical
#
# Env: FIXTURES_DIR, VENV_DIR, DSL_CACHE.
source "$(dirname "$0")/lib/common.sh"
handle_help "$@"
PY="$VENV_DIR/bin/python"
[[ -x "$PY" ]] || die "no build venv at $VENV_DIR: run scripts/apply_and_build.sh first"
FIXTURES_DIR=${FIXTURES_DIR:-$DSL_CACHE/fixtures}
export FIXTURES_DIR
if [[ ! -f "$FIXTURES_DIR/manifest.json" ]]; then
  log "building the fixtures (once, about 2 minutes)"
  "$ROOT/scripts/fixtures.sh"
fi
log "demo: target + draft on CPU"
cd "$ROOT"
# vLLM's own INFO logs would drown the report.
VLLM_LOGGING_LEVEL=${VLLM_LOGGING_LEVEL:-WARNING} exec "$PY" "$ROOT/tests/e2e/demo.py" "$@"
