"""Distill a draft towards the target's next-token distribution (KL) and measure it.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/distill.py   # ~60 s, H200
    DATA=self NL=10 python3 scripts/gpu-host/distill.py                   # on the target's outputs

Reads $GPU_HOST_ROOT/models/smollm2-135m and smollm2-l{NL} (scripts/gpu-host/build_models.py)
and writes smollm2-l{NL}-kd (DATA=text), -self or -mix, with
distill.json beside the weights: the settings, the sha256 of the draft's weights and
its greedy first-position acceptance against the target on the tune split (teacher-forced
on the target's own greedy continuations: what greedy SD accepts at the first draft
position), before and after.
  TRAIN_JSON   a JSON list of conversations, each a list of {"role", "content"} messages
               (default: models/train.json, staged by pack-offline.sh --with-train)
  DATA         text: the conversations as they are (default);
               self: the target's greedy continuations (256 tokens) of the conversations'
               user turns (each with the conversation before it), the first
               SELF_PROMPTS of them (default: all, 6722 in the staged file), generated
               once and kept in models/self-rows-*.pt; mix: text and self rows together
  ONLY_ROWS=1  build the rows and stop (before distilling several drafts side by side)
  NL           draft layers (default 4)     STEPS  optimizer steps (default 600)
  EVAL_PROMPTS fixture prompt file of the acceptance check
               (default .gpu-bundles/prompts/sharegpt-tune.jsonl; 64 prompts, 128 tokens)
Seeded (torch.manual_seed(0)) and run with torch's deterministic algorithms (warn_only:
an op without a deterministic kernel warns in the log instead of failing the build).
Seeding alone did not give the same draft on the H200: sessions 28 and 29 trained on the
same rows and their KL differed from step 100 on (2.695 / 2.801), the drafts' acceptance
too (benchmarks/results/2026-12-04-h200-s29/README.md). Nor did deterministic algorithms
with warn_only: sessions 30 and 31 got different weights (sha256 6eb2d78b... and
0795b03f...), and the log's one warning was the draft's attention backward (cuDNN
attention, picked by SDPA, has no deterministic kernel). The draft trains with eager
attention (matmuls and a softmax, which have deterministic kernels with the cuBLAS
workspace below; that the sha then repeats on the H200 is for two sessions to show);
every warning of a non-deterministic op is kept in distill.json ("nondeterministic_ops")
and printed, so a sha that does not repeat says why.
"""

import hashlib
import json
import os
import time
import warnings
from pathlib import Path

M = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost")) / "models"
N = int(os.environ.get("NL", "4"))
STEPS = int(os.environ.get("STEPS", "600"))
DATA = os.environ.get("DATA", "text")
SELF_PROMPTS = int(os.environ.get("SELF_PROMPTS", "100000"))
ONLY_ROWS = os.environ.get("ONLY_ROWS") == "1"
TRAIN_JSON = Path(os.environ.get("TRAIN_JSON", M / "train.json"))
EVAL_PROMPTS = Path(
    os.environ.get("EVAL_PROMPTS", ".gpu-bundles/prompts/sharegpt-tune.jsonl")
)
if DATA not in ("text", "self", "mix"):
    raise SystemExit(f"DATA: {DATA!r} is not one of text, self, mix")
if not EVAL_PROMPTS.exists():
    raise SystemExit(f"EVAL_PROMPTS: {EVAL_PROMPTS} does not exist (carry the prompts "
                     "folder, .gpu-bundles/prompts, or set EVAL_PROMPTS)")
OUT = M / f"smollm2-l{N}-{'kd' if DATA == 'text' else DATA}"

# Settings are checked before the slow imports.
# cuBLAS is deterministic only with a fixed workspace, set before CUDA starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
from kd import (  # noqa: E402
    chat_rows,
    greedy_agreement,
    greedy_continuations,
    kd_step,
    load_prompt_ids,
    log_step,
    weights_sha256,
)
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
L, B = (512, 32) if DEV == "cuda" else (64, 2)


def self_prompts(tok) -> list[list[int]]:
    """Every user turn of the train conversations, with the conversation before it,
    chat-templated for generation (last 256 tokens); SELF_PROMPTS of them."""
    prompts = []
    for msgs in json.loads(TRAIN_JSON.read_text()):
        for i, m in enumerate(msgs):
            if m["role"] != "user":
                continue
            x = tok.apply_chat_template(msgs[: i + 1], tokenize=True,
                                        add_generation_prompt=True)
            prompts.append(list(x["input_ids"] if hasattr(x, "keys") else x)[-256:])
            if len(prompts) == SELF_PROMPTS:
                return prompts
    return prompts


def self_rows(tok, tgt) -> torch.Tensor:
    """The target's greedy continuations (256 tokens) of ``self_prompts``, prompt +
    continuation concatenated, as [n, L] rows. Kept in models/ (keyed on the train
    file, the count and the length), so drafts distilled after the first reuse them."""
    new = 256 if DEV == "cuda" else 8
    key = hashlib.sha256(f"{TRAIN_JSON.stat().st_size}-{SELF_PROMPTS}-{new}-{L}".encode())
    cache = M / f"self-rows-{key.hexdigest()[:12]}.pt"
    if cache.exists():
        return torch.load(cache)
    prompts = self_prompts(tok)
    conts = greedy_continuations(tgt, prompts, new, tok.pad_token_id or 0, batch=1024)
    ids = [t for p, c in zip(prompts, conts) for t in p + c]
    n = len(ids) // L
    rows = torch.tensor(ids[: n * L]).view(n, L)
    torch.save(rows, cache.with_suffix(".tmp"))
    cache.with_suffix(".tmp").rename(cache)
    return rows


t0 = time.time()
torch.manual_seed(0)
torch.use_deterministic_algorithms(True, warn_only=True)
tok = AutoTokenizer.from_pretrained(M / "smollm2-135m")
tgt = AutoModelForCausalLM.from_pretrained(M / "smollm2-135m", torch_dtype=torch.bfloat16)
tgt = tgt.to(DEV).eval()
if ONLY_ROWS:
    rows = self_rows(tok, tgt) if DATA != "text" else chat_rows(tok, TRAIN_JSON, L)
    print(f"{len(rows)} rows of {L} tokens ready {time.time() - t0:.0f}s")
    raise SystemExit(0)
# Eager attention: SDPA's cuDNN backward is not deterministic (see the docstring).
dr = AutoModelForCausalLM.from_pretrained(M / f"smollm2-l{N}", torch_dtype=torch.float32,
                                          attn_implementation="eager")
dr = dr.to(DEV)

eval_prompts = load_prompt_ids(EVAL_PROMPTS, 64, 1024)
eval_conts = greedy_continuations(tgt, eval_prompts, 128 if DEV == "cuda" else 8,
                                  tok.pad_token_id or 0)
# The check of the check: the target against its own continuations, unpadded (1.0 but
# for bf16 ties and the left padding of the generation).
self_check = greedy_agreement(tgt, eval_prompts, eval_conts)
dr.eval()
with torch.autocast(DEV, dtype=torch.bfloat16):
    before = greedy_agreement(dr, eval_prompts, eval_conts)
print(f"target self-agreement {self_check:.3f}; first-position acceptance before: "
      f"{before:.3f} ({time.time() - t0:.0f}s)", flush=True)

if DATA == "text":
    ids = chat_rows(tok, TRAIN_JSON, L)
elif DATA == "self":
    ids = self_rows(tok, tgt)
else:  # mix: both (batches are drawn at random from all rows)
    ids = torch.cat([chat_rows(tok, TRAIN_JSON, L), self_rows(tok, tgt)])
n = len(ids)
print(f"{n} rows of {L} tokens ({DATA}) {time.time() - t0:.0f}s", flush=True)
dr.train()
for p in dr.model.embed_tokens.parameters():
    p.requires_grad_(False)
opt = torch.optim.AdamW(
    [p for p in dr.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.0
)
sch = torch.optim.lr_scheduler.OneCycleLR(
    opt, max_lr=1e-3, total_steps=max(STEPS, 1), pct_start=0.05
)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for step in range(STEPS):
        b = ids[torch.randint(0, n, (B,))].to(DEV)
        with torch.no_grad():
            tl = tgt(b).logits.float()
        with torch.autocast(DEV, dtype=torch.bfloat16):
            dl = dr(b).logits.float()
        loss = kd_step(opt, sch, dr.parameters(), dl, tl)
        if step % 100 == 0 or step == STEPS - 1:
            log_step("", step, loss, dl, tl, t0)
nondeterministic = sorted({str(w.message) for w in caught
                           if "determinis" in str(w.message)})
for message in nondeterministic:
    print(f"non-deterministic op in training (the sha may not repeat): {message}",
          flush=True)
for message in sorted({str(w.message) for w in caught} - set(nondeterministic)):
    print(f"warning in training: {message}", flush=True)

dr = dr.to(torch.bfloat16).eval()
after = greedy_agreement(dr, eval_prompts, eval_conts)
print(f"first-position acceptance after: {after:.3f} ({time.time() - t0:.0f}s)", flush=True)
dr.save_pretrained(OUT)
tok.save_pretrained(OUT)
# Which draft this is, so runs of different sessions can tell whether they ran the same one.
sha = weights_sha256(dr)
print(f"draft weights sha256 {sha}", flush=True)
(OUT / "distill.json").write_text(json.dumps({
    "draft_layers": N, "data": DATA, "steps": STEPS, "rows": n, "seq_len": L,
    "batch": B, "self_prompts": SELF_PROMPTS if DATA != "text" else None,
    "eval_prompts": str(EVAL_PROMPTS), "eval_tokens": sum(map(len, eval_conts)),
    "target_self_agreement": self_check,
    "first_position_acceptance": {"before": before, "after": after},
    "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
    "draft_attention": dr.config._attn_implementation,
    "nondeterministic_ops": nondeterministic,
    "weights_sha256": sha,
    "seconds": round(time.time() - t0, 1),
}, indent=1))
