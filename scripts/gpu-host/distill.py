"""Distill a draft towards the target's next-token distribution (KL) on chat text.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/distill.py   # ~60 s, H200

Reads $GPU_HOST_ROOT/models/smollm2-135m and smollm2-l{NL} (scripts/gpu-host/build_models.py)
and writes smollm2-l{NL}-kd.
  TRAIN_JSON  a JSON list of conversations, each a list of {"role", "content"} messages
              (default: models/train.json, staged by pack-offline.sh --with-train)
  NL          draft layers (default 4)     STEPS  optimizer steps (default 600)
"""

import os
import time
from pathlib import Path

import torch
from kd import chat_rows, kd_step, log_step
from transformers import AutoModelForCausalLM, AutoTokenizer

M = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost")) / "models"
N = int(os.environ.get("NL", "4"))
STEPS = int(os.environ.get("STEPS", "600"))
TRAIN_JSON = Path(os.environ.get("TRAIN_JSON", M / "train.json"))
L, B = 512, 32

t0 = time.time()
torch.manual_seed(0)
tok = AutoTokenizer.from_pretrained(M / "smollm2-135m")
tgt = AutoModelForCausalLM.from_pretrained(
    M / "smollm2-135m", torch_dtype=torch.bfloat16
)
tgt = tgt.cuda().eval()
dr = AutoModelForCausalLM.from_pretrained(
    M / f"smollm2-l{N}", torch_dtype=torch.float32
)
dr = dr.cuda().train()
for p in dr.model.embed_tokens.parameters():
    p.requires_grad_(False)
ids = chat_rows(tok, TRAIN_JSON, L)
n = len(ids)
opt = torch.optim.AdamW(
    [p for p in dr.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.0
)
sch = torch.optim.lr_scheduler.OneCycleLR(
    opt, max_lr=1e-3, total_steps=STEPS, pct_start=0.05
)
for step in range(STEPS):
    b = ids[torch.randint(0, n, (B,))].cuda()
    with torch.no_grad():
        tl = tgt(b).logits.float()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        dl = dr(b).logits.float()
    loss = kd_step(opt, sch, dr.parameters(), dl, tl)
    if step % 100 == 0 or step == STEPS - 1:
        log_step("", step, loss, dl, tl, t0)
dr.to(torch.bfloat16).save_pretrained(M / f"smollm2-l{N}-kd")
tok.save_pretrained(M / f"smollm2-l{N}-kd")
