"""``benchmarks/acceptance_head.py``: ``fit`` on synthetic positions whose
acceptance a hidden direction decides and ``p`` does not (the head must find
it, its tune predictions must be out of fold, the written traces must keep
every position's label), and ``collect`` on the tiny fixture models (e2e:
the trace must be what ``calibration.py`` measures for the same prompts)."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import acceptance_head  # noqa: E402
import harness  # noqa: E402
import trace_stop_sim  # noqa: E402

DIM = 8


def synthetic_rows(num_prompts: int, length: int, seed: int) -> list[dict]:
    """Positions whose acceptance is decided by the sign of the hidden
    state's first coordinate (with 5% flipped), while ``p`` is noise."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(num_prompts):
        hidden = torch.randn(length, DIM, generator=g)
        accepted = (hidden[:, 0] > 0).int()
        flip = torch.rand(length, generator=g) < 0.05
        accepted = torch.where(flip, 1 - accepted, accepted)
        p = torch.rand(length, generator=g) * 0.8 + 0.1
        rows.append({"p": p.tolist(), "p2": (p * 0.3).tolist(),
                     "entropy": (1 - p).tolist(), "accepted": accepted.tolist(),
                     "hidden": hidden.to(torch.float16)})
    return rows


def save(path: Path, rows: list[dict]) -> None:
    torch.save({"header": {"target": "t", "draft": "d", "max_tokens": len(rows[0]["p"])},
                "rows": rows}, path)


def test_fit_finds_the_hidden_direction_and_keeps_every_label(tmp_path):
    tune, test = synthetic_rows(20, 30, 1), synthetic_rows(10, 30, 2)
    save(tmp_path / "tune.pt", tune)
    save(tmp_path / "test.pt", test)
    out = tmp_path / "fit"
    assert acceptance_head.main(["fit", "--tune", str(tmp_path / "tune.pt"), "--test",
                                 str(tmp_path / "test.pt"), "--out-dir", str(out),
                                 "--folds", "4"]) == 0
    res = json.loads((out / "head.json").read_text())
    # p is noise: its Brier score is ~0.25 or worse; the head's is that of 5% noise.
    assert res["test"]["raw_p"]["brier"] > 0.2
    assert res["test"]["head"]["brier"] < 0.1
    assert res["tune_out_of_fold"]["head"]["brier"] < 0.1
    assert res["tune_positions"] == 600 and res["test_positions"] == 300
    for name, rows in (("tune", tune), ("test", test)):
        written = trace_stop_sim.load_trace(out / f"head-{name}.json.gz")
        assert [r["accepted"] for r in written] == [r["accepted"] for r in rows]
        assert [r["p2"] for r in written] == [
            [round(v, 5) for v in r["p2"]] for r in rows]
        for w, r in zip(written, rows):
            # The head's value replaces p, and it follows the hidden sign.
            assert all(0 < q < 1 for q in w["p"])
            agree = sum((q > 0.5) == (h > 0) for q, h in zip(w["p"], r["hidden"][:, 0]))
            assert agree >= 0.85 * len(w["p"])


def test_without_the_hidden_state_nothing_is_found(tmp_path):
    """--no-hidden fits on the confidence's features alone (noise here), and
    --pca keeping every direction finds what the full state does."""
    save(tmp_path / "tune.pt", synthetic_rows(20, 30, 1))
    save(tmp_path / "test.pt", synthetic_rows(10, 30, 2))
    base = ["fit", "--tune", str(tmp_path / "tune.pt"), "--test", str(tmp_path / "test.pt"),
            "--folds", "4"]
    acceptance_head.main([*base, "--out-dir", str(tmp_path / "p"), "--no-hidden"])
    acceptance_head.main([*base, "--out-dir", str(tmp_path / "pca"), "--pca", str(DIM)])
    p = json.loads((tmp_path / "p" / "head.json").read_text())
    pca = json.loads((tmp_path / "pca" / "head.json").read_text())
    assert p["features"] == "p" and p["test"]["head"]["brier"] > 0.2
    assert pca["features"] == f"hidden[pca {DIM}]+p" and pca["test"]["head"]["brier"] < 0.1


def test_tune_predictions_are_out_of_fold(tmp_path):
    """With acceptance pure noise, in-sample predictions of a 11-feature model
    would beat the base rate on tune; out-of-fold ones must not."""
    rows = synthetic_rows(16, 20, 3)
    g = torch.Generator().manual_seed(4)
    for r in rows:
        r["accepted"] = (torch.rand(20, generator=g) < 0.5).int().tolist()
    save(tmp_path / "tune.pt", rows)
    save(tmp_path / "test.pt", synthetic_rows(4, 20, 5))
    out = tmp_path / "fit"
    acceptance_head.main(["fit", "--tune", str(tmp_path / "tune.pt"), "--test",
                          str(tmp_path / "test.pt"), "--out-dir", str(out), "--folds", "4",
                          "--l2", "1e-4"])
    res = json.loads((out / "head.json").read_text())
    assert res["tune_out_of_fold"]["head"]["brier"] >= 0.245


def test_bad_arguments_name_the_flag(tmp_path):
    with pytest.raises(SystemExit, match="--folds"):
        acceptance_head.main(["fit", "--tune", "a", "--test", "b", "--out-dir",
                              str(tmp_path), "--folds", "1"])
    with pytest.raises(SystemExit, match="--pca"):
        acceptance_head.main(["fit", "--tune", "a", "--test", "b", "--out-dir",
                              str(tmp_path), "--pca", "-1"])
    with pytest.raises(SystemExit, match="--num-prompts"):
        acceptance_head.main(["collect", "--target", "t", "--draft", "d", "--prompts",
                              str(tmp_path), "--num-prompts", "0", "--out", "x.pt",
                              "--trace", "x.json.gz"])


@pytest.mark.e2e
def test_collect_matches_calibration(tmp_path):
    """On the fixture pair, collect's trace is calibration.py's for the same
    prompts, and each position has the draft's hidden state."""
    try:
        fx = harness.Fixtures.load()
        target, draft = fx.model("target"), fx.model("draft_l20")
    except harness.FixturesMissing as e:
        pytest.skip(str(e))
    rows = [r for r in fx.prompts("sharegpt", "tune") if r["num_prompt_tokens"] <= 48][:2]
    (tmp_path / "sharegpt-tune.jsonl").write_text(
        "".join(json.dumps({"prompt_token_ids": r["prompt_token_ids"]}) + "\n"
                for r in rows))
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    common = ["--target", target, "--draft", draft, "--prompts", str(tmp_path),
              "--num-prompts", "2", "--max-tokens", "5", "--batch-size", "2"]
    res = subprocess.run([sys.executable, str(BENCH / "acceptance_head.py"), "collect",
                          *common, "--max-prompt-tokens", "1024",
                          "--out", str(tmp_path / "a.pt"),
                          "--trace", str(tmp_path / "a.json.gz")],
                         capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    ref = subprocess.run([sys.executable, str(BENCH / "calibration.py"), *common,
                          "--device", "cpu", "--out", str(tmp_path / "c.json"),
                          "--trace", str(tmp_path / "c.json.gz")],
                         capture_output=True, text=True, timeout=600, env=env)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    with gzip.open(tmp_path / "a.json.gz", "rt") as f:
        mine = json.load(f)["rows"]
    with gzip.open(tmp_path / "c.json.gz", "rt") as f:
        theirs = json.load(f)["rows"]
    assert [r["accepted"] for r in mine] == [r["accepted"] for r in theirs]
    for m, t in zip(mine, theirs):
        assert m["p"] == pytest.approx(t["p"], abs=1e-4)
    saved = torch.load(tmp_path / "a.pt", weights_only=False)["rows"]
    hidden_size = json.loads((Path(draft) / "config.json").read_text())["hidden_size"]
    assert [tuple(r["hidden"].shape) for r in saved] == [(5, hidden_size)] * 2
