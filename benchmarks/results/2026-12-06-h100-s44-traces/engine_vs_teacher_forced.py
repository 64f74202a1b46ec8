"""Engine vs teacher-forced acceptance on the fixture pair (CPU, fp32).

The engine (draft_model, K drafts a step, greedy, ignore_eos) against a walk of
the same K over the draft's teacher-forced greedy predictions on the target's
own continuation (what benchmarks/calibration.py --trace measures).
Run from the repository root with the venv active (scripts/fixtures.sh first):
    N=24 T=64 KS=1,3 DRAFT=draft_l20 python benchmarks/results/2026-12-06-h100-s44-traces/engine_vs_teacher_forced.py
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "e2e"))
import harness
import torch

N = int(os.environ.get("N", "24"))
T = int(os.environ.get("T", "64"))
draft_key = os.environ.get("DRAFT", "draft_l20")
KS = [int(k) for k in os.environ.get("KS", "1,3").split(",")]
fx = harness.Fixtures.load()
prompts = fx.prompts("sharegpt", "test")[:N]
harness.configure_env()
from vllm import LLM, SamplingParams

params = SamplingParams(temperature=0.0, max_tokens=T, ignore_eos=True)
inputs = [{"prompt_token_ids": p["prompt_token_ids"]} for p in prompts]


def engine(spec):
    import gc
    from vllm.distributed import cleanup_dist_env_and_memory

    kw = dict(
        model=fx.model("target"),
        dtype="float32",
        max_model_len=1024,
        enforce_eager=True,
        seed=0,
        max_num_seqs=1,
        disable_log_stats=False,
    )
    if spec:
        kw["speculative_config"] = spec
    llm = LLM(**kw)
    before = harness._metric_snapshot(llm)
    outs = llm.generate(inputs, params, use_tqdm=False)
    c = harness._delta(before, harness._metric_snapshot(llm))
    toks = [list(o.outputs[0].token_ids) for o in outs]
    del llm
    gc.collect()
    cleanup_dist_env_and_memory()
    return toks, c


base, _ = engine(None)
# teacher-forced draft predictions on the target's continuation
from transformers import AutoModelForCausalLM

dm = AutoModelForCausalLM.from_pretrained(
    fx.model(draft_key), torch_dtype=torch.float32
).eval()
match = []
with torch.no_grad():
    for p, cont in zip(prompts, base):
        ids = torch.tensor([p["prompt_token_ids"] + cont])
        logits = dm(ids).logits[0]
        L = len(p["prompt_token_ids"])
        pred = logits[L - 1 : L - 1 + len(cont)].argmax(-1).tolist()
        match.append([int(a == b) for a, b in zip(pred, cont)])
print(
    "teacher-forced acceptance (all positions):",
    sum(map(sum, match)) / sum(map(len, match)),
)
for K in KS:
    steps = acc = 0
    for m in match:
        t = 0
        while t < len(m) - 1:
            a = 0
            while a < K and t + a < len(m) and m[t + a]:
                a += 1
            steps += 1
            acc += a
            t += a + 1
    toks, c = engine(
        {
            "method": "draft_model",
            "model": fx.model(draft_key),
            "num_speculative_tokens": K,
        }
    )
    same = sum(a == b for a, b in zip(toks, base))
    P = harness.SPEC_PREFIX
    nd = c[P + "num_drafts"]
    na = c[P + "num_accepted_tokens"]
    print(
        f"K={K}: walk acc/step {acc / steps:.3f} ({steps} steps); engine acc/step {na / nd:.3f} ({nd} steps), "
        f"per pos {[round(x / nd, 3) for x in c.get(P + 'num_accepted_tokens_per_pos', [])]}; outputs equal to target {same}/{len(base)}"
    )
