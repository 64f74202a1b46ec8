"""DSL with EAGLE / EAGLE3 drafting on CPU: greedy token-identical to target-only.

The heads are built from the fixture target by scripts/gpu-host/build_eagle.py
(STEPS=0: the initialisation from the target, no training; seconds), in the
checkpoint formats vLLM's Llama EAGLE and EAGLE3 drafters load, with the target's
embedding and lm_head shared. The untrained heads draft mostly a repeat of the
last token, rarely accepted, with the target's confidence in it: a high
threshold makes DSL exit on part of the drafts (steps drafting fewer than K).
One engine per method (the target-only baseline is the session's, shared with
test_spec_equivalence.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import harness
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

BUILDER = Path(__file__).resolve().parents[2] / "scripts" / "gpu-host" / "build_eagle.py"
TAU, K = 0.9, 3


@pytest.fixture(scope="session")
def eagle_heads(fixtures, tmp_path_factory) -> Path:
    """A GPU_HOST_ROOT-like folder: models/smollm2-135m (the fixture target) and
    the heads build_eagle.py writes next to it."""
    root = tmp_path_factory.mktemp("eagle-root")
    (root / "models").mkdir()
    (root / "models" / "smollm2-135m").symlink_to(fixtures.model("target"))
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "STEPS": "0",
           "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, str(BUILDER)], env=env, check=True, timeout=300)
    return root / "models"


@pytest.mark.parametrize("method", ["eagle", "eagle3"])
def test_eagle_dsl_greedy_equivalence(method, eagle_heads, fixtures, prompts,
                                      max_tokens, baseline, e2e_results):
    if not harness.dsl_supported():
        pytest.skip(f"vllm's SpeculativeConfig has no {harness.DSL_FIELD} field")
    path = str(eagle_heads / f"smollm2-{method}")
    case = harness.Case(f"{method}_dsl_t{TAU}_k{K}", method, None, K, TAU,
                        options=(("model", path),))
    result = harness.run_case(case, fixtures, prompts, max_tokens)
    e2e_results.append(result)
    diffs = harness.compare(baseline, result)
    assert not diffs, f"{case.name} differs from target-only:\n" + "\n".join(diffs)
    drafts, drafted = result.counter("num_drafts"), result.counter("num_draft_tokens")
    assert drafts > 0 and result.counter("num_accepted_tokens") <= drafted <= K * drafts
    # Exits: steps that drafted fewer than K tokens. The engine's exit counter
    # stays 0 on the V1 sync path CPU runs (see test_spec_equivalence.py).
    short = sum(n or 0 for n in harness.short_drafts(result))
    assert drafted < K * drafts and short > 0, f"{case.name}: no early exit"
