"""Tests of scripts/gpu-host/build_scaled.py: a Llama embedded in a larger body computes
the same logits (float32, exact up to rounding), the builder refuses a body that cannot
hold the model with the field's name, and the checkpoint it writes loads as a plain
Llama of the body's shape."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
BUILDER = ROOT / "scripts" / "gpu-host" / "build_scaled.py"
BODY = {"hidden_size": 128, "intermediate_size": 160, "num_attention_heads": 16,
        "num_key_value_heads": 4, "num_hidden_layers": 3}


@pytest.fixture(scope="module")
def mod():
    sys.path.insert(0, str(BUILDER.parent))
    spec = importlib.util.spec_from_file_location("build_scaled", BUILDER)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="module")
def small():
    """A random Llama with SmolLM2's structure in miniature: 3 query heads per KV head,
    tied embeddings, RoPE theta 1e5, 2 layers; trained-looking norm weights."""
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=6, num_key_value_heads=2, head_dim=8,
        max_position_embeddings=128, tie_word_embeddings=True, rms_norm_eps=1e-5,
        rope_theta=1e5)
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n.endswith("norm.weight"):
                p.copy_(torch.rand_like(p) + 0.5)
    return model


def scaled_model(mod, small, body=BODY):
    sd = {k: v.detach().clone() for k, v in small.state_dict().items()}
    new_sd, new_cfg = mod.scale_llama(sd, small.config.to_dict(), body)
    big = transformers.LlamaForCausalLM(transformers.LlamaConfig(**new_cfg)).eval()
    missing, unexpected = big.load_state_dict(new_sd, strict=False)
    # The tied lm_head is the only key the state dict may leave to the model.
    assert set(missing) <= {"lm_head.weight"} and not unexpected
    return big, new_sd


def logits(model, ids):
    with torch.no_grad():
        return model(ids).logits


def test_scaled_model_computes_the_same_logits(mod, small):
    big, _ = scaled_model(mod, small)
    assert big.config.hidden_size == 128 and big.config.num_hidden_layers == 3
    ids = torch.randint(0, 64, (2, 24), generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(logits(big, ids), logits(small, ids), atol=2e-4, rtol=1e-4)


def test_new_weights_are_not_all_zero(mod, small):
    """The cost is real work: new reads carry random data (zero blocks only where a
    write could reach the original dimensions)."""
    _, sd = scaled_model(mod, small)
    q = sd["model.layers.0.self_attn.q_proj.weight"]
    gate = sd["model.layers.1.mlp.gate_proj.weight"]
    pass_q = sd["model.layers.2.self_attn.q_proj.weight"]
    assert (q[:, 48:] != 0).float().mean() > 0.99
    assert (gate[64:] != 0).float().mean() > 0.99
    assert (pass_q != 0).float().mean() > 0.99


def test_a_leak_into_the_real_dimensions_is_seen(mod, small):
    """The equality test can fail: a new KV head with non-zero values (its query heads'
    o_proj columns are random) changes the logits."""
    sd = {k: v.detach().clone() for k, v in small.state_dict().items()}
    new_sd, new_cfg = mod.scale_llama(sd, small.config.to_dict(), BODY)
    new_sd["model.layers.0.self_attn.v_proj.weight"][2 * 8 :] = 0.05
    big = transformers.LlamaForCausalLM(transformers.LlamaConfig(**new_cfg)).eval()
    big.load_state_dict(new_sd, strict=False)
    ids = torch.randint(0, 64, (1, 16), generator=torch.Generator().manual_seed(2))
    assert (logits(big, ids) - logits(small, ids)).abs().max() > 1e-3


@pytest.mark.parametrize("field,value,msg", [
    ("hidden_size", 32, "hidden_size: the body's 32 is smaller"),
    ("num_hidden_layers", 1, "num_hidden_layers: the body's 1 is smaller"),
    ("num_key_value_heads", 8, "num_attention_heads: 2 query heads per KV head"),
    ("num_attention_heads", 12, "hidden_size: must be num_attention_heads x head_dim"),
])
def test_a_body_that_cannot_hold_the_model_is_refused(mod, small, field, value, msg):
    with pytest.raises(ValueError, match=msg):
        scaled_model(mod, small, dict(BODY, **{field: value}))


def test_build_writes_a_loadable_bf16_llama(mod, small, tmp_path):
    src = tmp_path / "src"
    small.save_pretrained(str(src))
    info = mod.build(src, tmp_path / "dst", BODY, "cpu")
    cfg = json.loads((tmp_path / "dst" / "config.json").read_text())
    assert cfg["hidden_size"] == 128 and cfg["head_dim"] == 8
    assert cfg["rms_norm_eps"] == pytest.approx(1e-5 * 48 / 128)
    assert cfg["torch_dtype"] == "bfloat16"
    assert "cost-scaled proxy" in cfg["_name_or_path"]
    big = transformers.AutoModelForCausalLM.from_pretrained(
        str(tmp_path / "dst"), torch_dtype=torch.float32).eval()
    assert info["params"] == sum(p.numel() for p in big.parameters())
    ids = torch.randint(0, 64, (1, 16), generator=torch.Generator().manual_seed(3))
    # bf16 weights: close to the original's logits, not equal.
    torch.testing.assert_close(logits(big, ids), logits(small, ids), atol=0.05, rtol=0.05)


def test_a_body_field_of_none_keeps_the_models_value(mod, small):
    body = {"hidden_size": 96, "intermediate_size": 160, "num_attention_heads": 12,
            "num_key_value_heads": 4, "num_hidden_layers": None}
    big, _ = scaled_model(mod, small, body)
    assert big.config.num_hidden_layers == 2 and big.config.num_key_value_heads == 4
    ids = torch.randint(0, 64, (1, 16), generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(logits(big, ids), logits(small, ids), atol=2e-4, rtol=1e-4)


def test_the_tp_body_holds_smollm2_and_splits_over_2_and_4_gpus(mod):
    smollm2 = {"hidden_size": 576, "intermediate_size": 1536, "num_attention_heads": 9,
               "num_key_value_heads": 3, "num_hidden_layers": 30}
    body = {k: smollm2[k] if v is None else v for k, v in mod.TP_SPLITTABLE.items()}
    mod._check_shape(smollm2, body, 64)
    for tp in (2, 4):
        assert body["num_attention_heads"] % tp == 0
        assert body["num_key_value_heads"] % tp == 0
    assert set(mod.PROXIES) == {"x8b", "x1b", "tp"}
