"""Cost-scaled proxies: a small Llama embedded function-preservingly in a larger body.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/build_scaled.py   # ~1 min, H200

No checkpoint larger than SmolLM2-135M reaches the GPU host, and a 135M target's decode
step is host time, so speculation can hardly pay with it. This builds, from the real
weights under $GPU_HOST_ROOT/models:

  smollm2-135m-x8b   the target (SmolLM2-135M, 30 layers of 576) in a Llama-3.1-8B-shaped
                     body: hidden 4096, 64 heads of 64 (16 KV heads), MLP 14336, 32 layers,
                     7.2B parameters (8B's, but for the 49k vocabulary)
  <DRAFT>-x1b        the draft (default smollm2-l10-self, scripts/gpu-host/distill.py) in a
                     Llama-3.2-1B-shaped body: hidden 2048, 32 heads of 64 (8 KV heads),
                     MLP 8192, 16 layers, 1.07B parameters

  smollm2-135m-tp,   with PROXIES=tp: both in a body tensor parallelism can split (12 query
  <DRAFT>-tp         and 4 KV heads, hidden 768, their own depth), for the TP tests

These are **cost-scaled proxies, not real 8B / 1B models**: their outputs are SmolLM2's,
their cost per token is that of the larger body. How (``scale_llama``):
- the real weights sit in the original dimensions; every weight that could write into
  the original dimensions from a new one is zero (values of new KV heads, output-projection
  columns of new heads that share a real KV head, up-projection rows of new MLP channels),
  and nothing writes into the new hidden dimensions (zero rows of o_proj, down_proj and
  the embedding), so they stay zero; every other new weight is random and non-zero;
- the original query heads keep their KV heads: head i of KV group g goes to slot
  g * R + i % G (R, G: query heads per KV head in the new and original model);
- RMSNorm averages over the wider hidden size, so weights scale by sqrt(h / H) and eps by
  h / H; extra layers (body deeper than the model) are pass-through: zero o_proj and
  down_proj;
- the head dimension, RoPE and vocabulary stay, so attention and logits are unchanged.
In exact arithmetic the logits are the original's (tests/test_build_scaled.py checks it in
float32). In bf16 the last bits differ (other GEMM shapes, rounded norm weights), so greedy
outputs can part where the top two logits are close: the build measures the top-1
agreement of each proxy with its original, teacher-forced on the original's greedy
continuations of the tune split, and writes it to scaled.json beside the weights.
  DRAFT         the draft folder to scale (default smollm2-l10-self)
  PROXIES       which to build, of x8b (the target), x1b (the draft), tp (both);
                default x8b,x1b
  EVAL_PROMPTS  as distill.py (default .gpu-bundles/prompts/sharegpt-tune.jsonl)
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path

import torch

# Bodies: hidden_size, intermediate_size, num_attention_heads, num_key_value_heads,
# num_hidden_layers (head_dim stays the model's own).
LLAMA_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 64,
            "num_key_value_heads": 16, "num_hidden_layers": 32}
LLAMA_1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 32,
            "num_key_value_heads": 8, "num_hidden_layers": 16}
# The smallest body that tensor parallelism over 2 and 4 GPUs can split (SmolLM2's 9
# query and 3 KV heads cannot): 12 query and 4 KV heads; the model's own depth (None).
TP_SPLITTABLE = {"hidden_size": 768, "intermediate_size": 2048, "num_attention_heads": 12,
                 "num_key_value_heads": 4, "num_hidden_layers": None}
PROXIES = {  # name suffix: (target or draft, body)
    "x8b": ("target", LLAMA_8B), "x1b": ("draft", LLAMA_1B),
    "tp": ("both", TP_SPLITTABLE),
}


def _check_shape(cfg: dict, body: dict, head_dim: int) -> None:
    """One error naming the field that cannot hold the model."""
    for field in body:
        if body[field] < cfg[field]:
            raise ValueError(f"{field}: the body's {body[field]} is smaller than the "
                             f"model's {cfg[field]}")
    if body["num_attention_heads"] % body["num_key_value_heads"]:
        raise ValueError("num_key_value_heads: must divide num_attention_heads "
                         f"({body['num_attention_heads']})")
    if body["num_attention_heads"] * head_dim != body["hidden_size"]:
        raise ValueError(f"hidden_size: must be num_attention_heads x head_dim "
                         f"({body['num_attention_heads']} x {head_dim})")
    g = cfg["num_attention_heads"] // cfg["num_key_value_heads"]
    r = body["num_attention_heads"] // body["num_key_value_heads"]
    if r < g:
        raise ValueError(f"num_attention_heads: {r} query heads per KV head cannot hold "
                         f"the model's {g}")


def scale_llama(sd: dict[str, torch.Tensor], cfg: dict, body: dict,
                seed: int = 0) -> tuple[dict[str, torch.Tensor], dict]:
    """``sd`` (a Llama state dict with config ``cfg``) embedded in ``body`` (a field
    that is None keeps the model's value); returns the new state dict (dtype and
    device of ``sd``) and config."""
    body = {k: cfg[k] if v is None else v for k, v in body.items()}
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // nh
    nl = cfg["num_hidden_layers"]
    _check_shape(cfg, body, hd)
    H, I2 = body["hidden_size"], body["intermediate_size"]
    NH, NKV, NL = (body["num_attention_heads"], body["num_key_value_heads"],
                   body["num_hidden_layers"])
    R, G = NH // NKV, nh // nkv
    slot = [(i // G) * R + i % G for i in range(nh)]
    real_group_extra = [kv * R + j for kv in range(nkv) for j in range(G, R)]
    ref = next(iter(sd.values()))
    dev, dt = ref.device, ref.dtype
    gen = torch.Generator(device=dev).manual_seed(seed)

    def rnd(*shape):
        return (torch.randn(*shape, generator=gen, device=dev) * 0.02).to(dt)

    def zeros(*shape):
        return torch.zeros(*shape, device=dev, dtype=dt)

    norm_scale = math.sqrt(h / H)
    out: dict[str, torch.Tensor] = {}
    for k, v in sd.items():
        if k.endswith("embed_tokens.weight") or k == "lm_head.weight":
            # Zero columns: the embedding must not write into the new dims (and a tied
            # lm_head is the same tensor).
            w = zeros(v.shape[0], H)
            w[:, :h] = v
        elif k.endswith("norm.weight"):
            w = torch.ones(H, device=dev, dtype=dt)
            w[:h] = (v.float() * norm_scale).to(dt)
        elif k.endswith("q_proj.weight"):
            w = rnd(NH * hd, H)
            for i in range(nh):
                w[slot[i] * hd : (slot[i] + 1) * hd, :h] = v[i * hd : (i + 1) * hd]
        elif k.endswith("k_proj.weight") or k.endswith("v_proj.weight"):
            w = rnd(NKV * hd, H)
            if k.endswith("v_proj.weight"):
                w[nkv * hd :] = 0  # new KV heads carry zero values
            w[: nkv * hd, :h] = v
        elif k.endswith("o_proj.weight"):
            w = rnd(H, NH * hd)
            w[h:] = 0
            for s in real_group_extra:
                w[:h, s * hd : (s + 1) * hd] = 0
            for i in range(nh):
                w[:h, slot[i] * hd : (slot[i] + 1) * hd] = v[:, i * hd : (i + 1) * hd]
        elif k.endswith("gate_proj.weight"):
            w = rnd(I2, H)
            w[:inter, :h] = v
        elif k.endswith("up_proj.weight"):
            w = zeros(I2, H)
            w[:inter, :h] = v
        elif k.endswith("down_proj.weight"):
            w = zeros(H, I2)
            w[:h, :inter] = v
        elif k.endswith("rotary_emb.inv_freq"):
            w = v
        else:
            raise ValueError(f"{k}: no rule to scale this weight {tuple(v.shape)}")
        out[k] = w.contiguous()
    # Pass-through layers: random reads, zero writes (o_proj, down_proj).
    for layer in range(nl, NL):
        p = f"model.layers.{layer}."
        out[p + "input_layernorm.weight"] = torch.ones(H, device=dev, dtype=dt)
        out[p + "post_attention_layernorm.weight"] = torch.ones(H, device=dev, dtype=dt)
        out[p + "self_attn.q_proj.weight"] = rnd(NH * hd, H)
        out[p + "self_attn.k_proj.weight"] = rnd(NKV * hd, H)
        out[p + "self_attn.v_proj.weight"] = rnd(NKV * hd, H)
        out[p + "self_attn.o_proj.weight"] = zeros(H, NH * hd)
        out[p + "mlp.gate_proj.weight"] = rnd(I2, H)
        out[p + "mlp.up_proj.weight"] = rnd(I2, H)
        out[p + "mlp.down_proj.weight"] = zeros(H, I2)
    new_cfg = dict(cfg, **body, head_dim=hd,
                   rms_norm_eps=cfg["rms_norm_eps"] * h / H)
    if new_cfg.get("layer_types"):
        new_cfg["layer_types"] = (list(cfg["layer_types"])
                                  + [cfg["layer_types"][-1]] * (NL - nl))
    new_cfg["_name_or_path"] = f"{cfg.get('_name_or_path', 'model')} (cost-scaled proxy)"
    return out, new_cfg


def build(src: Path, dst: Path, body: dict, device: str) -> dict:
    """Write the scaled copy of checkpoint ``src`` to ``dst`` (bf16, tokenizer files
    copied); returns its shape summary."""
    from safetensors.torch import load_file, save_file

    cfg = json.loads((src / "config.json").read_text())
    sd: dict[str, torch.Tensor] = {}
    for f in sorted(src.glob("*.safetensors")):
        sd.update(load_file(str(f), device=device))
    sd = {k: v.to(torch.bfloat16) for k, v in sd.items()}
    out, new_cfg = scale_llama(sd, cfg, body)
    new_cfg["torch_dtype"] = new_cfg["dtype"] = "bfloat16"
    dst.mkdir(parents=True, exist_ok=True)
    save_file({k: v.cpu() for k, v in out.items()}, str(dst / "model.safetensors"),
              metadata={"format": "pt"})
    (dst / "config.json").write_text(json.dumps(new_cfg, indent=1))
    for f in src.iterdir():
        if (f.is_file() and f.name not in ("config.json", "distill.json")
                and ".safetensors" not in f.name):
            shutil.copy(f, dst / f.name)
    params = sum(t.numel() for t in out.values())
    return {"source": src.name, "body": body, "params": params,
            "bytes_bf16": 2 * params}


def main() -> None:
    from kd import greedy_agreement, greedy_continuations, load_prompt_ids
    from transformers import AutoModelForCausalLM

    models = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost")) / "models"
    draft = os.environ.get("DRAFT", "smollm2-l10-self")
    prompts_file = Path(os.environ.get("EVAL_PROMPTS",
                                       ".gpu-bundles/prompts/sharegpt-tune.jsonl"))
    if not prompts_file.exists():
        raise SystemExit(f"EVAL_PROMPTS: {prompts_file} does not exist (carry "
                         ".gpu-bundles/prompts or set EVAL_PROMPTS)")
    if not (models / draft).exists():
        raise SystemExit(f"DRAFT: {models / draft} does not exist (run distill.py, "
                         "e.g. DATA=self NL=10, first)")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.time()
    target = models / "smollm2-135m"
    orig = AutoModelForCausalLM.from_pretrained(target, torch_dtype=torch.bfloat16)
    orig = orig.to(dev).eval()
    prompts = load_prompt_ids(prompts_file, 64, 1024)
    conts = greedy_continuations(orig, prompts, 128, orig.config.pad_token_id or 0)
    wanted = os.environ.get("PROXIES", "x8b,x1b").split(",")
    unknown = sorted(set(wanted) - set(PROXIES))
    if unknown:
        raise SystemExit(f"PROXIES: unknown {unknown}; choose from {sorted(PROXIES)}")
    jobs = []
    for suffix in wanted:
        role, body = PROXIES[suffix]
        if role in ("target", "both"):
            jobs.append((target, body, f"smollm2-135m-{suffix}"))
        if role in ("draft", "both"):
            jobs.append((models / draft, body, f"{draft}-{suffix}"))
    report = {}
    for src, body, name in jobs:
        info = build(src, models / name, body, dev)
        m = AutoModelForCausalLM.from_pretrained(models / name,
                                                 torch_dtype=torch.bfloat16).to(dev).eval()
        if src == target:
            m_src = orig  # loaded above for the continuations
        else:
            m_src = AutoModelForCausalLM.from_pretrained(src, torch_dtype=torch.bfloat16)
            m_src = m_src.to(dev).eval()
        # The proxy against its original, on the original's own greedy path; for the
        # draft also its acceptance against the target before and after scaling.
        own = conts if src == target else greedy_continuations(
            m_src, prompts, 128, orig.config.pad_token_id or 0)
        info["top1_agreement_with_original"] = greedy_agreement(m, prompts, own)
        info["first_position_acceptance_vs_target"] = {
            "original": greedy_agreement(m_src, prompts, conts),
            "scaled": greedy_agreement(m, prompts, conts),
        }
        info["seconds"] = round(time.time() - t0, 1)
        (models / name / "scaled.json").write_text(json.dumps(info, indent=1))
        report[name] = info
        print(name, json.dumps(info), flush=True)
        del m, m_src
        if dev == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
