"""Stop rules replayed on the drafter's real traces, request by request.

    python benchmarks/trace_stop_sim.py --tune TUNE.json.gz --test TEST.json.gz \\
        [--costs 1:4.69/1.09] [--cap 4] [--out FILE.json]

``stop_rule_sim.py`` draws each draft's confidence independently from a
calibration table; there no stop on a calibrated confidence came within
reach of issue 29's 1.10x best-K SD at one request (1.044-1.052x, an oracle
1.23-1.27x: ``benchmarks/results/2026-12-05-cpu-s42-stop-rule-bound/``). Real
drafts are not independent: a request that is easy for the drafter stays
easy, and confidences along a draft move together. This replays
``benchmarks/calibration.py --trace`` files instead: each prompt's target
continuation, position by position, with the drafter's confidence ``p``
there, its second probability ``p2``, its entropy, and whether its token was
the target's (greedy acceptance after an accepted prefix).

One request in flight (the point where the issue asks 1.10x). A step starts
at position ``t``: the policy drafts ``n`` tokens (1 to ``--cap``; the first
draft pass always runs), the target accepts the leading run ``a`` of
accepted positions among ``t .. t + n - 1`` and adds one token, the next step
starts at ``t + a + 1``; a step costs ``V + n D`` (``--costs B:V/D``, the
start-up table's target step and draft step; only ``B = 1`` is used). A draft
after a rejected one is wasted whatever the drafter says there, but the
policy still reads a confidence for it: the trace's value at that position
(measured after the target's tokens, not after the drafter's wrong one), an
approximation that touches only the cost of wasted drafts.

Predictors of a draft's acceptance, each fitted on ``--tune`` (per bin, the
accepted share; empty bins fall back to the coarser table) and scored on
``--test`` (Brier score, log loss):

- ``raw``: ``p`` itself (what the series' rule reads);
- ``calibrated``: ``p``'s bin (10 equal bins);
- ``margin``: ``p``'s bin x the bin of ``p - p2``;
- ``history``: ``p``'s bin x the request's recent acceptance (an average of
  its last verified drafts' outcomes, ``--history-decay``; what a per-request
  estimate on the device, updated after each verify, could read);
- ``both``: ``p`` x margin x history;
- ``online``: nothing fitted: ``p`` plus its bin's bias, learnt as the replay
  goes (after each verify, per bin, the verified drafts' accepted count minus
  their summed ``p``, over their count plus ``--online-weight`` pseudo-drafts;
  both sums decayed by ``--online-decay`` a draft): what a per-bin estimate
  on the device, updated after each verify with no sync, would read. It
  starts at the raw ``p`` (the series' rule) on each split, as an engine
  starts cold;
- ``logistic``: nothing fitted either: vLLM's own online estimator of
  adaptive verification (``OnlineAcceptanceEstimator``, MRV2), replayed:
  ``sigmoid(w logit(p) + b_k)``, one slope and an intercept per draft
  position ``k``, from its cold-start coefficients, refitted by one damped
  Newton (IRLS) step every 100 verifies on what those verifies graded.

Policies, per predictor ``x``: ``rule-x`` (the series' rule: after a draft
step go on while ``survival x (V + j D) > D x expected tokens``, survival the
product of the step's ``x``), ``thr-x`` (draft on while the survival is at
least ``a``, the ``a`` of a grid best on ``--tune``, then scored on
``--test``); and ``sd<K>`` for every K up to the cap (best K chosen on the
tune split too, as the verdict chooses SD's K), ``oracle`` (drafts exactly
the accepted run, at least one), ``oracle-request`` (each request at the
fixed K that serves it best, known in hindsight: what any per-request
estimate, such as ``history``, can at best add to a fixed K). Reported on
both splits, test first.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stop_rule_sim import parse_costs  # noqa: E402

PREDICTORS = ("raw", "calibrated", "margin", "history", "both", "online",
              "logistic")
BINS = 10


def load_trace(path: Path) -> list[dict[str, list]]:
    """The rows of a ``calibration.py --trace`` file, each checked."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"trace_stop_sim: cannot read {path}: {e}") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not rows:
        raise SystemExit(f"trace_stop_sim: {path} has no 'rows' "
                         "(write it with benchmarks/calibration.py --trace)")
    for i, r in enumerate(rows):
        n = len(r.get("p", []))
        if not n or any(len(r.get(k, [])) != n for k in ("p2", "entropy", "accepted")):
            raise SystemExit(f"trace_stop_sim: {path} row {i}: 'p', 'p2', 'entropy' "
                             "and 'accepted' must be non-empty lists of one length")
    return rows


def _bin(value: float, bins: int = BINS) -> int:
    return min(max(int(value * bins), 0), bins - 1)


class History:
    """A request's recent acceptance: an exponentially weighted mean of its
    verified drafts' outcomes (starts at ``prior``)."""

    def __init__(self, decay: float, prior: float):
        self.decay, self.value = decay, prior

    def update(self, accepted: int) -> None:
        self.value = self.decay * self.value + (1 - self.decay) * accepted


class Predictor:
    """A draft's acceptance probability from ``(p, p2, history)``, by table
    lookup: keys per feature set, fitted as accepted shares on the tune
    split, falling back to ``p``'s bin (then the overall share) where a
    key has fewer than ``min_count`` positions."""

    def __init__(self, kind: str, min_count: int = 20, online_weight: float = 20.0,
                 online_decay: float = 1.0):
        if kind not in PREDICTORS:
            raise ValueError(f"predictor must be one of {PREDICTORS}, not {kind!r}")
        self.kind, self.min_count = kind, min_count
        self.table: dict[tuple, float] = {}
        self.coarse: dict[int, float] = {}
        self.overall = 0.5
        self.online_weight, self.online_decay = online_weight, online_decay
        self.reset()

    def reset(self) -> None:
        """Forget what ``observe`` learnt (an engine's cold start)."""
        # Per bin of p: [accepted - p summed, drafts], both decayed.
        self.bias = [[0.0, 0.0] for _ in range(BINS)]

    def observe(self, p: float, accepted: int, pos: int = 0) -> None:
        """One verified draft's outcome (``online`` learns from it; the
        fitted kinds do not change)."""
        if self.kind != "online":
            return
        s = self.bias[_bin(p)]
        s[0] = self.online_decay * s[0] + accepted - p
        s[1] = self.online_decay * s[1] + 1.0

    def key(self, p: float, p2: float, hist: float) -> tuple:
        key: tuple = (_bin(p),)
        if self.kind in ("margin", "both"):
            key += (_bin(p - p2),)
        if self.kind in ("history", "both"):
            key += (_bin(hist, 5),)
        return key

    def fit(self, samples: Sequence[tuple]) -> Predictor:
        """``samples``: ``(p, p2, history, accepted[, position])`` per verified
        draft."""
        sums: dict[tuple, list[int]] = {}
        coarse: dict[int, list[int]] = {}
        for p, p2, h, a, *_ in samples:
            for table, k in ((sums, self.key(p, p2, h)), (coarse, _bin(p))):
                s = table.setdefault(k, [0, 0])
                s[0] += a
                s[1] += 1
        self.table = {k: a / n for k, (a, n) in sums.items() if n >= self.min_count}
        self.coarse = {k: a / n for k, (a, n) in coarse.items() if n}
        if samples:
            self.overall = sum(s[3] for s in samples) / len(samples)
        return self

    def end_step(self) -> None:
        """A verify has been observed in full (nothing to do for these kinds)."""

    def __call__(self, p: float, p2: float, hist: float, pos: int = 0) -> float:
        if self.kind == "raw":
            return p
        if self.kind == "online":
            s = self.bias[_bin(p)]
            return min(max(p + s[0] / (s[1] + self.online_weight), 0.0), 1.0)
        got = self.table.get(self.key(p, p2, hist))
        if got is None:
            got = self.coarse.get(_bin(p), self.overall)
        return got


class LogisticEstimator:
    """vLLM's ``OnlineAcceptanceEstimator`` (MRV2's adaptive verification),
    replayed in Python: acceptance ``sigmoid(w f + b_k)`` of the feature
    ``f = logit(p)`` (clamped to +-40) at draft position ``k``; every verify's
    graded drafts (accepted ones and the first rejected) add to the IRLS
    normal equations, and every ``REFIT_INTERVAL`` verifies one damped Newton
    step solves the arrowhead system for the slope and the intercepts, as its
    ``_refit_kernel`` does. Same interface as ``Predictor``."""

    REFIT_INTERVAL, DAMPING, L2 = 100, 50.0, 1e-3
    INIT_SLOPE, INIT_BIAS, MAX_LOG_ODDS = 0.5, -0.2, 40.0

    def __init__(self, positions: int):
        self.kind, self.positions = "logistic", positions
        self.reset()

    def reset(self) -> None:
        k = self.positions
        self.w, self.b = self.INIT_SLOPE, [self.INIT_BIAS] * k
        self.acc = [[0.0] * 6 for _ in range(k)]  # a, b, c, g0, g1, n per position
        self.steps = 0

    def fit(self, samples) -> LogisticEstimator:
        return self  # learns online only

    def _feature(self, p: float) -> float:
        p = min(max(p, 1e-30), 1 - 1e-16)
        return min(max(math.log(p / (1 - p)), -self.MAX_LOG_ODDS), self.MAX_LOG_ODDS)

    def __call__(self, p: float, p2: float, hist: float, pos: int = 0) -> float:
        z = self.w * self._feature(p) + self.b[min(pos, self.positions - 1)]
        return 1 / (1 + math.exp(-z)) if z > -700 else 0.0

    def observe(self, p: float, accepted: int, pos: int = 0) -> None:
        pos = min(pos, self.positions - 1)
        f, pred = self._feature(p), self(p, 0.0, 0.0, pos)
        w, r = pred * (1 - pred), accepted - pred
        s = self.acc[pos]
        for i, x in enumerate((w * f * f, w * f, w, r * f, r, 1.0)):
            s[i] += x

    def end_step(self) -> None:
        self.steps += 1
        if self.steps % self.REFIT_INTERVAL:
            return
        acc, lam = self.acc, self.L2
        c = [s[2] + lam for s in acc]
        a = sum(s[0] for s in acc) + lam
        shrink = sum(s[1] * s[1] / ck for s, ck in zip(acc, c))
        coupling = sum(s[1] * s[4] / ck for s, ck in zip(acc, c))
        step_w = (sum(s[3] for s in acc) - coupling) / (a - shrink)
        total = sum(s[5] for s in acc)
        step_w *= total / (total + self.DAMPING)
        if step_w != step_w or self.w + step_w < 0:
            step_w = 0.0
        self.w += step_w
        for k, (s, ck) in enumerate(zip(acc, c)):
            step_b = (s[4] - s[1] * step_w) / ck * s[5] / (s[5] + self.DAMPING)
            if step_b == step_b:
                self.b[k] += step_b
        self.acc = [[0.0] * 6 for _ in range(self.positions)]


def make_predictor(kind: str, cap: int, online_weight: float = 20.0,
                   online_decay: float = 1.0):
    """A predictor of ``kind`` (one of ``PREDICTORS``) for drafts up to ``cap``."""
    if kind == "logistic":
        return LogisticEstimator(cap)
    return Predictor(kind, online_weight=online_weight, online_decay=online_decay)


def samples_of(rows: list[dict[str, list]], decay: float, prior: float,
               cap: int) -> list[tuple[float, float, float, int, int]]:
    """``(p, p2, history, accepted, position in the step)`` of the drafts SD at ``cap`` would verify
    (each up to and with its step's first rejection), the history as the
    request had it before that step: what a predictor is fitted on and scored
    against."""
    out: list[tuple[float, float, float, int, int]] = []
    replay(rows, cap, 1.0, 1.0, cap, decay, prior, record=out)
    return out


def score(pred: Predictor | LogisticEstimator, samples) -> dict[str, float]:
    """Brier score and log loss of ``pred`` on ``samples`` in their order (an
    ``online`` predictor reads each before it learns from it)."""
    brier = ll = 0.0
    pred.reset()
    for p, p2, h, a, pos in samples:
        if pos == 0:
            pred.end_step()  # the samples of a new verify start at position 0
        x = min(max(pred(p, p2, h, pos), 1e-6), 1 - 1e-6)
        brier += (x - a) ** 2
        ll -= math.log(x if a else 1 - x)
        pred.observe(p, a, pos)
    n = max(len(samples), 1)
    return {"brier": brier / n, "log_loss": ll / n}


def _rates(tokens: float, time_ms: float, steps: float,
           forwards: float) -> dict[str, float]:
    return {"tokens_per_ms": tokens / time_ms, "tokens_per_step": tokens / steps,
            "draft_forwards_per_step": forwards / steps, "tokens": tokens,
            "time_ms": time_ms, "steps": steps, "forwards": forwards}


def accepted_run(acc: list, t: int, drafted: int) -> int:
    """How many of the ``drafted`` drafts from position ``t`` the target
    accepts: the leading run of accepted positions."""
    run = 0
    while run < drafted and acc[t + run]:
        run += 1
    return run


def drafts(policy, r: dict[str, list], t: int, room: int, hist: float) -> int:
    """How many tokens ``policy`` drafts in a step starting at position ``t``
    of row ``r``, at most ``room`` (at least one: the first draft pass always
    runs); ``hist`` is the request's recent acceptance before the step."""
    if policy == "oracle":
        return max(accepted_run(r["accepted"], t, room), 1)
    if isinstance(policy, int):
        return min(policy, room)
    drafted = 0
    xs: list[float] = []
    while drafted < room:
        j = t + drafted
        xs.append(policy.predict(r["p"][j], r["p2"][j], hist, drafted))
        drafted += 1
        if drafted >= room or not policy.go_on(xs):
            break
    return drafted


def replay(rows: list[dict[str, list]], policy, verify_ms: float, draft_ms: float,
           cap: int, decay: float, prior: float,
           record: list | None = None) -> dict[str, float]:
    """Tokens per ms (and per step, forwards per step, and their totals) of
    ``policy``: an int K (fixed), "oracle", or a ``Rule`` / ``Threshold``
    (its ``predict`` gives each draft's value, its ``go_on`` says whether to
    draft one more after the values so far). ``record`` gets ``(p, p2,
    history before the step, accepted)`` of each verified draft (up to and
    with the step's first rejection)."""
    tokens = time_ms = steps = forwards = 0.0
    # The predictor a stop rule reads learns (if ``online``) from each verify.
    learner = policy.predict if isinstance(policy, (Rule, Threshold)) else None
    if learner is not None:
        learner.reset()
    for r in rows:
        hist = History(decay, prior)
        t, n = 0, len(r["p"])
        acc = r["accepted"]
        while t < n:
            room = min(cap, n - t)
            h0 = hist.value
            drafted = drafts(policy, r, t, room, h0)
            run = accepted_run(acc, t, drafted)
            for j in range(t, t + min(run + 1, drafted)):
                if record is not None:
                    record.append((r["p"][j], r["p2"][j], h0, acc[j], j - t))
                if learner is not None:
                    learner.observe(r["p"][j], acc[j], j - t)
                hist.update(acc[j])
            if learner is not None:
                learner.end_step()
            tokens += min(run + 1, n - t)
            time_ms += verify_ms + drafted * draft_ms
            steps += 1
            forwards += drafted
            t += run + 1
    return _rates(tokens, time_ms, steps, forwards)


def best_k_per_request(rows, run, cap: int) -> dict[str, float]:
    """Every request at its own best fixed K (hindsight), summed as ``replay``
    sums requests: total tokens over total time."""
    totals = [0.0] * 4
    for r in rows:
        best = max((run([r], k) for k in range(1, cap + 1)),
                   key=lambda x: x["tokens_per_ms"])
        for i, key in enumerate(("tokens", "time_ms", "steps", "forwards")):
            totals[i] += best[key]
    return _rates(*totals)


class Rule:
    """The series' rule on a predictor: after ``j`` drafts go on while the
    expected extra token of one more (survival x the last value) per draft
    step beats the step's expected tokens per ms so far."""

    def __init__(self, predict: Predictor, verify_ms: float, draft_ms: float):
        self.predict, self.v, self.d = predict, verify_ms, draft_ms

    def go_on(self, xs: list[float]) -> bool:
        survival, total = 1.0, 1.0
        for x in xs:
            survival *= x
            total += survival
        gain = survival * xs[-1]
        return gain * (self.v + len(xs) * self.d) > self.d * total


class Threshold:
    """Draft on while the survival (product of the values) is at least ``a``."""

    def __init__(self, predict: Predictor, a: float):
        self.predict, self.a = predict, a

    def go_on(self, xs: list[float]) -> bool:
        return math.prod(xs) >= self.a


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tune", required=True, type=Path, help="trace the predictors, "
                    "SD's K and the thresholds are chosen on")
    ap.add_argument("--test", required=True, type=Path, help="trace they are scored on")
    ap.add_argument("--costs", default="1:4.69/1.09",
                    help="B:V/D target step and draft step in ms at one request "
                         "(default: the H200 proxies' start-up table, session 15)")
    ap.add_argument("--cap", type=int, default=4, help="K, the most drafts a step")
    ap.add_argument("--history-decay", type=float, default=0.8,
                    help="weight of the old value in the request's recent acceptance")
    ap.add_argument("--online-weight", type=float, default=20.0,
                    help="pseudo-drafts at zero bias in each bin of the online predictor")
    ap.add_argument("--online-decay", type=float, default=1.0,
                    help="weight a draft keeps in the online predictor's sums at each "
                         "newer draft of its bin (1: never forgets)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.cap < 1:
        raise SystemExit("trace_stop_sim: --cap must be >= 1")
    if not 0 <= args.history_decay < 1:
        raise SystemExit("trace_stop_sim: --history-decay must be in [0, 1)")
    if args.online_weight <= 0:
        raise SystemExit("trace_stop_sim: --online-weight must be > 0")
    if not 0 < args.online_decay <= 1:
        raise SystemExit("trace_stop_sim: --online-decay must be in (0, 1]")
    v, d = next(iter(parse_costs(args.costs).values()))
    tune, test = load_trace(args.tune), load_trace(args.test)
    decay = args.history_decay
    fit_samples = samples_of(tune, decay, 0.5, args.cap)
    prior = sum(s[3] for s in fit_samples) / len(fit_samples)
    fit_samples = samples_of(tune, decay, prior, args.cap)
    test_samples = samples_of(test, decay, prior, args.cap)
    preds = {k: make_predictor(k, args.cap, args.online_weight,
                               args.online_decay).fit(fit_samples)
             for k in PREDICTORS}

    def run(rows, policy):
        return replay(rows, policy, v, d, args.cap, decay, prior)

    grid = [a / 100 for a in range(2, 100, 2)]
    result: dict = {"tune": str(args.tune), "test": str(args.test), "verify_ms": v,
                    "draft_ms": d, "cap": args.cap, "history_decay": decay,
                    "online_weight": args.online_weight,
                    "online_decay": args.online_decay,
                    "prior": prior, "predictors": {}, "splits": {}}
    for k, pred in preds.items():
        result["predictors"][k] = {"tune": score(pred, fit_samples),
                                   "test": score(pred, test_samples)}
    best_thr = {}
    for k, pred in preds.items():
        best_thr[k] = max(grid, key=lambda a: run(tune, Threshold(pred, a))["tokens_per_ms"])
    sd_tune = {K: run(tune, K)["tokens_per_ms"] for K in range(1, args.cap + 1)}
    best_k = max(sd_tune, key=sd_tune.get)
    result["best_sd_k_on_tune"] = best_k
    result["thresholds_on_tune"] = best_thr
    for name, rows in (("test", test), ("tune", tune)):
        res = {f"sd{K}": run(rows, K) for K in range(1, args.cap + 1)}
        res["oracle"] = run(rows, "oracle")
        res["oracle-request"] = best_k_per_request(rows, run, args.cap)
        for k, pred in preds.items():
            res[f"rule-{k}"] = run(rows, Rule(pred, v, d))
            res[f"thr-{k}"] = run(rows, Threshold(pred, best_thr[k]))
        base = res[f"sd{best_k}"]["tokens_per_ms"]
        result["splits"][name] = {
            "policies": res,
            "vs_best_sd": {p: r["tokens_per_ms"] / base for p, r in res.items()}}
    print(f"costs V {v} ms, D {d} ms, cap {args.cap}; SD's K chosen on tune: {best_k}; "
          f"history decay {decay}, prior {prior:.3f}")
    print(f"{'predictor':>11} {'Brier test':>10} {'log loss':>9}  threshold")
    for k in PREDICTORS:
        s = result["predictors"][k]["test"]
        print(f"{k:>11} {s['brier']:10.4f} {s['log_loss']:9.4f}  {best_thr[k]:.2f}")
    for name in ("test", "tune"):
        ratios = result["splits"][name]["vs_best_sd"]
        pol = result["splits"][name]["policies"]
        print(f"{name}: x best-K SD (sd{best_k}), tokens/step, forwards/step")
        for p in ratios:
            print(f"  {p:>16} {ratios[p]:.3f}  {pol[p]['tokens_per_step']:.2f}  "
                  f"{pol[p]['draft_forwards_per_step']:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
