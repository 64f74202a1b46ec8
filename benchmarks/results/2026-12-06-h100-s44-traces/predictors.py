"""Logistic acceptance predictors fitted on the tune trace, scored on the test trace
(session 44): does anything in the drafter's distribution (second probability, entropy,
margin) or the previous position's acceptance predict acceptance better than p itself?
    python benchmarks/results/2026-12-06-h100-s44-traces/predictors.py > predictors.txt"""
import gzip, json, sys
import numpy as np
D = __import__("os").path.dirname(__file__) or "."
def load(nl, split):
    d = json.load(gzip.open(f"{D}/trace-l{nl}-self-{split}.json.gz"))
    X, y = [], []
    for r in d["rows"]:
        p = np.array(r["p"]); p2 = np.array(r["p2"]); h = np.array(r["entropy"]); a = np.array(r["accepted"])
        prev = np.concatenate([[0.5], a[:-1]])  # previous position's acceptance (teacher-forced)
        lp = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1))
        X.append(np.stack([lp, np.log(np.clip(p2, 1e-6, 1)), h, np.log(np.clip(p - p2, 1e-6, 1)), prev], 1)); y.append(a)
    return np.concatenate(X), np.concatenate(y).astype(float)
def fit(X, y, iters=3000, lr=0.5):
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Z = np.c_[np.ones(len(X)), (X - mu) / sd]; w = np.zeros(Z.shape[1])
    for _ in range(iters):
        q = 1 / (1 + np.exp(-Z @ w)); w -= lr * Z.T @ (q - y) / len(y)
    return lambda X: 1 / (1 + np.exp(-(np.c_[np.ones(len(X)), (X - mu) / sd] @ w)))
for nl in (16, 4):
    Xt, yt = load(nl, "tune"); Xs, ys = load(nl, "test")
    print(f"l{nl}: test acceptance {ys.mean():.3f}")
    for name, cols in [("logit p", [0]), ("p, p2", [0, 1]), ("p, entropy", [0, 2]), ("p, p2, entropy, margin", [0, 1, 2, 3]),
                       ("all + previous accepted", [0, 1, 2, 3, 4])]:
        f = fit(Xt[:, cols], yt); q = f(Xs[:, cols])
        brier = np.mean((q - ys) ** 2); ll = -np.mean(ys * np.log(q) + (1 - ys) * np.log(1 - q))
        print(f"  {name:26s} Brier {brier:.4f}  log loss {ll:.4f}")
