"""Shared pieces of the draft distillations on the GPU host (distill.py, build_eagle.py):
chat text as fixed-length token rows, and one KL distillation step with its log line."""

import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F


def chat_rows(tok, train_json: Path, seq_len: int, max_tokens: int | None = None):
    """``train_json``'s conversations (lists of {"role", "content"} messages), chat
    templated and concatenated, as an [n, seq_len] tensor of token ids; reading stops
    after ``max_tokens`` ids when given."""
    ids: list[int] = []
    for msgs in json.loads(train_json.read_text()):
        x = tok.apply_chat_template(msgs, tokenize=True)
        ids.extend(list(x["input_ids"] if hasattr(x, "keys") else x))
        if max_tokens is not None and len(ids) > max_tokens:
            break
    n = len(ids) // seq_len
    return torch.tensor(ids[: n * seq_len]).view(n, seq_len)


def kd_step(opt, sch, params, draft_logits, target_logits) -> torch.Tensor:
    """One optimizer step on the per-token KL(target || draft) of [batch, seq, vocab]
    logits, gradients clipped to norm 1. Returns the loss."""
    loss = (
        F.kl_div(
            F.log_softmax(draft_logits, -1),
            F.log_softmax(target_logits, -1),
            log_target=True,
            reduction="batchmean",
        )
        / draft_logits.shape[1]
    )
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    sch.step()
    return loss


def log_step(prefix: str, step: int, loss, draft_logits, target_logits, t0: float):
    """The progress line: KL and top-1 agreement with the target."""
    agree = (draft_logits.argmax(-1) == target_logits.argmax(-1)).float().mean().item()
    print(
        f"{prefix}step {step} kl {loss.item():.3f} top1-agree {agree:.3f} "
        f"{time.time() - t0:.0f}s",
        flush=True,
    )
