"""``benchmarks/calibration.py`` on the tiny fixture models (CPU, fp32): a few
short prompts, a few tokens; the table must be consistent with itself and the
batching (left padding) must not change what is measured. The tests on the
fixture models are marked e2e (they need the fixtures and take most of a
minute: fastcheck runs them with the end-to-end tests, after building them)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import calibration  # noqa: E402
import harness  # noqa: E402

NUM_PROMPTS, MAX_TOKENS = 3, 6


@pytest.fixture(scope="module")
def fixture_models(tmp_path_factory):
    """target, draft_l20 and a prompt folder with a few short tune-split prompts
    of different lengths (so a batch is padded)."""
    try:
        fx = harness.Fixtures.load()
        target, draft = fx.model("target"), fx.model("draft_l20")
    except harness.FixturesMissing as e:
        pytest.skip(str(e))
    rows = [r for r in fx.prompts("sharegpt", "tune") if r["num_prompt_tokens"] <= 48]
    lengths = sorted({r["num_prompt_tokens"] for r in rows})
    assert len(lengths) >= NUM_PROMPTS
    picked = [next(r for r in rows if r["num_prompt_tokens"] == n)
              for n in lengths[:NUM_PROMPTS]]
    prompts = tmp_path_factory.mktemp("prompts")
    (prompts / "sharegpt-tune.jsonl").write_text(
        "".join(json.dumps({"prompt_token_ids": r["prompt_token_ids"]}) + "\n"
                for r in picked))
    return target, draft, prompts


@pytest.mark.e2e
def test_the_table_is_consistent(fixture_models, tmp_path):
    target, draft, prompts = fixture_models
    out = tmp_path / "calibration.json"
    res = subprocess.run(
        [sys.executable, str(BENCH / "calibration.py"), "--target", target,
         "--draft", draft, "--prompts", str(prompts), "--num-prompts", str(NUM_PROMPTS),
         "--max-tokens", str(MAX_TOKENS), "--batch-size", "2", "--device", "cpu",
         "--out", str(out), "--trace", str(tmp_path / "trace.json.gz")],
        capture_output=True, text=True, timeout=600,
        env={**__import__("os").environ, "HF_HUB_OFFLINE": "1",
             "TRANSFORMERS_OFFLINE": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    data = json.loads(out.read_text())
    assert data["dtype"] == "float32" and data["num_prompts"] == NUM_PROMPTS
    n = NUM_PROMPTS * MAX_TOKENS
    bins = data["bins"]
    assert len(bins) == 10 and data["num_positions"] == n
    assert sum(b["count"] for b in bins) == n
    for b in bins:
        if b["count"]:
            assert b["lo"] <= b["mean_p"] <= b["hi"]
            assert 0 <= b["accept_rate"] <= 1
            assert b["accepted"] == pytest.approx(b["accept_rate"] * b["count"])
        else:
            assert b["mean_p"] is None and b["accept_rate"] is None
    for key in ("accept_rate", "accept_rate_first_token", "mean_confidence", "ece", "brier"):
        assert 0 <= data[key] <= 1, key
    assert data["accept_rate"] == pytest.approx(sum(b["accepted"] for b in bins) / n)
    assert data["mean_confidence"] == pytest.approx(
        sum(b["mean_p"] * b["count"] for b in bins if b["count"]) / n)
    assert data["ece"] == pytest.approx(sum(
        b["count"] / n * abs(b["accept_rate"] - b["mean_p"]) for b in bins if b["count"]))
    assert "ECE" in res.stdout and "[0.90,1.00)" in res.stdout
    # The trace holds the same positions, prompt by prompt.
    import gzip

    with gzip.open(tmp_path / "trace.json.gz", "rt") as f:
        trace = json.load(f)
    assert len(trace["rows"]) == NUM_PROMPTS and trace["dataset"] == "sharegpt-tune"
    assert all(len(r["p"]) == len(r["accepted"]) == MAX_TOKENS for r in trace["rows"])
    assert sum(sum(r["accepted"]) for r in trace["rows"]) == sum(b["accepted"] for b in bins)


@pytest.mark.e2e
def test_batching_does_not_change_the_measurement(fixture_models):
    import torch
    from transformers import AutoModelForCausalLM

    target, draft, prompts = fixture_models
    ps = calibration.load_prompts(prompts, "sharegpt-tune", 1024)
    t, d = (AutoModelForCausalLM.from_pretrained(m, dtype=torch.float32).eval()
            for m in (target, draft))
    one = calibration.measure(t, d, ps, MAX_TOKENS, 1, 0, "cpu")
    padded = calibration.measure(t, d, ps, MAX_TOKENS, NUM_PROMPTS, 0, "cpu")
    assert one[1] == padded[1] and one[2] == padded[2]
    assert one[0] == pytest.approx(padded[0], abs=1e-4)
    # The target's own greedy continuation, checked against HF's generate.
    ids = torch.tensor([ps[0]])
    ref = t.generate(ids, max_new_tokens=MAX_TOKENS, do_sample=False,
                     min_new_tokens=0)[0, len(ps[0]):]
    mine = calibration.greedy(t, ids, torch.ones_like(ids),
                              torch.arange(len(ps[0]))[None], MAX_TOKENS)[0]
    assert mine.tolist()[:len(ref)] == ref.tolist()


def test_reliability_bins_and_ece():
    ps = [0.05, 0.15, 0.95, 0.99, 1.0]
    acc = [0, 0, 1, 1, 0]
    ts = [0, 1, 0, 1, 2]
    r = calibration.reliability(ps, acc, ts, 10)
    assert [b["count"] for b in r["bins"]] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 3]
    top = r["bins"][-1]
    assert top["mean_p"] == pytest.approx((0.95 + 0.99 + 1.0) / 3)
    assert top["accept_rate"] == pytest.approx(2 / 3)
    assert r["ece"] == pytest.approx(
        0.2 * 0.05 + 0.2 * 0.15 + 0.6 * abs(2 / 3 - (0.95 + 0.99 + 1.0) / 3))
    assert r["accept_rate"] == pytest.approx(0.4)
    assert r["accept_rate_first_token"] == pytest.approx(0.5)


def test_a_batch_with_non_finite_logits_is_rerun_one_prompt_at_a_time(monkeypatch, capsys):
    t, d = _tiny_pair(seed=0)
    prompts = [[1, 2, 3], [4, 5, 6, 7, 8], [9, 10]]
    clean = calibration.measure(t, d, prompts, 4, 1, 0, "cpu")
    real = calibration.position_logits

    def nan_when_padded(model, ids, mask, pos, num):
        out = real(model, ids, mask, pos, num)
        return out * float("nan") if ids.shape[0] > 1 else out

    monkeypatch.setattr(calibration, "position_logits", nan_when_padded)
    again = calibration.measure(t, d, prompts, 4, 3, 0, "cpu")
    assert again[1:] == clean[1:] and again[0] == pytest.approx(clean[0])
    assert "one at a time" in capsys.readouterr().err


def _tiny_pair(seed: int):
    """Two small random Llama models (target, draft) over a 64-token vocabulary."""
    import torch
    import transformers

    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return tuple(transformers.LlamaForCausalLM(cfg).eval() for _ in range(2))


def test_the_trace_rows_are_each_prompts_positions_in_order(tmp_path):
    """``measure_rows`` per prompt, against the two models' own logits over
    prompt + the target's continuation (no padding, no calibration code), and
    the trace file ``--trace`` writes from them."""
    import gzip

    import torch

    t, d = _tiny_pair(seed=1)
    prompts = [[1, 2, 3, 4, 5], [9, 10], [4, 5, 6]]
    num = 5
    rows = calibration.measure_rows(t, d, prompts, num, 2, 0, "cpu")
    assert len(rows) == len(prompts)
    for prompt, row in zip(prompts, rows):
        seq = list(prompt)
        with torch.no_grad():
            for _ in range(num):  # the target's greedy continuation
                seq.append(int(t(torch.tensor([seq])).logits[0, -1].argmax()))
            ids = torch.tensor([seq])
            t_logits = t(ids).logits[0, len(prompt) - 1:-1].float()
            d_logits = d(ids).logits[0, len(prompt) - 1:-1].float()
        probs = d_logits.softmax(-1)
        top = probs.topk(2, dim=-1)
        assert row["p"] == pytest.approx(top.values[:, 0].tolist(), abs=1e-5)
        assert row["p2"] == pytest.approx(top.values[:, 1].tolist(), abs=1e-5)
        entropy = -(probs * probs.log()).sum(-1)
        assert row["entropy"] == pytest.approx(entropy.tolist(), abs=1e-4)
        assert row["accepted"] == (
            top.indices[:, 0] == t_logits.argmax(-1)).int().tolist()
    # measure() is the same positions, flattened prompt by prompt.
    ps, acc, ts = calibration.measure(t, d, prompts, num, 2, 0, "cpu")
    assert ps == pytest.approx([p for r in rows for p in r["p"]])
    assert acc == [a for r in rows for a in r["accepted"]]
    assert ts == list(range(num)) * len(prompts)

    path = tmp_path / "trace.json.gz"
    calibration.write_trace(path, {"draft": "d", "max_tokens": num}, rows)
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    assert data["draft"] == "d" and data["max_tokens"] == num
    assert [r["prompt"] for r in data["rows"]] == [0, 1, 2]
    for got, want in zip(data["rows"], rows):
        assert got["accepted"] == want["accepted"]
        for key in ("p", "p2", "entropy"):
            assert got[key] == pytest.approx(want[key], abs=1e-5)
