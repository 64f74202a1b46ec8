"""Would a learned acceptance head stop drafts better than the drafter's
confidence? (SpecDec++'s question, on this series' drafter; HF only, no vLLM.)

    python benchmarks/acceptance_head.py collect --models DIR --target T --draft D \\
        --prompts DIR --dataset sharegpt-tune [--num-prompts 96] [--max-tokens 192] \\
        [--max-prompt-tokens 512] --out TUNE.pt --trace TUNE.json.gz
    python benchmarks/acceptance_head.py fit --tune TUNE.pt --test TEST.pt \\
        --out-dir DIR [--l2 GRID] [--folds 5]

The series stops drafting on the drafter's confidence ``p`` (its top softmax
probability); replayed on real traces (``trace_stop_sim.py``) that reaches
1.07-1.10x SD's best K at one request, against an oracle's 1.24-1.33x, and
calibrating ``p`` or adding its margin or the request's history adds at
most ~1% (sessions 44 and 46). SpecDec++ (arXiv 2405.19715) instead trains
a small head on the drafter's hidden state to predict acceptance. This
measures whether such a head, here a logistic regression, separates accepted
from rejected drafts better than ``p`` on this drafter:

``collect``: ``calibration.py``'s ``measure_rows`` (the target's greedy
continuation, then one forward of each model over prompt + continuation, so
every position is a draft after an accepted prefix), writes per prompt and position ``p``,
``p2``, the entropy, ``accepted`` and the drafter's last hidden state (after
its final norm: what its LM head reads) to ``--out`` (torch), and the same
positions as a ``calibration.py --trace`` file to ``--trace`` (the raw
confidence's replay from the very same positions). Prompts are the split's
first ``--num-prompts`` of at most ``--max-prompt-tokens`` tokens (CPU time
grows with their length).

``fit``: features = the hidden state, logit(p), logit(p2), entropy,
standardized on tune; L2-regularized logistic regression (LBFGS), the L2
weight chosen by ``--folds``-fold cross-validation over prompts on tune
(log loss). Tune's own predictions are out-of-fold (so a threshold chosen on
them is not fitted to them); test's come from the model refitted on all of
tune. ``--no-hidden`` fits the same regression without the hidden state
(the confidence's own features, calibrated), the baseline the head must
beat; ``--pca N`` keeps the hidden state's first N principal directions. Writes ``head-tune.json.gz`` and ``head-test.json.gz`` in ``--out-dir``:
the traces with ``p`` replaced by the head's acceptance probability (``p2``
and the entropy kept), so ``trace_stop_sim.py``'s ``raw`` predictor there is
the rule reading the head; and ``head.json`` with the Brier score and log
loss of ``p`` and of the head on test.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import add_pair_arguments  # noqa: E402


def collect(args: argparse.Namespace) -> int:
    import torch

    from calibration import load_model, measure_rows, pad_token, write_trace
    from run import load_prompts

    prompts = load_prompts(args.prompts, args.dataset, args.max_prompt_tokens)
    prompts = prompts[:args.num_prompts]
    if not prompts:
        raise SystemExit(f"acceptance_head: no prompts of at most "
                         f"{args.max_prompt_tokens} tokens in "
                         f"{args.prompts}/{args.dataset}.jsonl")
    torch.manual_seed(0)
    t0 = time.perf_counter()
    target = load_model(args.models, args.target, torch.float32, "cpu")
    draft = load_model(args.models, args.draft, torch.float32, "cpu")
    num = args.max_tokens
    rows = measure_rows(target, draft, prompts, num, args.batch_size,
                        pad_token(target.config), "cpu", hidden=True)
    header = {"target": args.target, "draft": args.draft, "dataset": args.dataset,
              "num_prompts": len(prompts), "max_tokens": num,
              "max_prompt_tokens": args.max_prompt_tokens, "dtype": "float32",
              "device": "cpu"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"header": header, "rows": rows}, args.out)
    write_trace(args.trace, header, rows)
    acc = sum(sum(r["accepted"]) for r in rows) / sum(len(r["p"]) for r in rows)
    print(f"wrote {args.out} and {args.trace}: {len(rows)} prompts x {num} "
          f"positions, acceptance {acc:.3f}, {time.perf_counter() - t0:.0f} s")
    return 0


def features(rows: list[dict], hidden: bool = True):
    """Per position (prompt-major): the hidden state (unless ``hidden`` is
    False), logit(p), logit(p2), entropy; the accepted labels; each
    position's prompt index."""
    import torch

    eps = 1e-6
    xs, ys, groups = [], [], []
    for g, r in enumerate(rows):
        p = torch.tensor(r["p"]).clamp(eps, 1 - eps)
        p2 = torch.tensor(r["p2"]).clamp(eps, 1 - eps)
        extra = torch.stack([p.logit(), p2.logit(), torch.tensor(r["entropy"])], 1)
        xs.append(torch.cat([r["hidden"].float(), extra], 1) if hidden else extra)
        ys.append(torch.tensor(r["accepted"], dtype=torch.float32))
        groups += [g] * len(r["p"])
    return torch.cat(xs), torch.cat(ys), torch.tensor(groups)


def fit_logistic(x, y, l2: float, steps: int = 200):
    """Weights and bias of an L2-regularized logistic regression (LBFGS)."""
    import torch

    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1, max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w + b, y)
        loss = loss + l2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach(), b.detach()


def scores(q, y) -> dict[str, float]:
    q = q.clamp(1e-6, 1 - 1e-6)
    return {"brier": float(((q - y) ** 2).mean()),
            "log_loss": float(-(y * q.log() + (1 - y) * (1 - q).log()).mean())}


def fit(args: argparse.Namespace) -> int:
    import torch

    tune = torch.load(args.tune, weights_only=False)["rows"]
    test_data = torch.load(args.test, weights_only=False)
    test = test_data["rows"]
    xt, yt, gt = features(tune, not args.no_hidden)
    xs, ys, _ = features(test, not args.no_hidden)
    if args.pca and not args.no_hidden:
        # The hidden state's first ``--pca`` principal directions on tune
        # (fewer weights to fit), then the three confidence features.
        h = xt.shape[1] - 3
        center = xt[:, :h].mean(0)
        basis = torch.linalg.svd(xt[:, :h] - center, full_matrices=False)[2][:args.pca].T
        xt = torch.cat([(xt[:, :h] - center) @ basis, xt[:, h:]], 1)
        xs = torch.cat([(xs[:, :h] - center) @ basis, xs[:, h:]], 1)
    mean, std = xt.mean(0), xt.std(0).clamp(min=1e-6)
    xt, xs = (xt - mean) / std, (xs - mean) / std
    folds = gt % args.folds
    grid = [float(v) for v in args.l2.split(",")]
    cv: dict[float, float] = {}
    oof_by_l2: dict[float, torch.Tensor] = {}
    for l2 in grid:
        oof = torch.empty_like(yt)
        for k in range(args.folds):
            tr, va = folds != k, folds == k
            w, b = fit_logistic(xt[tr], yt[tr], l2)
            oof[va] = torch.sigmoid(xt[va] @ w + b)
        oof_by_l2[l2] = oof
        cv[l2] = scores(oof, yt)["log_loss"]
        print(f"acceptance_head: l2 {l2:g}: cross-validated log loss {cv[l2]:.4f}",
              file=sys.stderr)
    best = min(cv, key=cv.get)
    w, b = fit_logistic(xt, yt, best)
    q_test = torch.sigmoid(xs @ w + b)
    q_tune = oof_by_l2[best]
    p_test = torch.tensor([p for r in test for p in r["p"]])
    p_tune = torch.tensor([p for r in tune for p in r["p"]])
    kind = "p" if args.no_hidden else (f"hidden[pca {args.pca}]+p" if args.pca else "hidden+p")
    result = {"features": kind, "l2": best, "cv_log_loss": cv, "folds": args.folds,
              "tune_positions": len(yt), "test_positions": len(ys),
              "test": {"raw_p": scores(p_test, ys), "head": scores(q_test, ys)},
              "tune_out_of_fold": {"raw_p": scores(p_tune, yt), "head": scores(q_tune, yt)},
              "test_acceptance": float(ys.mean())}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows, q in (("tune", tune, q_tune), ("test", test, q_test)):
        out, at = [], 0
        for i, r in enumerate(rows):
            n = len(r["p"])
            out.append({"prompt": i, "p": [round(float(v), 5) for v in q[at:at + n]],
                        "p2": [round(float(v), 5) for v in r["p2"]],
                        "entropy": [round(float(v), 5) for v in r["entropy"]],
                        "accepted": [int(a) for a in r["accepted"]]})
            at += n
        with gzip.open(args.out_dir / f"head-{name}.json.gz", "wt") as f:
            json.dump({**test_data["header"], "dataset": name,
                       "predictor": "logistic regression on " + result["features"],
                       "rows": out}, f)
    (args.out_dir / "head.json").write_text(json.dumps(result, indent=1))
    t = result["test"]
    print(f"test: Brier raw p {t['raw_p']['brier']:.4f}, head {t['head']['brier']:.4f}; "
          f"log loss raw p {t['raw_p']['log_loss']:.4f}, head {t['head']['log_loss']:.4f} "
          f"(l2 {best:g}); wrote {args.out_dir}/head-{{tune,test}}.json.gz")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="positions and hidden states of one split")
    add_pair_arguments(c)
    c.add_argument("--num-prompts", type=int, default=96)
    c.add_argument("--max-tokens", type=int, default=192)
    c.add_argument("--max-prompt-tokens", type=int, default=512)
    c.add_argument("--batch-size", type=int, default=16)
    c.add_argument("--out", required=True, type=Path)
    c.add_argument("--trace", required=True, type=Path)
    f = sub.add_parser("fit", help="the head on tune, scored on test")
    f.add_argument("--tune", required=True, type=Path)
    f.add_argument("--test", required=True, type=Path)
    f.add_argument("--out-dir", required=True, type=Path)
    f.add_argument("--l2", default="1e-3,1e-2,3e-2,1e-1", help="L2 weights to choose from")
    f.add_argument("--folds", type=int, default=5)
    f.add_argument("--no-hidden", action="store_true",
                   help="leave the hidden state out: the same regression on "
                        "logit(p), logit(p2) and the entropy alone (what the "
                        "hidden state adds is the difference)")
    f.add_argument("--pca", type=int, default=0,
                   help="keep the hidden state's first N principal directions "
                        "on tune (0: all of it)")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        if args.num_prompts < 1 or args.max_tokens < 1:
            raise SystemExit("acceptance_head: --num-prompts and --max-tokens must be >= 1")
        return collect(args)
    if args.folds < 2:
        raise SystemExit("acceptance_head: --folds must be >= 2")
    if args.pca < 0:
        raise SystemExit("acceptance_head: --pca must be >= 0")
    return fit(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
