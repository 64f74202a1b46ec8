"""Build EAGLE and EAGLE3 draft heads for SmolLM2-135M from the target itself.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/build_eagle.py  # ~40 s

Reads $GPU_HOST_ROOT/models/smollm2-135m (scripts/gpu-host/build_models.py) and writes
next to it, in the checkpoint formats vLLM 0.32's Llama drafters load
(model_executor/models/llama_eagle.py, llama_eagle3.py):

  smollm2-eagle   EagleLlamaForCausalLM: one decoder layer without input_layernorm,
                  fc: [embedding | target's last hidden state (post-norm)] -> hidden.
                  Weights fc.weight, layers.0.{self_attn,mlp,post_attention_layernorm}.*
  smollm2-eagle3  Eagle3LlamaForCausalLM: fc over the target's aux hidden states
                  (eagle_config.eagle_aux_hidden_state_layer_ids, vLLM's default
                  (2, L/2, L-3)), midlayer.* with a 2*hidden qkv input
                  [input_layernorm(embedding) | hidden_norm(hidden)], norm.weight;
                  draft_vocab_size = vocab_size, so no d2t/t2d.
Neither carries embed_tokens or lm_head: vLLM shares the target's.

Initialised from the target (not random): EAGLE fc = [0 | I] and the target's last
layer; EAGLE3 fc selects the last aux hidden state, the midlayer is the target layer at
that depth with qkv = [0 | W], norm is the target's final norm. Then STEPS steps of
distillation (KL to the target's next-token distribution, teacher-forced on the
target's hidden states, as the draft sees them after a prefill) on chat text.
  TRAIN_JSON  conversations as for distill.py (default models/train.json); when it is
              missing the target's own samples are used
  STEPS       optimizer steps per head (default 300 on CUDA, 0 on CPU: init only)
  ONLY        "eagle" or "eagle3" to build one of the two
Greedy speculative decoding is token-identical for any draft; the distillation only
makes drafts (and the drafter's confidence, which DSL exits on) realistic.
"""

import json
import os
import shutil
import time
from pathlib import Path

import torch
import torch.nn as nn
from kd import chat_rows, kd_step, log_step
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.models.llama.modeling_llama import (
    LlamaDecoderLayer,
    LlamaRMSNorm,
    LlamaRotaryEmbedding,
)

M = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost")) / "models"
TARGET = M / "smollm2-135m"
DEV = "cuda" if torch.cuda.is_available() else "cpu"
STEPS = int(os.environ.get("STEPS", "300" if DEV == "cuda" else "0"))
TRAIN_JSON = Path(os.environ.get("TRAIN_JSON", M / "train.json"))
ONLY = os.environ.get("ONLY", "")
L, B = (256, 32) if DEV == "cuda" else (64, 4)


def aux_layer_ids(num_layers: int) -> list[int]:
    """The EAGLE3 aux layers: vLLM's default (SupportsEagle3), also in the config."""
    return [2, num_layers // 2, num_layers - 3]


class Head(nn.Module):
    """An EAGLE (``eagle3=False``) or EAGLE3 head, computing what vLLM's drafter
    computes for one teacher-forced step. ``hidden`` is the target's post-norm
    last hidden state (EAGLE) or its aux hidden states concatenated (EAGLE3)."""

    def __init__(self, tgt, eagle3: bool):
        super().__init__()
        cfg = tgt.config
        H, n = cfg.hidden_size, cfg.num_hidden_layers
        self.eagle3 = eagle3
        self.cfg = cfg
        src_idx = aux_layer_ids(n)[-1] if eagle3 else n - 1
        src = tgt.model.layers[src_idx]
        self.layer = LlamaDecoderLayer(cfg, layer_idx=0)
        self.layer.load_state_dict(src.state_dict())
        eye = torch.eye(H)
        if eagle3:
            k = len(aux_layer_ids(n))
            self.fc = nn.Linear(k * H, H, bias=False)
            w = torch.zeros(H, k * H)
            w[:, (k - 1) * H :] = eye  # the deepest aux hidden state
            self.fc.weight.data.copy_(w)
            attn = self.layer.self_attn
            for name in ("q_proj", "k_proj", "v_proj"):
                old = getattr(attn, name)
                new = nn.Linear(2 * H, old.out_features, bias=old.bias is not None)
                new.weight.data.zero_()
                new.weight.data[:, H:] = old.weight.data  # [0 | W]: the hidden half
                if old.bias is not None:
                    new.bias.data.copy_(old.bias.data)
                setattr(attn, name, new)
            self.hidden_norm = LlamaRMSNorm(H, eps=cfg.rms_norm_eps)
            self.hidden_norm.load_state_dict(src.input_layernorm.state_dict())
            self.layer.input_layernorm.weight.data.fill_(1.0)
            self.norm = LlamaRMSNorm(H, eps=cfg.rms_norm_eps)
            self.norm.load_state_dict(tgt.model.norm.state_dict())
        else:
            self.fc = nn.Linear(2 * H, H, bias=False)
            self.fc.weight.data.copy_(torch.cat([torch.zeros(H, H), eye], dim=1))
            # The layer starts as the identity (its output projections zero): the
            # head's output, which goes to lm_head without a norm, is then the
            # target's post-norm hidden state, not a late layer applied to it.
            self.layer.self_attn.o_proj.weight.data.zero_()
            self.layer.mlp.down_proj.weight.data.zero_()
        self.rotary = LlamaRotaryEmbedding(cfg)

    def forward(self, embeds: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """The hidden state the drafter's logits are computed from."""
        layer = self.layer
        pos = torch.arange(embeds.shape[1], device=embeds.device)[None]
        rope = self.rotary(embeds, pos)
        if self.eagle3:
            residual = self.fc(hidden)
            x = torch.cat(
                [layer.input_layernorm(embeds), self.hidden_norm(residual)], -1
            )
        else:
            residual = self.fc(torch.cat([embeds, hidden], -1))
            x = residual  # layer 0 of an EAGLE head has no input_layernorm
        x, _ = layer.self_attn(x, position_embeddings=rope, attention_mask=None)
        residual = residual + x
        x = layer.mlp(layer.post_attention_layernorm(residual)) + residual
        return self.norm(x) if self.eagle3 else x

    def export(self, dtype: torch.dtype) -> dict[str, torch.Tensor]:
        """Checkpoint tensors under the names vLLM's loaders expect."""
        prefix = "midlayer." if self.eagle3 else "layers.0."
        out = {"fc.weight": self.fc.weight}
        for k, v in self.layer.state_dict().items():
            if k == "input_layernorm.weight" and not self.eagle3:
                continue  # replaced by nn.Identity in llama_eagle.py
            out[prefix + k] = v
        if self.eagle3:
            out[prefix + "hidden_norm.weight"] = self.hidden_norm.weight
            out["norm.weight"] = self.norm.weight
        return {k: v.detach().to(dtype).contiguous().cpu() for k, v in out.items()}


def config_for(tgt, eagle3: bool) -> dict:
    cfg = tgt.config.to_dict()
    n = cfg["num_hidden_layers"]
    cfg.pop("quantization_config", None)
    cfg.update(num_hidden_layers=1, tie_word_embeddings=False)
    if cfg.get("layer_types"):
        cfg["layer_types"] = cfg["layer_types"][:1]
    if eagle3:
        cfg.update(
            architectures=["Eagle3LlamaForCausalLM"],
            draft_vocab_size=cfg["vocab_size"],
            target_hidden_size=cfg["hidden_size"],
            eagle_config={
                "eagle_aux_hidden_state_layer_ids": aux_layer_ids(n),
                "use_aux_hidden_state": True,
            },
        )
    else:
        cfg.update(architectures=["EagleLlamaForCausalLM"])
    return cfg


def batches(tgt):
    """Token-id rows of length L: TRAIN_JSON's conversations, else target samples."""
    if TRAIN_JSON.exists():
        tok = AutoTokenizer.from_pretrained(TARGET)
        rows = chat_rows(tok, TRAIN_JSON, L, max_tokens=4 * L * B * max(STEPS, 1))
        print(f"training text: {TRAIN_JSON} ({len(rows)} rows of {L})", flush=True)
    else:
        print(f"no {TRAIN_JSON}: training on the target's own samples", flush=True)
        start = torch.full((4 * B, 1), tgt.config.bos_token_id or 0, device=DEV)
        with torch.no_grad():
            rows = tgt.generate(
                start,
                do_sample=True,
                max_new_tokens=L,
                min_new_tokens=L,
                top_k=0,
                pad_token_id=tgt.config.eos_token_id,
            )[:, -L:].cpu()
    g = torch.Generator().manual_seed(0)
    while True:
        yield rows[torch.randint(0, len(rows), (B,), generator=g)].to(DEV)


def target_pass(tgt, b: torch.Tensor, eagle3: bool):
    """(embeddings of tokens 1.., draft inputs at 0..-2, target logits at 1..)."""
    out = tgt(b, output_hidden_states=True)
    hs = out.hidden_states  # hs[i]: the input of layer i; hs[-1]: post final norm
    if eagle3:
        n = tgt.config.num_hidden_layers
        hidden = torch.cat([hs[i] for i in aux_layer_ids(n)], -1)
    else:
        hidden = hs[-1]
    embeds = tgt.model.embed_tokens(b[:, 1:])
    return embeds.float(), hidden[:, :-1].float(), out.logits[:, 1:].float()


def build(tgt, eagle3: bool) -> None:
    name = "smollm2-eagle3" if eagle3 else "smollm2-eagle"
    t0 = time.time()
    torch.manual_seed(0)
    head = Head(tgt, eagle3).to(DEV).float()
    lm_head = tgt.get_output_embeddings()
    if STEPS > 0:
        opt = torch.optim.AdamW(head.parameters(), lr=5e-4, weight_decay=0.0)
        sch = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=5e-4, total_steps=STEPS, pct_start=0.1
        )
        data = batches(tgt)
        for step in range(STEPS):
            with torch.no_grad():
                embeds, hidden, tl = target_pass(tgt, next(data), eagle3)
            with torch.autocast(DEV, dtype=torch.bfloat16, enabled=DEV == "cuda"):
                dl = lm_head(head(embeds, hidden).to(lm_head.weight.dtype)).float()
            loss = kd_step(opt, sch, head.parameters(), dl, tl)
            if step % 50 == 0 or step == STEPS - 1:
                log_step(f"{name} ", step, loss, dl, tl, t0)
    out = M / name
    out.mkdir(parents=True, exist_ok=True)
    save_file(
        head.export(tgt.dtype),
        str(out / "model.safetensors"),
        metadata={"format": "pt"},
    )
    (out / "config.json").write_text(json.dumps(config_for(tgt, eagle3), indent=2))
    for f in TARGET.iterdir():  # the tokenizer files (vLLM reads the target's)
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(f, out / f.name)
    print(f"{name}: written to {out} in {time.time() - t0:.0f}s", flush=True)


def main() -> None:
    if not (TARGET / "config.json").exists():
        raise SystemExit(f"{TARGET} is missing: run scripts/gpu-host/build_models.py")
    tgt = AutoModelForCausalLM.from_pretrained(TARGET, attn_implementation="sdpa")
    tgt = tgt.to(DEV).eval().requires_grad_(False)
    for eagle3 in (False, True):
        if ONLY in ("", "eagle3" if eagle3 else "eagle"):
            build(tgt, eagle3)


if __name__ == "__main__":
    main()
