"""Interleaved A/B TPOT: all arms' engines up at once, measured in turns.

    python benchmarks/abab.py --models DIR --prompts DIR --out FILE.json \\
        [--arms sd4,dsl4t0] [--concurrency 1,8] [--rounds 6] [--max-tokens 128]

Each arm is an ``LLMEngine`` with its engine core in its own process (as
``run.py``'s cells), all started side by side and warmed up; then, per
concurrency, ``--rounds`` rounds run the same closed-loop workload on every
arm in turn, the order reversed every other round (ABBA...), so drift of the
host or the GPU hits the arms alike. Per round the ratio of each arm's mean
TPOT to the first arm's is taken from adjacent runs; the report gives per
arm the median TPOT, and per ratio its median, mean and a 95% t-interval
over the rounds, with the spread of the first arm's own TPOT between rounds
(the noise floor).

Arms: ``target``, ``sd<K>``, ``dsl<K>t<tau>`` (as ``profile_step.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cell import engine_args, run_workload  # noqa: E402
from profile_step import add_model_args, parse_arm  # noqa: E402
from run import load_prompts, model_path, num_requests  # noqa: E402

# Two-sided 95% Student t quantiles by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
       9: 2.26, 10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df: int) -> float:
    return T95[max(k for k in T95 if k <= df)] if df >= 1 else float("nan")


def ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% t-interval."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, float("nan"), float("nan")
    half = t95(len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return m, m - half, m + half


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    add_model_args(ap, dataset="sharegpt-test")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arms", default="sd4,dsl4t0")
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--base-requests", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--engine", default="{}", help="EngineArgs overrides, JSON")
    args = ap.parse_args(argv)
    arms = [parse_arm(a) for a in args.arms.split(",")]
    conc = [int(c) for c in args.concurrency.split(",")]
    prompts = load_prompts(args.prompts, args.dataset, 1024)

    from vllm.v1.engine.llm_engine import LLMEngine

    def start(arm):
        cell = {"model": model_path(args.models, args.target),
                "draft": model_path(args.models, args.draft) if arm["k"] else None,
                "k": arm["k"], "tau": arm["tau"],
                "engine": json.loads(args.engine)}
        engine = LLMEngine.from_engine_args(engine_args(cell))
        for c in conc:
            run_workload(engine, prompts, c, c, 16, None, f"warm{c}")
        return engine

    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(arms)) as pool:
        engines = list(pool.map(start, arms))
    init_s = time.perf_counter() - t0

    out: dict = {"arms": [a["name"] for a in arms], "dataset": args.dataset,
                 "max_tokens": args.max_tokens, "rounds": args.rounds,
                 "init_s": init_s, "points": []}
    lines = []
    for c in conc:
        n = num_requests(c, args.base_requests)
        tpots: dict[str, list[float]] = {a["name"]: [] for a in arms}
        counters: dict[str, list[dict]] = {a["name"]: [] for a in arms}
        for r in range(args.rounds):
            order = list(range(len(arms)))
            if r % 2:
                order.reverse()
            for i in order:
                res = run_workload(engines[i], prompts, c, n, args.max_tokens,
                                   None, f"r{r}c{c}")
                vals = [x["tpot"] for x in res["requests"] if x["tpot"]]
                tpots[arms[i]["name"]].append(1e3 * statistics.fmean(vals))
                counters[arms[i]["name"]].append(res["counters"])
        base = arms[0]["name"]
        point = {"concurrency": c, "requests": n, "tpot_ms": tpots,
                 "counters": counters, "ratios": {}}
        m, lo, hi = ci(tpots[base])
        noise = (max(tpots[base]) - min(tpots[base])) / statistics.median(tpots[base])
        lines.append(f"c={c} ({n} requests x {args.rounds} rounds): {base} "
                     f"median {statistics.median(tpots[base]):.3f} ms, "
                     f"round-to-round spread {100 * noise:.1f}%")
        for a in arms[1:]:
            ratios = [x / y for x, y in zip(tpots[a["name"]], tpots[base])]
            rm, rlo, rhi = ci(ratios)
            point["ratios"][a["name"]] = {"per_round": ratios,
                                          "median": statistics.median(ratios),
                                          "mean": rm, "ci95": [rlo, rhi]}
            lines.append(f"  {a['name']:10} median {statistics.median(tpots[a['name']]):.3f}"
                         f" ms; TPOT / {base}: median {statistics.median(ratios):.4f}, "
                         f"mean {rm:.4f} [95% CI {rlo:.4f}, {rhi:.4f}]")
        out["points"].append(point)
    out["summary"] = lines
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
