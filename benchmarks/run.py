"""Sweep: target-only, draft-model SD at each K, DSL over (K, tau).

    python benchmarks/run.py --models DIR --prompts DIR --out DIR [options]

Every cell is a fresh engine in its own process (``cell.py``): prefix caching
off, warm-up first, ``--reps`` repetitions. Up to ``--parallel`` cells start at
once; they are measured strictly one at a time (the others wait, idle).
With ``--gpus 0,1`` each dataset is measured on its own GPU (dataset i on GPU
i mod n): every cell gets one engine per GPU, the GPUs' queues run side by
side, and every comparison (arm against arm, tune against test) stays on one
GPU. Measurement starts only once every engine of the wave is up on every
GPU, so no start-up work overlaps a measurement.

Phases (``--phase all`` runs tune and test):

- ``tune``: target-only and SD K in ``--sd-k`` on the tune and test splits;
  DSL on the tune split: one engine per K with engine tau 0 (never exits by itself) and each tau of ``--dsl-tau`` as
  a per-request override (``SamplingParams.extra_args``), or with
  ``--tune-engine-per-cell`` one engine per (K, tau). ``--arms`` limits the
  phase to some arms (to split it over several commands). Writes
  ``tune-*.json``.
- ``test``: per dataset and concurrency, the best DSL (K, tau) on the tune
  split gets an engine configured with it, measured on the test split.
  SD's best K is chosen the same way from its tune-split runs (its test runs
  already exist). Writes ``test-*.json`` and ``selection.json``.
- ``select``: only the choice of the test phase (``selection.json``), for a
  measurement of the chosen arms by other means (``abab.py --selection``).

Datasets: the fixtures' ShareGPT and HumanEval prompt files
(``<dataset>-<split>.jsonl`` with ``prompt_token_ids``). Models: ``--target``
and ``--draft`` are folder names under ``--models`` or any path (an HF
checkpoint folder or, with hub access, a model id such as
meta-llama/Llama-3.1-8B-Instruct with meta-llama/Llama-3.2-1B-Instruct).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARMS = {"target", "sd", "dsl", "overhead"}
# The cell driver; the project's tests substitute a fake one.
CELL_SCRIPT = Path(os.environ.get("DSL_BENCH_CELL", HERE / "cell.py"))
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


def read_json(path: Path):
    """A results JSON as written, or gzipped as committed (``.gz``)."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


def load_prompts(folder: Path, name: str, max_prompt_tokens: int) -> list[list[int]]:
    rows = [json.loads(x) for x in (folder / f"{name}.jsonl").read_text().splitlines()
            if x.strip()]
    return [r["prompt_token_ids"] for r in rows
            if len(r["prompt_token_ids"]) <= max_prompt_tokens]


def num_requests(c: int, base: int, waves: int = 2) -> int:
    """Requests per workload: at least ``base``, and ``waves`` waves of ``c``."""
    return max(base, waves * c)


def workloads(datasets, splits, concurrency, reps, base):
    return [{"prompts": f"{d}-{s}", "concurrency": c,
             "num_requests": num_requests(c, base), "reps": reps}
            for d in datasets for s in splits for c in concurrency]


def lane_cells(cells: list[dict], gpus: list[str],
               datasets: list[str]) -> dict[str, list[dict]]:
    """Split every cell into one cell per GPU holding the workloads of the
    datasets measured there (``<name>@gpu<id>``)."""
    if len(gpus) <= 1:
        return {gpus[0] if gpus else "": cells}
    home = {d: gpus[i % len(gpus)] for i, d in enumerate(datasets)}
    lanes: dict[str, list[dict]] = {g: [] for g in gpus}
    for cell in cells:
        for g in gpus:
            ws = [w for w in cell["workloads"]
                  if home[w["prompts"].rsplit("-", 1)[0]] == g]
            if ws:
                lanes[g].append({**cell, "name": f"{cell['name']}@gpu{g}",
                                 "workloads": ws})
    return lanes


def merge_lanes(out: Path, cells: list[dict], gpus: list[str]) -> None:
    """Join each cell's per-GPU result files into ``<name>.json``."""
    if len(gpus) <= 1:
        return
    for cell in cells:
        parts = [out / f"{cell['name']}@gpu{g}.json" for g in gpus]
        parts = [p for p in parts if p.exists()]
        if not parts:
            continue
        data = [json.loads(p.read_text()) for p in parts]
        merged = {**data[0], "name": cell["name"],
                  "init_s": max(d["init_s"] for d in data),
                  "gpus": {d["name"].rsplit("@gpu", 1)[1]: sorted(
                      {r["prompts"] for r in d["results"]}) for d in data},
                  "results": [r for d in data for r in d["results"]]}
        (out / f"{cell['name']}.json").write_text(json.dumps(merged))
        for p in parts:
            p.unlink()


def run_cells(cells: list[dict], out: Path, parallel: int, prompts: dict,
              env: dict, gpus: list[str] | None = None,
              datasets: list[str] | None = None) -> None:
    """Start up to ``parallel`` cells at once (per GPU); once all are up,
    measure them one at a time on each GPU, the GPUs side by side."""
    gpus = gpus or []
    lanes = lane_cells(cells, gpus, datasets or [])
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    pending = {g: list(cs) for g, cs in lanes.items()}
    while any(pending.values()):
        procs: dict[str, list] = {}
        for g in pending:
            wave, pending[g] = pending[g][:parallel], pending[g][parallel:]
            procs[g] = [(cell, start_cell(cell, out, work, prompts,
                                          {**env, **({"CUDA_VISIBLE_DEVICES": g}
                                                     if g else {})}))
                        for cell in wave]
        # Wait until every cell of the wave is up (or dead) on every GPU.
        everyone = [cp for cps in procs.values() for cp in cps]
        while any(p.poll() is None and not (work / f"{c['name']}.ready").exists()
                  for c, p in everyone):
            time.sleep(1)
        threads = [threading.Thread(target=measure_lane, args=(cps, out, work))
                   for cps in procs.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    merge_lanes(out, cells, gpus)


def start_cell(cell: dict, out: Path, work: Path, prompts: dict,
               env: dict) -> subprocess.Popen:
    name = cell["name"]
    cell_file = work / f"{name}.cell.json"
    used = {w["prompts"] for w in cell["workloads"]}
    cell_file.write_text(json.dumps({**cell, "prompts": {k: prompts[k] for k in used}}))
    for suffix in ("ready", "go"):
        (work / f"{name}.{suffix}").unlink(missing_ok=True)
    log = open(out / f"{name}.log", "w")
    return subprocess.Popen(
        [sys.executable, str(CELL_SCRIPT), str(cell_file),
         str(out / f"{name}.json"), "--ready", str(work / f"{name}.ready"),
         "--go", str(work / f"{name}.go")],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})


def measure_lane(procs: list, out: Path, work: Path) -> None:
    """Measure the started cells of one GPU in order, one at a time."""
    for cell, proc in procs:
        name = cell["name"]
        if proc.poll() is not None and not (out / f"{name}.json").exists():
            print(f"[bench] {name}: failed at start-up (see {name}.log)", flush=True)
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


def dsl_name(phase: str, k: int, tau: float | None = None) -> str:
    """Cell name of a DSL engine: ``<phase>-dsl-k<K>[-t<tau>]``."""
    return f"{phase}-dsl-k{k}" + ("" if tau is None else f"-t{tau}")


def dsl_tune_tpot(out: Path, k: int, t: float, prompts: str,
                  c: int) -> float | None:
    """Tune-split TPOT of DSL (k, t): per-cell engine, else per-request tau
    on the engine of k."""
    per_cell = out / f"{dsl_name('tune', k, t)}.json"
    if per_cell.exists():
        return mean_tpot(per_cell, prompts, c)
    return mean_tpot(out / f"{dsl_name('tune', k)}.json", prompts, c, tau=t)


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
    ap.add_argument("--phase", choices=["tune", "test", "select", "all"],
                    default="all")
    ap.add_argument("--engine", default="{}", help="JSON EngineArgs overrides")
    ap.add_argument("--gpus", default="",
                    help="comma-separated GPU ids; datasets are spread over them "
                         "(default: the one visible GPU)")
    ap.add_argument("--arms", default=",".join(sorted(ARMS)),
                    help="tune phase: which arms to run (target, sd, dsl, overhead)")
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

    gpus = args.gpus.split(",") if args.gpus else []
    arms = set(args.arms.split(","))
    unknown = arms - ARMS
    if unknown:
        ap.error(f"--arms: unknown {sorted(unknown)}; choose from {sorted(ARMS)}")

    if args.phase in ("tune", "all"):
        # Target and SD: tune split once, test split --reps times (SD's
        # test-split numbers come from these same engines).
        both = (workloads(datasets, ("tune",), conc, 1, args.base_requests)
                + workloads(datasets, ("test",), conc, args.reps,
                            args.base_requests))
        tune = workloads(datasets, ("tune",), conc, 1, args.base_requests)
        cells = []
        if "target" in arms:
            cells.append({**base, "name": "tune-target", "draft": None, "k": 0,
                          "tau": None, "workloads": both})
        if "sd" in arms:
            cells += [{**base, "name": f"tune-sd-k{k}", "draft": draft, "k": k,
                       "tau": None, "workloads": both} for k in ints(args.sd_k)]
        if "overhead" in arms and args.overhead_k:
            # tau = 0 never exits: SD with DSL's bookkeeping, on the test
            # split.
            cells.append({**base, "name": dsl_name("tune", args.overhead_k, 0.0),
                          "draft": draft, "k": args.overhead_k, "tau": 0.0,
                          "workloads": workloads(datasets, ("test",), conc,
                                                 args.reps, args.base_requests)})
        if "dsl" in arms and args.tune_engine_per_cell:
            cells += [{**base, "name": dsl_name("tune", k, t), "draft": draft,
                       "k": k, "tau": t, "workloads": tune}
                      for k in ints(args.dsl_k) for t in floats(args.dsl_tau)]
        elif "dsl" in arms:
            # One engine per K (engine tau 0 = never exits by itself); each
            # tau is a per-request override (SamplingParams.extra_args).
            cells += [{**base, "name": dsl_name("tune", k), "draft": draft,
                       "k": k, "tau": 0.0,
                       "workloads": [{**w, "extra_args":
                                      {"draft_confidence_threshold": t}}
                                     for t in floats(args.dsl_tau) for w in tune]}
                      for k in ints(args.dsl_k)]
        run_cells(cells, args.out, args.parallel, prompts, CELL_ENV, gpus, datasets)

    if args.phase in ("test", "select", "all"):
        selection: dict[str, dict] = {}
        winners: dict[tuple[int, float], list[dict]] = {}
        dsl_grid = [(k, t) for k in ints(args.dsl_k) for t in floats(args.dsl_tau)]
        for d in datasets:
            for c in conc:
                key = f"{d}-c{c}"
                sd = {k: mean_tpot(args.out / f"tune-sd-k{k}.json", f"{d}-tune", c)
                      for k in ints(args.sd_k)}
                dsl = {kt: dsl_tune_tpot(args.out, *kt, f"{d}-tune", c)
                       for kt in dsl_grid}
                sd = {k: v for k, v in sd.items() if v is not None}
                dsl = {kt: v for kt, v in dsl.items() if v is not None}
                sel = {"sd_k": min(sd, key=sd.get) if sd else None,
                       "dsl": list(min(dsl, key=dsl.get)) if dsl else None,
                       "tune_tpot_sd": sd,
                       "tune_tpot_dsl": {dsl_name("", *kt)[5:]: v
                                         for kt, v in dsl.items()}}
                selection[key] = sel
                if sel["dsl"]:
                    winners.setdefault(tuple(sel["dsl"]), []).append(
                        {"prompts": f"{d}-test", "concurrency": c,
                         "num_requests": num_requests(c, args.base_requests),
                         "reps": args.reps})
        (args.out / "selection.json").write_text(json.dumps(
            {k: {**v, "tune_tpot_sd": {str(a): b for a, b in v["tune_tpot_sd"].items()}}
             for k, v in selection.items()}, indent=1))
        if args.phase == "select":
            return 0
        cells = [{**base, "name": dsl_name("test", k, t), "draft": draft, "k": k,
                  "tau": t, "workloads": w}
                 for (k, t), w in winners.items()]
        run_cells(cells, args.out, args.parallel, prompts, CELL_ENV, gpus, datasets)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
