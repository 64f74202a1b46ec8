"""How well the drafter's confidence predicts greedy acceptance (HF transformers only).

    python benchmarks/calibration.py --target T --draft D --prompts DIR \\
        [--models DIR] [--dataset sharegpt-tune] [--num-prompts 64] \\
        [--max-tokens 64] [--batch-size 16] [--bins 10] [--out FILE.json] \\
        [--trace FILE.json.gz]

DSL stops drafting on the drafter's confidence p (the probability of the
token it just drafted); this measures how well p predicts that the target
accepts the token. For each of ``--num-prompts`` prompts of the split (the
first ones, as ``run.py``'s ``load_prompts`` reads ``DIR/<dataset>.jsonl``,
prompts of at most 1024 tokens):

1. the target's greedy continuation of ``--max-tokens`` tokens (no stop at
   EOS, like the benchmarks' ``ignore_eos``);
2. one forward pass of the target and one of the draft over prompt +
   continuation; at each continuation position t, p = the draft's largest
   softmax probability there, and accepted = (the draft's argmax == the
   target's argmax). The prefix is the target's own tokens, so this is greedy
   verification's acceptance of a draft at that position given that all
   earlier ones were accepted (at any draft position: an accepted prefix is
   the target's tokens).

Output (``--out`` JSON and a printed table): ``--bins`` equal-width bins of p,
each with its count, mean p and accept rate; the expected calibration error
``ece`` = sum over bins of count/N * |accept rate - mean p| (0: p is the
acceptance probability); the Brier score; ``accept_rate`` over every position
(what vLLM reports as the acceptance at draft position 1: every position
here is a first draft after an accepted prefix); and
``accept_rate_first_token``, at the first continuation token after the prompt.
With ``--trace``, also every prompt's positions in order (``p``, the second
largest probability ``p2``, the entropy in nats, ``accepted``), so that a stop
rule can be replayed request by request with the correlations a calibration
table averages away (``benchmarks/trace_stop_sim.py``). A position's values
are those after an accepted prefix (the target's tokens): where a draft is
rejected, what the drafter says after its own wrong token is not measured.

bf16 on CUDA, fp32 on CPU (``--dtype`` overrides); prompts are batched
(``--batch-size``, left-padded, sorted by length). No vLLM.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import load_prompts, model_path  # noqa: E402


def batches(prompts: list[list[int]], size: int):
    """Prompts in batches of similar length (less padding), with their indices."""
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    for s in range(0, len(order), size):
        idx = order[s:s + size]
        yield idx, [prompts[i] for i in idx]


def left_pad(rows: list[list[int]], pad: int, device):
    """ids, attention mask and position ids of left-padded rows."""
    import torch

    n = max(len(r) for r in rows)
    ids = torch.full((len(rows), n), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), n), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, n - len(r):] = torch.tensor(r, dtype=torch.long)
        mask[i, n - len(r):] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), pos.to(device)


def greedy(model, ids, mask, pos, max_tokens: int):
    """The model's greedy continuation of ``max_tokens`` tokens (KV cache; the
    logits of the last position only)."""
    import torch

    base, head = model.base_model, model.get_output_embeddings()
    out_ids = []
    past = None
    cur_ids, cur_pos = ids, pos
    for _ in range(max_tokens):
        out = base(input_ids=cur_ids, attention_mask=mask, position_ids=cur_pos,
                   past_key_values=past, use_cache=True)
        past = out.past_key_values
        nxt = head(out.last_hidden_state[:, -1]).float().argmax(-1)
        out_ids.append(nxt)
        cur_ids = nxt[:, None]
        cur_pos = cur_pos[:, -1:] + 1
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
    return torch.stack(out_ids, dim=1)


def position_hidden(model, ids, mask, pos, num: int):
    """The last hidden state (after the final norm: what the LM head reads)
    at the positions predicting the last ``num`` tokens of ``ids``."""
    hidden = model.base_model(input_ids=ids, attention_mask=mask,
                              position_ids=pos).last_hidden_state
    n = ids.shape[1]
    return hidden[:, n - num - 1:n - 1]


def position_logits(model, ids, mask, pos, num: int):
    """Logits predicting the last ``num`` tokens of ``ids`` (float32)."""
    return model.get_output_embeddings()(position_hidden(model, ids, mask, pos, num)).float()


def measure_rows(target, draft, prompts: list[list[int]], max_tokens: int,
                 batch_size: int, pad: int, device,
                 hidden: bool = False) -> list[dict[str, list]]:
    """Per prompt (in the order given), per continuation position: the
    draft's confidence ``p`` (its largest softmax probability), the second
    largest ``p2``, the entropy of its distribution in nats, and whether its
    argmax is the target's (``accepted``, 0/1); with ``hidden``, also the
    draft's last hidden state there (``hidden``: a float16 CPU tensor of
    positions x hidden size)."""
    import torch

    results: dict[int, dict[str, list]] = {}

    def one_batch(rows):
        ids, mask, pos = left_pad(rows, pad, device)
        cont = greedy(target, ids, mask, pos, max_tokens)
        full = torch.cat([ids, cont], dim=1)
        fmask = torch.cat([mask, torch.ones_like(cont)], dim=1)
        fpos = (fmask.cumsum(-1) - 1).clamp(min=0)
        t_logits = position_logits(target, full, fmask, fpos, max_tokens)
        d_hidden = position_hidden(draft, full, fmask, fpos, max_tokens)
        d_logits = draft.get_output_embeddings()(d_hidden).float()
        if not (torch.isfinite(t_logits).all() and torch.isfinite(d_logits).all()):
            return None
        probs = d_logits.softmax(-1)
        top = probs.topk(2, dim=-1)
        p, p2 = top.values[..., 0], top.values[..., 1]
        entropy = -(probs * d_logits.log_softmax(-1)).sum(-1)
        ok = (top.indices[..., 0] == t_logits.argmax(-1)).int()
        out = [{"p": p[j].tolist(), "p2": p2[j].tolist(),
                "entropy": entropy[j].tolist(), "accepted": ok[j].tolist()}
               for j in range(len(rows))]
        if hidden:
            for j, row in enumerate(out):
                row["hidden"] = d_hidden[j].to("cpu", torch.float16).clone()
        return out

    with torch.inference_mode():
        for idx, rows in batches(prompts, batch_size):
            got = one_batch(rows)
            if got is None and len(rows) > 1:
                # Non-finite logits in a padded batch (an attention kernel's
                # fully masked rows): the prompts one at a time, unpadded.
                print(f"calibration: non-finite logits in a batch of {len(rows)}; "
                      "running its prompts one at a time", file=sys.stderr)
                got = [one_batch([r]) for r in rows]
                if any(g is None for g in got):
                    raise RuntimeError("non-finite logits without padding")
                got = [g[0] for g in got]
            if got is None:
                raise RuntimeError("non-finite logits")
            for i, r in zip(idx, got):
                results[i] = r
    return [results[i] for i in sorted(results)]


def flatten(rows: list[dict[str, list]]) -> tuple[list[float], list[int], list[int]]:
    """``measure_rows``' rows as one list per value, prompt-major: p,
    accepted, and t (the position within the prompt's continuation)."""
    ps = [p for r in rows for p in r["p"]]
    acc = [a for r in rows for a in r["accepted"]]
    ts = [t for r in rows for t in range(len(r["p"]))]
    return ps, acc, ts


def measure(target, draft, prompts: list[list[int]], max_tokens: int,
            batch_size: int, pad: int, device) -> tuple[list[float], list[int],
                                                        list[int]]:
    """Per position (prompt-major, t within): draft confidence p, accepted
    (0/1), and t."""
    return flatten(measure_rows(target, draft, prompts, max_tokens, batch_size,
                                pad, device))


def write_trace(path: Path, header: dict, rows: list[dict[str, list]]) -> None:
    """``rows`` (``measure_rows``) as gzipped JSON beside ``header``: what
    ``benchmarks/trace_stop_sim.py`` replays, request by request."""
    import gzip

    def rounded(values):
        return [round(float(v), 5) for v in values]

    data = {**header, "rows": [
        {"prompt": i, "p": rounded(r["p"]), "p2": rounded(r["p2"]),
         "entropy": rounded(r["entropy"]), "accepted": [int(a) for a in r["accepted"]]}
        for i, r in enumerate(rows)]}
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(data, f)


def reliability(ps: list[float], acc: list[int], ts: list[int], nbins: int) -> dict:
    """Equal-width bins of p: count, mean p, accept rate; ECE, Brier, rates."""
    bins = [{"lo": b / nbins, "hi": (b + 1) / nbins, "count": 0, "sum_p": 0.0,
             "accepted": 0} for b in range(nbins)]
    for p, a in zip(ps, acc):
        b = bins[min(int(p * nbins), nbins - 1)]
        b["count"] += 1
        b["sum_p"] += p
        b["accepted"] += a
    n = len(ps)
    ece = 0.0
    for b in bins:
        c = b["count"]
        b["mean_p"] = b.pop("sum_p") / c if c else None
        b["accept_rate"] = b["accepted"] / c if c else None
        if c:
            ece += c / n * abs(b["accept_rate"] - b["mean_p"])
    first = [a for a, t in zip(acc, ts) if t == 0]
    return {"num_positions": n,
            "accept_rate": sum(acc) / n if n else None,
            "accept_rate_first_token": sum(first) / len(first) if first else None,
            "mean_confidence": sum(ps) / n if n else None,
            "ece": ece if n else None,
            "brier": sum((p - a) ** 2 for p, a in zip(ps, acc)) / n if n else None,
            "bins": bins}


def table(res: dict) -> str:
    def f(x, fmt=".3f"):
        return "-" if x is None else format(x, fmt)
    lines = [f"{res['draft']} drafting for {res['target']} on {res['dataset']}: "
             f"{res['num_prompts']} prompts x {res['max_tokens']} tokens "
             f"({res['dtype']}, {res['device']})",
             f"{'p bin':>11} {'count':>7} {'mean p':>7} {'accept':>7}"]
    for b in res["bins"]:
        lines.append(f"[{b['lo']:.2f},{b['hi']:.2f}) {b['count']:7d} "
                     f"{f(b['mean_p']):>7} {f(b['accept_rate']):>7}")
    lines.append(f"positions {res['num_positions']}, accept rate {f(res['accept_rate'])} "
                 f"(first token {f(res['accept_rate_first_token'])}), mean p "
                 f"{f(res['mean_confidence'])}, ECE {f(res['ece'], '.4f')}, "
                 f"Brier {f(res['brier'], '.4f')}")
    return "\n".join(lines)


def load_model(models, name: str, dtype, device):
    """``name`` (a folder under ``models``, else a hub name) as an HF causal
    LM in ``dtype`` on ``device``, in eval mode (sdpa attention)."""
    import transformers
    from transformers import AutoModelForCausalLM

    # ``dtype`` from transformers 4.56 on; before, ``torch_dtype`` (an unknown
    # ``dtype`` would be set on the config and silently ignored).
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    dtype_kw = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    m = AutoModelForCausalLM.from_pretrained(
        model_path(str(models), name), attn_implementation="sdpa", **{dtype_kw: dtype})
    m = m.to(device).eval()
    if next(m.parameters()).dtype != dtype:
        raise SystemExit(f"{name} loaded as {next(m.parameters()).dtype}, not {dtype}")
    return m


def pad_token(config) -> int:
    """The id left padding uses: the pad token, else the (first) EOS, else 0."""
    pad = config.pad_token_id
    if pad is None:
        eos = config.eos_token_id
        pad = (eos[0] if isinstance(eos, list) else eos) or 0
    return pad


def add_pair_arguments(ap: argparse.ArgumentParser) -> None:
    """The pair and prompts ``measure_rows`` reads (``load_model`` and
    ``run.load_prompts``): --models, --target, --draft, --prompts, --dataset."""
    ap.add_argument("--models", default=".", help="folder of --target/--draft "
                    "(they may also be paths or hub ids)")
    ap.add_argument("--target", required=True)
    ap.add_argument("--draft", required=True)
    ap.add_argument("--prompts", required=True, type=Path)
    ap.add_argument("--dataset", default="sharegpt-tune")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    add_pair_arguments(ap)
    ap.add_argument("--num-prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--bins", type=int, default=10)
    ap.add_argument("--device", default="auto", help="auto (cuda if any), cuda, cpu")
    ap.add_argument("--dtype", default="auto",
                    help="auto (bfloat16 on CUDA, float32 on CPU), or a torch dtype")
    ap.add_argument("--out", type=Path, default=Path("calibration.json"))
    ap.add_argument("--trace", type=Path,
                    help="also write every prompt's per-position confidence, "
                         "second probability, entropy and acceptance here "
                         "(gzipped JSON, for benchmarks/trace_stop_sim.py)")
    args = ap.parse_args(argv)

    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype_name = args.dtype
    if dtype_name == "auto":
        dtype_name = "bfloat16" if device.startswith("cuda") else "float32"
    dtype = getattr(torch, dtype_name)
    prompts = load_prompts(args.prompts, args.dataset, 1024)[:args.num_prompts]
    if not prompts:
        raise SystemExit(f"no prompts in {args.prompts}/{args.dataset}.jsonl")

    t0 = time.perf_counter()
    target = load_model(args.models, args.target, dtype, device)
    draft = load_model(args.models, args.draft, dtype, device)
    pad = pad_token(target.config)
    rows = measure_rows(target, draft, prompts, args.max_tokens, args.batch_size,
                        pad, device)
    ps, acc, ts = flatten(rows)
    header = {"target": args.target, "draft": args.draft, "dataset": args.dataset,
              "num_prompts": len(prompts), "max_tokens": args.max_tokens,
              "dtype": dtype_name, "device": device}
    if args.trace:
        write_trace(args.trace, header, rows)
    res = {**header,
           **reliability(ps, acc, ts, args.bins),
           "wall_s": time.perf_counter() - t0}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(table(res))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
