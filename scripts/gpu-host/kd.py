"""Shared pieces of the draft distillations on the GPU host (distill.py, build_eagle.py,
kept_draft.py): chat text as fixed-length token rows, one KL distillation step with its
log line, and the sha256 that names a draft's weights."""

import hashlib
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


def weights_sha256(model) -> str:
    """The sha256 of a model's weights: its state dict's names and raw bytes, by
    name (tied weights appear under each name), as distill.py records it in
    distill.json ("weights_sha256")."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


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


def load_prompt_ids(path: Path, n: int, max_len: int) -> list[list[int]]:
    """The first ``n`` prompts of a fixture prompt file (``prompt_token_ids`` per
    JSON line) of at most ``max_len`` tokens."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    ids = [r["prompt_token_ids"] for r in rows if len(r["prompt_token_ids"]) <= max_len]
    return ids[:n]


@torch.no_grad()
def greedy_continuations(model, prompts: list[list[int]], new_tokens: int,
                         pad_id: int, batch: int = 128) -> list[list[int]]:
    """The model's greedy continuation (``new_tokens`` ids, no stop) of each prompt,
    batched with left padding."""
    dev = next(model.parameters()).device
    out: list[list[int]] = []
    for i in range(0, len(prompts), batch):
        chunk = prompts[i : i + batch]
        width = max(len(p) for p in chunk)
        ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in chunk], device=dev)
        mask = torch.tensor(
            [[0] * (width - len(p)) + [1] * len(p) for p in chunk], device=dev
        )
        gen = model.generate(
            input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens,
            min_new_tokens=new_tokens, do_sample=False, pad_token_id=pad_id,
        )
        out.extend(gen[:, width:].tolist())
    return out


@torch.no_grad()
def greedy_agreement(model, prompts: list[list[int]], continuations: list[list[int]]
                     ) -> float:
    """Teacher-forced on prompt + continuation, the share of continuation positions
    at which ``model``'s argmax is the continuation's token. With a draft and the
    target's greedy continuations this is greedy SD's first-position acceptance;
    with a second copy of the target it is the copy's top-1 agreement."""
    dev = next(model.parameters()).device
    hit = total = 0
    for p, c in zip(prompts, continuations):
        ids = torch.tensor([p + c], device=dev)
        pred = model(ids).logits[0, len(p) - 1 : -1].argmax(-1)
        hit += int((pred == ids[0, len(p) :]).sum())
        total += len(c)
    return hit / max(total, 1)
