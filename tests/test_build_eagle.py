"""Tests of scripts/gpu-host/build_eagle.py: the EAGLE / EAGLE3 heads it writes
are in the formats vLLM's Llama drafters load (every draft parameter written,
except the embedding and lm_head that vLLM shares from the target), and the
initialisation passes the target through (EAGLE: the head's output is the
target's last hidden state)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILDER = ROOT / "scripts" / "gpu-host" / "build_eagle.py"

# Builds vLLM's drafter class for each head (as the engine picks it from the
# speculative config), fills its parameters with NaN, loads the checkpoint
# through the class' load_weights, and prints what stayed NaN.
VLLM_LOAD = r"""
import json, sys
import torch
from safetensors.torch import load_file
from vllm.config import (ModelConfig, ParallelConfig, SpeculativeConfig, VllmConfig,
                         set_current_vllm_config)
from vllm.distributed import init_distributed_environment, initialize_model_parallel
from vllm.model_executor.model_loader.utils import get_model_architecture

M, port = sys.argv[1], sys.argv[2]
with set_current_vllm_config(VllmConfig()):
    init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                 distributed_init_method=f"tcp://127.0.0.1:{port}")
    initialize_model_parallel(1, 1)
out = {}
for method in ("eagle", "eagle3"):
    mc = ModelConfig(model=f"{M}/smollm2-135m", dtype="float32", max_model_len=128,
                     skip_tokenizer_init=True)
    pc = ParallelConfig()
    sc = SpeculativeConfig(method=method, model=f"{M}/smollm2-{method}",
                           num_speculative_tokens=3, target_model_config=mc,
                           target_parallel_config=pc)
    cfg = VllmConfig(model_config=mc, parallel_config=pc, speculative_config=sc)
    with set_current_vllm_config(cfg):
        cls, arch = get_model_architecture(sc.draft_model_config)
        model = cls(vllm_config=cfg)
    params = dict(model.named_parameters())
    for p in params.values():
        p.data.fill_(float("nan"))
    model.load_weights(load_file(f"{M}/smollm2-{method}/model.safetensors").items())
    out[method] = {
        "arch": arch,
        "unloaded": sorted(n for n, p in params.items() if torch.isnan(p).any()),
        "own_embed": model.has_own_embed_tokens,
        "own_lm_head": model.has_own_lm_head,
    }
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A tiny random 8-layer Llama target as models/smollm2-135m, and the heads
    build_eagle.py writes next to it (two training steps on the target's samples)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("safetensors")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=8,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        max_position_embeddings=256, tie_word_embeddings=True, bos_token_id=1,
        eos_token_id=2, pad_token_id=2)
    root = tmp_path_factory.mktemp("gpuhost")
    target = root / "models" / "smollm2-135m"
    transformers.LlamaForCausalLM(cfg).eval().save_pretrained(str(target))
    (target / "tokenizer_config.json").write_text("{}")
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "STEPS": "2",
           "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, str(BUILDER)], env=env, check=True, timeout=300)
    return root / "models"


def test_configs_name_the_vllm_drafters(built):
    eagle = json.loads((built / "smollm2-eagle" / "config.json").read_text())
    eagle3 = json.loads((built / "smollm2-eagle3" / "config.json").read_text())
    assert eagle["architectures"] == ["EagleLlamaForCausalLM"]
    assert eagle3["architectures"] == ["Eagle3LlamaForCausalLM"]
    assert eagle["num_hidden_layers"] == eagle3["num_hidden_layers"] == 1
    assert eagle3["draft_vocab_size"] == eagle3["vocab_size"] == 96
    assert eagle3["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [2, 4, 5]
    assert (built / "smollm2-eagle" / "tokenizer_config.json").exists()


def test_weights_have_the_checkpoint_names(built):
    from safetensors.torch import load_file

    eagle = load_file(str(built / "smollm2-eagle" / "model.safetensors"))
    eagle3 = load_file(str(built / "smollm2-eagle3" / "model.safetensors"))
    layer = {f"self_attn.{p}_proj.weight" for p in "qkvo"} | {
        f"mlp.{p}_proj.weight" for p in ("gate", "up", "down")
    } | {"post_attention_layernorm.weight"}
    assert set(eagle) == {"fc.weight"} | {f"layers.0.{n}" for n in layer}
    assert set(eagle3) == {"fc.weight", "norm.weight"} | {
        f"midlayer.{n}" for n in layer | {"input_layernorm.weight", "hidden_norm.weight"}
    }
    assert eagle["fc.weight"].shape == (64, 128)
    assert eagle3["fc.weight"].shape == (64, 3 * 64)
    assert eagle3["midlayer.self_attn.q_proj.weight"].shape == (64, 128)


def test_eagle_init_passes_the_target_hidden_state_through(monkeypatch):
    """Before training the EAGLE head's output is its hidden input (fc = [0 | I],
    the layer's output projections zero); EAGLE3's fc selects the last aux state."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    # As when run as a script: its folder (kd.py) is on the path.
    monkeypatch.syspath_prepend(str(BUILDER.parent))
    spec = importlib.util.spec_from_file_location("build_eagle", BUILDER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cfg = transformers.LlamaConfig(
        vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=6,
        num_attention_heads=4, num_key_value_heads=2)
    tgt = transformers.LlamaForCausalLM(cfg).eval()
    emb, hidden = torch.randn(2, 5, 32), torch.randn(2, 5, 32)
    head = mod.Head(tgt, eagle3=False)
    torch.testing.assert_close(head(emb, hidden), hidden)
    head3 = mod.Head(tgt, eagle3=True)
    aux = torch.randn(2, 5, 3 * 32)
    torch.testing.assert_close(head3.fc(aux), aux[..., 64:])


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs vllm")
def test_vllm_loads_every_draft_parameter(built):
    proc = subprocess.run(
        [sys.executable, "-c", VLLM_LOAD, str(built), str(29500 + os.getpid() % 1000)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"},
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-4000:]
    res = json.loads(line.removeprefix("RESULT "))
    assert res["eagle"]["arch"] == "EagleLlamaForCausalLM"
    assert res["eagle3"]["arch"] == "Eagle3LlamaForCausalLM"
    # Only what vLLM then shares from the target stays unloaded.
    assert res["eagle"]["unloaded"] == ["model.embed_tokens.weight"]
    assert res["eagle3"]["unloaded"] == ["lm_head.weight", "model.embed_tokens.weight"]
    for method in ("eagle", "eagle3"):
        assert not res[method]["own_embed"] and not res[method]["own_lm_head"]
