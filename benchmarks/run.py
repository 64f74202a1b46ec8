"""Sweep: target-only, draft-model SD at each K, DSL over (K, tau).

    python benchmarks/run.py --models DIR --prompts DIR --out DIR [options]

Every cell is a fresh engine in its own process (``cell.py``): prefix caching
off, warm-up first, ``--reps`` repetitions. Up to ``--parallel`` cells start at
once; they are measured strictly one at a time (the others wait, idle).

Phases (``--phase all`` runs both):

- ``tune``: target-only and SD K in ``--sd-k`` on the tune and test splits;
  DSL on the tune split: one engine per K with engine tau 0 (never exits by
  itself) and each tau of ``--dsl-tau`` as a per-request override
  (``SamplingParams.extra_args``), or with ``--tune-engine-per-cell`` one
  engine per (K, tau). Writes ``tune-*.json``.
- ``test``: per dataset and concurrency, the best DSL (K, tau) on the tune
  split gets an engine configured with it, measured on the test split.
  SD's best K is chosen the same way from its tune-split runs (its test runs
  already exist). Writes ``test-*.json`` and ``selection.json``.

Datasets: the fixtures' ShareGPT and HumanEval prompt files
(``<dataset>-<split>.jsonl`` with ``prompt_token_ids``). Models: ``--target``
and ``--draft`` are folder names under ``--models`` or any path (an HF
checkpoint folder or, with hub access, a model id such as
meta-llama/Llama-3.1-8B-Instruct with meta-llama/Llama-3.2-1B-Instruct).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Cells start side by side: keep each one's compile workers and threads few.
CELL_ENV = {"TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "2"}


def ints(s: str) -> list[int]:
    out: list[int] = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",")]


def model_path(models: str, name: str) -> str:
    p = Path(models) / name
    return str(p) if p.exists() else name


def load_prompts(folder: Path, name: str, max_prompt_tokens: int) -> list[list[int]]:
    rows = [json.loads(x) for x in (folder / f"{name}.jsonl").read_text().splitlines()
            if x.strip()]
    return [r["prompt_token_ids"] for r in rows
            if len(r["prompt_token_ids"]) <= max_prompt_tokens]


def num_requests(c: int, base: int) -> int:
    """Requests per workload: at least ``base``, and two waves of ``c``."""
    return max(base, 2 * c)


def workloads(datasets, splits, concurrency, reps, base):
    return [{"prompts": f"{d}-{s}", "concurrency": c,
             "num_requests": num_requests(c, base), "reps": reps}
            for d in datasets for s in splits for c in concurrency]


def run_cells(cells: list[dict], out: Path, parallel: int, prompts: dict,
              env: dict) -> None:
    """Start up to ``parallel`` cells at once; measure them one at a time."""
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    pending = list(cells)
    while pending:
        wave, pending = pending[:parallel], pending[parallel:]
        procs = []
        for cell in wave:
            name = cell["name"]
            cell_file = work / f"{name}.cell.json"
            used = {w["prompts"] for w in cell["workloads"]}
            cell_file.write_text(json.dumps(
                {**cell, "prompts": {k: prompts[k] for k in used}}))
            for suffix in ("ready", "go"):
                (work / f"{name}.{suffix}").unlink(missing_ok=True)
            log = open(out / f"{name}.log", "w")
            proc = subprocess.Popen(
                [sys.executable, str(HERE / "cell.py"), str(cell_file),
                 str(out / f"{name}.json"), "--ready", str(work / f"{name}.ready"),
                 "--go", str(work / f"{name}.go")],
                stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
            procs.append((cell, proc))
        # Wait until every cell of the wave is up (or dead), then measure
        # them in order, one at a time.
        while any(p.poll() is None and not (work / f"{c['name']}.ready").exists()
                  for c, p in procs):
            time.sleep(1)
        for cell, proc in procs:
            name = cell["name"]
            if proc.poll() is not None and not (out / f"{name}.json").exists():
                print(f"[bench] {name}: failed at start-up (see {name}.log)",
                      flush=True)
                continue
            t0 = time.time()
            (work / f"{name}.go").write_text("")
            rc = proc.wait()
            print(f"[bench] {name}: rc={rc}, measured in {time.time() - t0:.1f} s",
                  flush=True)


def mean_tpot(result_file: Path, prompts: str, c: int,
              tau: float | None = None) -> float | None:
    """Mean TPOT of a cell's runs of ``prompts`` at concurrency ``c`` (with
    ``tau``: only the runs with that per-request threshold)."""
    if not result_file.exists():
        return None
    data = json.loads(result_file.read_text())
    vals = [r["tpot"] for res in data["results"]
            if res["prompts"] == prompts and res["concurrency"] == c
            and (tau is None or (res.get("extra_args") or {}).get(
                "draft_confidence_threshold") == tau)
            for r in res["requests"] if r["tpot"] is not None]
    return sum(vals) / len(vals) if vals else None


def dsl_tune_tpot(out: Path, k: int, t: float, prompts: str, c: int) -> float | None:
    """Tune-split TPOT of DSL (k, t): per-cell engine, else per-request tau."""
    per_cell = out / f"tune-dsl-k{k}-t{t}.json"
    if per_cell.exists():
        return mean_tpot(per_cell, prompts, c)
    return mean_tpot(out / f"tune-dsl-k{k}.json", prompts, c, tau=t)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="/tmp/gpuhost/models")
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--draft", default="smollm2-l4-kd")
    ap.add_argument("--prompts", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--datasets", default="sharegpt,humaneval")
    ap.add_argument("--concurrency", default="1,2,4,8,16,32,64")
    ap.add_argument("--sd-k", default="1-8")
    ap.add_argument("--dsl-k", default="5,10,15,20")
    ap.add_argument("--dsl-tau", default="0.4,0.6,0.8")
    ap.add_argument("--overhead-k", type=int, default=4,
                    help="K of the tau=0 DSL cell compared with SD at that K "
                         "(bookkeeping overhead); 0 skips it")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--max-prompt-tokens", type=int, default=1024)
    ap.add_argument("--base-requests", type=int, default=8,
                    help="requests per workload at low concurrency")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--phase", choices=["tune", "test", "all"], default="all")
    ap.add_argument("--engine", default="{}", help="JSON EngineArgs overrides")
    ap.add_argument("--tune-engine-per-cell", action="store_true",
                    help="tune DSL with one engine per (K, tau) instead of one "
                         "engine per K with per-request tau")
    args = ap.parse_args(argv)

    datasets = args.datasets.split(",")
    conc = ints(args.concurrency)
    args.out.mkdir(parents=True, exist_ok=True)
    prompts = {f"{d}-{s}": load_prompts(args.prompts, f"{d}-{s}",
                                        args.max_prompt_tokens)
               for d in datasets for s in ("tune", "test")}
    target = model_path(args.models, args.target)
    draft = model_path(args.models, args.draft)
    engine = json.loads(args.engine)
    base = dict(model=target, max_tokens=args.max_tokens, engine=engine)
    (args.out / "config.json").write_text(json.dumps(
        {**vars(args), "prompts": str(args.prompts), "out": str(args.out),
         "num_prompts": {k: len(v) for k, v in prompts.items()}}, indent=1))

    if args.phase in ("tune", "all"):
        both = workloads(datasets, ("tune", "test"), conc, args.reps,
                         args.base_requests)
        tune = workloads(datasets, ("tune",), conc, 1, args.base_requests)
        cells = [{**base, "name": "tune-target", "draft": None, "k": 0, "tau": None,
                  "workloads": both}]
        cells += [{**base, "name": f"tune-sd-k{k}", "draft": draft, "k": k,
                   "tau": None, "workloads": both} for k in ints(args.sd_k)]
        if args.tune_engine_per_cell:
            cells += [{**base, "name": f"tune-dsl-k{k}-t{t}", "draft": draft, "k": k,
                       "tau": t, "workloads": tune}
                      for k in ints(args.dsl_k) for t in floats(args.dsl_tau)]
        else:
            # One engine per K (engine tau 0 = never exits by itself); each
            # tau is a per-request override (SamplingParams.extra_args).
            cells += [{**base, "name": f"tune-dsl-k{k}", "draft": draft, "k": k,
                       "tau": 0.0,
                       "workloads": [{**w, "extra_args":
                                      {"draft_confidence_threshold": t}}
                                     for t in floats(args.dsl_tau) for w in tune]}
                      for k in ints(args.dsl_k)]
        if args.overhead_k:
            # tau = 0 never exits: SD with DSL's bookkeeping, on the test split.
            cells.insert(1 + len(ints(args.sd_k)), {
                **base, "name": f"tune-dsl-k{args.overhead_k}-t0.0", "draft": draft,
                "k": args.overhead_k, "tau": 0.0,
                "workloads": workloads(datasets, ("test",), conc, args.reps,
                                       args.base_requests)})
        run_cells(cells, args.out, args.parallel, prompts, CELL_ENV)

    if args.phase in ("test", "all"):
        selection: dict[str, dict] = {}
        winners: dict[tuple[int, float], list[dict]] = {}
        for d in datasets:
            for c in conc:
                key = f"{d}-c{c}"
                sd = {k: mean_tpot(args.out / f"tune-sd-k{k}.json", f"{d}-tune", c)
                      for k in ints(args.sd_k)}
                dsl = {(k, t): dsl_tune_tpot(args.out, k, t, f"{d}-tune", c)
                       for k in ints(args.dsl_k) for t in floats(args.dsl_tau)}
                sd = {k: v for k, v in sd.items() if v is not None}
                dsl = {kt: v for kt, v in dsl.items() if v is not None}
                sel = {"sd_k": min(sd, key=sd.get) if sd else None,
                       "dsl": list(min(dsl, key=dsl.get)) if dsl else None,
                       "tune_tpot_sd": sd,
                       "tune_tpot_dsl": {f"k{k}-t{t}": v for (k, t), v in dsl.items()}}
                selection[key] = sel
                if sel["dsl"]:
                    winners.setdefault(tuple(sel["dsl"]), []).append(
                        {"prompts": f"{d}-test", "concurrency": c,
                         "num_requests": num_requests(c, args.base_requests),
                         "reps": args.reps})
        (args.out / "selection.json").write_text(json.dumps(
            {k: {**v, "tune_tpot_sd": {str(a): b for a, b in v["tune_tpot_sd"].items()}}
             for k, v in selection.items()}, indent=1))
        cells = [{**base, "name": f"test-dsl-k{k}-t{t}", "draft": draft, "k": k,
                  "tau": t, "workloads": w} for (k, t), w in winners.items()]
        run_cells(cells, args.out, args.parallel, prompts, CELL_ENV)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
