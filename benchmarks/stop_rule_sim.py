"""DSL's stop rule against SD at fixed K, simulated from a calibration table.

    python benchmarks/stop_rule_sim.py --calibration calibration.json \\
        [--costs 1:4.69/1.09,8:5.17/1.16,32:6.90/1.42] [--cap 4] \\
        [--samples 60000] [--seed 0] [--out FILE.json]

One request at a time (the rule's per-row form), with the drafter's
confidence ``q`` at each position drawn independently from the calibration
table's bins (``benchmarks/calibration.py``: per confidence bin its mean ``q``,
how often such a draft was accepted, and how many there were). A draft of
confidence ``q`` is accepted with the bin's measured rate, and a step's
accepted length is its run of accepted drafts. Per batch size ``B`` of
``--costs`` (``B:V/D``: target step and draft step in ms, as the series'
start-up table logs them) it reports the tokens per ms of:

- SD at every fixed K up to the cap (``sd<K>``);
- the rule as the series runs it (``raw``: after each draft step go on while
  ``gain x elapsed > D x total``, with survival and gain from the raw ``q``);
- the rule fed the calibrated confidence (``calibrated``: each ``q`` replaced
  by its bin's acceptance rate), which is what an online calibration of the
  drafter's confidence could at best give;
- with ``--oracle``, a stop that knows which drafts will be accepted
  (``oracle``: each request drafts exactly its accepted run, at most the cap,
  and pays at least the one draft pass every step runs): no stop rule, of
  any kind, can do better at that cap, so it bounds what one can gain over SD;
- with ``--thresholds``, the best stop on the calibrated survival alone
  (``survival``: draft on while the product of the drafts' calibrated
  acceptance rates is at least ``a``, the best ``a`` of a grid): with
  positions independent, as here, what a request can expect from its next
  draft depends on its survival only, so a stop that knows the calibrated
  rates can do no better than this threshold, chosen best.

What it answers: whether calibrating the confidence is worth building
(the drafter is under-confident: expected calibration error 0.114 on the
H200 proxies). Its limits: positions are independent (real confidences are
correlated along a draft), the costs are the start-up table's, which at 32
and more requests in flight under-price a served step
(``docs/dsl-at-batch-size.md``), every policy's verify is priced at the one
``V`` given (the rule's: the full width, K + 1; SD at a smaller K verifies
narrower, which matters from about 8 requests on), and there is no batch. Checked against the
H200 at one request in flight: the simulated rule is 1.045x SD at its best K
(K = 2), the measured one 1.050x (``benchmarks/results/2026-12-02-h200-s15/``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def load_bins(path: Path) -> list[tuple[float, float, int]]:
    """``(mean q, acceptance rate, count)`` of every non-empty bin."""
    data = json.loads(path.read_text())
    bins = [(b["mean_p"], b["accept_rate"], b["count"])
            for b in data.get("bins", []) if b.get("count")]
    if not bins:
        raise SystemExit(f"stop_rule_sim: {path} has no non-empty 'bins'")
    return bins


def parse_costs(text: str) -> dict[int, tuple[float, float]]:
    """``B:V/D,...`` -> ``{B: (V, D)}``."""
    costs = {}
    for item in text.split(","):
        try:
            b, vd = item.split(":")
            v, d = vd.split("/")
            costs[int(b)] = (float(v), float(d))
        except ValueError:
            raise SystemExit(f"stop_rule_sim: --costs item {item!r} is not B:V/D "
                             "(e.g. 1:4.69/1.09)") from None
        if costs[int(b)][0] <= 0 or costs[int(b)][1] <= 0:
            raise SystemExit(f"stop_rule_sim: --costs item {item!r}: V and D must be > 0")
    return costs


def simulate(bins, verify_ms: float, draft_ms: float, cap: int, policy: str,
             samples: int, rng: random.Random, rows: int = 1) -> dict:
    """Tokens per ms, tokens and ms per step of ``policy``: ``sd<K>``,
    ``raw`` or ``calibrated``, over ``rows`` requests in flight that draft
    together (one decision for the batch, as the series' rule takes it:
    go on while ``sum(survival * x) * elapsed > D * sum(total)``)."""
    weights = [c for _, _, c in bins]
    fixed = int(policy[2:]) if policy.startswith("sd") else None
    tokens = time_ms = forwards = 0.0
    for _ in range(samples):
        draws = [rng.choices(bins, weights=weights, k=cap) for _ in range(rows)]
        if policy == "oracle":
            # Knows each draft's fate: drafts the longest accepted run of the
            # batch (one loop for the batch), so every row's tokens are its
            # run plus the bonus token, as with any longer draft.
            runs = []
            for r in range(rows):
                run = 0
                for _q, p, _ in draws[r]:
                    if rng.random() >= p:
                        break
                    run += 1
                runs.append(run)
            drafted = max(runs)
            tokens += sum(runs) + rows
            time_ms += verify_ms + max(drafted, 1) * draft_ms
            forwards += max(drafted, 1)
            continue
        if fixed is not None:
            drafted = fixed
        elif policy.startswith("thr"):
            # Draft on while every row's calibrated survival is >= a.
            a = float(policy[3:])
            drafted = 0
            survival = [1.0] * rows
            for step in range(cap):
                drafted += 1
                for r in range(rows):
                    survival[r] *= draws[r][step][1]
                if max(survival) < a:
                    break
        else:
            drafted = 0
            survival = [1.0] * rows
            total = [1.0] * rows
            for step in range(cap):
                drafted += 1
                gain = 0.0
                for r in range(rows):
                    q, p, _ = draws[r][step]
                    x = p if policy == "calibrated" else q
                    survival[r] *= x
                    total[r] += survival[r]
                    gain += survival[r] * x
                if drafted >= cap:
                    break
                # The series' rule: one more step while the batch's expected
                # gain per ms beats its rate so far.
                elapsed = verify_ms + (step + 1) * draft_ms
                if not gain * elapsed > draft_ms * sum(total):
                    break
        for r in range(rows):
            accepted = 0
            for q, p, _ in draws[r][:drafted]:
                if rng.random() >= p:
                    break
                accepted += 1
            tokens += accepted + 1
        time_ms += verify_ms + max(drafted, 1) * draft_ms
        forwards += max(drafted, 1)
    return {"tokens_per_ms": tokens / time_ms, "tokens_per_step": tokens / samples,
            "ms_per_step": time_ms / samples, "draft_forwards_per_step": forwards / samples}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--calibration", required=True, type=Path,
                    help="benchmarks/calibration.py output (its 'bins')")
    ap.add_argument("--costs", default="1:4.69/1.09,8:5.17/1.16,32:6.90/1.42",
                    help="B:V/D,... target and draft step in ms per batch size "
                         "(default: the H200 proxies' start-up table, session 15)")
    ap.add_argument("--cap", type=int, default=4, help="K, the most drafts a step")
    ap.add_argument("--samples", type=int, default=60000, help="steps per policy")
    ap.add_argument("--batch", action="store_true",
                    help="B requests in flight at batch size B, drafting together (one "
                         "decision for the batch); without it, one request at every B")
    ap.add_argument("--oracle", action="store_true",
                    help="also the stop that knows each draft's fate (an upper "
                         "bound for any stop rule at this cap)")
    ap.add_argument("--thresholds", action="store_true",
                    help="also the best stop on the calibrated survival (a grid "
                         "of thresholds 0.02-0.98): the best a stop on a "
                         "calibrated confidence can do with positions independent")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.cap < 1 or args.samples < 1:
        raise SystemExit("stop_rule_sim: --cap and --samples must be >= 1")
    bins = load_bins(args.calibration)
    rows = []
    for b, (v, d) in sorted(parse_costs(args.costs).items()):
        rng = random.Random(args.seed)
        policies = [f"sd{k}" for k in range(1, args.cap + 1)] + ["raw", "calibrated"]
        if args.oracle:
            policies.append("oracle")
        grid = [f"thr{a / 100:.2f}" for a in range(2, 100, 4)] if args.thresholds else []
        policies += grid
        rows_in_flight = b if args.batch else 1
        res = {p: simulate(bins, v, d, args.cap, p, args.samples, rng, rows_in_flight)
               for p in policies}
        best = max((p for p in res if p.startswith("sd")),
                   key=lambda p: res[p]["tokens_per_ms"])
        row = {"batch": b, "rows": rows_in_flight, "verify_ms": v, "draft_ms": d, "cap": args.cap,
               "policies": res, "best_sd": best,
               "raw_vs_best_sd": res["raw"]["tokens_per_ms"] / res[best]["tokens_per_ms"],
               "calibrated_vs_raw": (res["calibrated"]["tokens_per_ms"]
                                     / res["raw"]["tokens_per_ms"])}
        if args.oracle:
            row["oracle_vs_best_sd"] = (res["oracle"]["tokens_per_ms"]
                                        / res[best]["tokens_per_ms"])
        if grid:
            best_thr = max(grid, key=lambda p: res[p]["tokens_per_ms"])
            row["best_threshold"] = float(best_thr[3:])
            row["threshold_vs_best_sd"] = (res[best_thr]["tokens_per_ms"]
                                           / res[best]["tokens_per_ms"])
        rows.append(row)
        print(f"B={b}: best SD {best}; rule (raw q) {row['raw_vs_best_sd']:.3f}x of it, "
              f"tokens/step {res['raw']['tokens_per_step']:.2f}; calibrated q "
              f"{row['calibrated_vs_raw']:.3f}x the raw rule, tokens/step "
              f"{res['calibrated']['tokens_per_step']:.2f}; forwards/step raw "
              f"{res['raw']['draft_forwards_per_step']:.2f}, calibrated "
              f"{res['calibrated']['draft_forwards_per_step']:.2f}"
              + (f"; oracle {row['oracle_vs_best_sd']:.3f}x best SD, tokens/step "
                 f"{res['oracle']['tokens_per_step']:.2f}, forwards/step "
                 f"{res['oracle']['draft_forwards_per_step']:.2f}" if args.oracle else "")
              + (f"; best survival threshold {row['best_threshold']:.2f}: "
                 f"{row['threshold_vs_best_sd']:.3f}x best SD" if grid else ""))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"calibration": str(args.calibration),
                                        "samples": args.samples, "seed": args.seed,
                                        "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
