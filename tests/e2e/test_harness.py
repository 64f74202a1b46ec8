"""Unit tests of the e2e harness library (no engine: these are not marked e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import harness
import pytest


@pytest.fixture
def fake_fixtures(tmp_path: Path) -> harness.Fixtures:
    """A fixtures directory with a manifest, no weights, and small prompt files."""
    (tmp_path / "prompts").mkdir()
    prompts = {}
    for source, lengths in (("sharegpt", [10, 900, 20, 30]), ("humaneval", [5, 6])):
        rel = f"prompts/{source}-test.jsonl"
        with (tmp_path / rel).open("w") as f:
            for i, n in enumerate(lengths):
                f.write(json.dumps({"id": f"{source}{i}", "source": source, "text": "t",
                                    "prompt_token_ids": [1] * n,
                                    "num_prompt_tokens": n}) + "\n")
        prompts[f"{source}-test"] = rel
    manifest = {"models": {"target": "models/t", "draft_l4": "models/t-l4",
                           "draft_l20": "models/t-l20"}, "prompts": prompts}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return harness.Fixtures.load(tmp_path)


def test_missing_fixtures_say_how_to_build_them(tmp_path):
    with pytest.raises(harness.FixturesMissing, match="scripts/fixtures.sh"):
        harness.Fixtures.load(tmp_path / "nowhere")


def test_select_prompts_alternates_sources_and_skips_long_ones(fake_fixtures):
    got = fake_fixtures.select_prompts(5, max_prompt_tokens=100)
    assert [p["id"] for p in got] == ["sharegpt0", "humaneval0", "sharegpt2", "humaneval1",
                                      "sharegpt3"]
    with pytest.raises(harness.FixturesMissing, match="only 5 prompts"):
        fake_fixtures.select_prompts(6, max_prompt_tokens=100)


def test_speculative_configs(fake_fixtures):
    assert harness.BASELINE.speculative_config(fake_fixtures) is None
    cfg = harness.SELF_DRAFT.speculative_config(fake_fixtures)
    assert cfg == {"method": "draft_model", "num_speculative_tokens": 4,
                   "model": str(fake_fixtures.root / "models/t")}
    assert harness.NGRAM.speculative_config(fake_fixtures)["prompt_lookup_max"] == 3
    dsl = harness.dsl_case(0.6, 5).speculative_config(fake_fixtures)
    assert dsl[harness.DSL_FIELD] == 0.6 and dsl["num_speculative_tokens"] == 5
    assert dsl["model"].endswith("models/t-l20")
    with pytest.raises(harness.FixturesMissing, match="no model 'draft_l7'"):
        harness.Case("x", "draft_model", "draft_l7").speculative_config(fake_fixtures)
    kw = harness.engine_kwargs(harness.DRAFT_L4, fake_fixtures)
    assert kw["per_request_spec_decode_metrics"] == "detailed"
    assert kw["enforce_eager"] and kw["dtype"] == "float32"
    assert "speculative_config" not in harness.engine_kwargs(harness.BASELINE, fake_fixtures)


def test_dsl_grid():
    diag = harness.dsl_cases()
    assert [(c.tau, c.k) for c in diag] == [(0.3, 2), (0.6, 5), (0.9, 8)]
    full = harness.dsl_cases(full=True)
    assert len(full) == 9 and len({c.name for c in full}) == 9
    assert all(c.is_dsl and c.draft == "draft_l20" for c in full)


def _result(case, tokens, counters=None, per_request=None):
    return harness.CaseResult(case, tokens, 1.0, 2.0, counters or {}, per_request or [])


def test_compare_reports_the_first_differing_token():
    base = _result(harness.BASELINE, [[1, 2, 3], [4, 5]])
    assert harness.compare(base, _result(harness.NGRAM, [[1, 2, 3], [4, 5]])) == []
    diffs = harness.compare(base, _result(harness.NGRAM, [[1, 9, 3], [4, 5, 6]]))
    assert diffs == ["request 0: first difference at token 1 (lengths 3 vs 3)",
                     "request 1: first difference at token 2 (lengths 2 vs 3)"]


def test_counter_deltas_rates_and_short_drafts():
    p = harness.SPEC_PREFIX
    before = {p + "num_drafts": 2, p + "num_accepted_tokens_per_pos": [1, 0]}
    after = {p + "num_drafts": 12, p + "num_draft_tokens": 40, p + "num_accepted_tokens": 10,
             p + "num_accepted_tokens_per_pos": [6, 3, 1, 0], p + "num_early_exits": 3}
    delta = harness._delta(before, after)
    assert delta[p + "num_drafts"] == 10
    assert delta[p + "num_accepted_tokens_per_pos"] == [5, 3, 1, 0]
    per_request = [{"per_step_drafted": [4, 2, 4, 1]}, None]
    r = _result(harness.DRAFT_L4, [[1], [2]], delta, per_request)
    assert r.acceptance_rate == 0.25 and r.mean_acceptance_length == 2.0
    assert r.early_exits() == 3
    assert harness.short_drafts(r) == [2, None]
    assert _result(harness.BASELINE, [[1]]).acceptance_rate is None
    table = harness.format_table([_result(harness.BASELINE, [[1], [2]]), r])
    assert "draft_l4_k3" in table and "25" in table


def test_table_marks_a_case_without_counters_instead_of_zeros():
    """A speculative case whose engine reported no spec-decode counters is marked;
    the baseline says it drafts nothing (neither prints 0 drafts)."""
    base = _result(harness.BASELINE, [[1], [2]])
    missing = _result(harness.DRAFT_L4, [[1], [2]])
    rows = harness.format_table([base, missing]).splitlines()[2:]
    assert "target only: no drafts" in rows[0] and " 0 " not in rows[0][40:]
    assert "NO spec-decode counters" in rows[1] and " 0 " not in rows[1][40:]


def test_configure_env_keeps_values_already_set(monkeypatch):
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "3")
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    harness.configure_env()
    import os

    assert os.environ["VLLM_CPU_KVCACHE_SPACE"] == "3"
    assert os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"


def test_cases_that_import_numba_run_last():
    cases = [harness.NGRAM, harness.DRAFT_L4, *harness.dsl_cases(), harness.SELF_DRAFT]
    ordered = harness.in_run_order(cases)
    assert ordered[-1] is harness.NGRAM
    assert ordered[:-1] == [c for c in cases if c is not harness.NGRAM]


class _M:
    def __init__(self, name, value=None, labels=None, values=None):
        self.name, self.labels = name, labels or {}
        if values is not None:
            self.values = values
        else:
            self.value = value


def test_metric_snapshot_reads_vectors_and_per_position_counters():
    p = harness.SPEC_PREFIX

    class FakeLLM:
        def get_metrics(self):
            return [_M(p + "num_drafts", 5), _M("vllm:other", 3),
                    _M(p + "num_accepted_tokens_per_pos", values=[4, 2]),
                    _M(p + "num_drafted_tokens_per_pos", 7, {"position": "1"}),
                    _M(p + "num_drafted_tokens_per_pos", 9, {"position": "0"}),
                    _M(p + "num_drafted_tokens_per_pos", 1, {"position": "3"})]

    snap = harness._metric_snapshot(FakeLLM())
    assert snap == {p + "num_drafts": 5, p + "num_accepted_tokens_per_pos": [4, 2],
                    p + "num_drafted_tokens_per_pos": [9, 7, 0, 1]}
