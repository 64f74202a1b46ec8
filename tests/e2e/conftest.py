"""Shared fixtures of the CPU end-to-end tests: fixture models, prompts, the baseline.

Env:
  DSL_E2E_PROMPTS      prompts per case (default 16: 8 ShareGPT + 8 HumanEval, test split)
  DSL_E2E_MAX_TOKENS   tokens generated per prompt (default 64)
  DSL_E2E_FULL=1       the full DSL grid (tau x K, 9 engines) instead of its diagonal
  FIXTURES_DIR         where scripts/fixtures.sh built the fixtures
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

RESULTS: list[harness.CaseResult] = []


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@pytest.fixture(scope="session")
def fixtures() -> harness.Fixtures:
    """The built fixtures; the e2e tests skip when there are none (and so fail under
    scripts/fastcheck.sh, which builds them first: tests/conftest.py, DSL_NO_SKIP)."""
    try:
        return harness.Fixtures.load()
    except harness.FixturesMissing as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def prompts(fixtures) -> list[dict]:
    """The prompt set every case runs (deterministic)."""
    return fixtures.select_prompts(_env_int("DSL_E2E_PROMPTS", 16))


@pytest.fixture(scope="session")
def max_tokens() -> int:
    """Tokens generated per prompt."""
    return _env_int("DSL_E2E_MAX_TOKENS", 64)


@pytest.fixture(scope="session")
def e2e_results() -> list[harness.CaseResult]:
    """Where the tests put their results, for the summary table."""
    return RESULTS


@pytest.fixture(scope="session")
def baseline(fixtures, prompts, max_tokens) -> harness.CaseResult:
    """The target-only run, once per session; every case compares against it."""
    result = harness.run_case(harness.BASELINE, fixtures, prompts, max_tokens)
    RESULTS.insert(0, result)
    return result


def pytest_terminal_summary(terminalreporter):
    """Print the table of every case that ran (timings and spec-decode counters)."""
    if not RESULTS:
        return
    base = RESULTS[0] if RESULTS[0].case is harness.BASELINE else None
    terminalreporter.write_sep("-", "e2e spec-decode cases (delta of the engine's counters)")
    terminalreporter.write_line(harness.format_table(RESULTS, base))
