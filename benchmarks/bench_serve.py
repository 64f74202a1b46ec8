"""Cross-check with upstream's tool: ``vllm bench serve`` against ``vllm serve``.

    python benchmarks/bench_serve.py --models DIR --prompts DIR --out DIR \\
        [--arms target,sd3,dsl8t0.5] [--concurrency 1,16] [--harness ABAB.json]

Per arm, one ``vllm serve`` (prefix caching off, the harness's KV cache and
engine options from ``--engine``) and, per concurrency, one ``vllm bench
serve`` run: the ``--dataset`` prompts as they are (``--skip-chat-template``:
the fixture prompts are chat-templated already), in file order, greedy,
``--max-tokens`` output tokens with ``ignore_eos``, ``--max-concurrency c``
and an unbounded request rate, like the harness's closed loop. Writes
``DIR/<arm>-c<c>.json`` (bench serve's result file) and ``DIR/summary.json``:
mean TPOT per arm and c, and, with ``--harness`` (an ``abab.py`` result of the
same prompts), the ratio of each TPOT to the harness's median and of each
arm's TPOT to the first arm's under both tools.

Arms: ``target``, ``sd<K>``, ``dsl<K>``, ``dsl<K>t<tau>`` (as ``abab.py``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cell import speculative_config  # noqa: E402
from profile_step import add_model_args, parse_arm  # noqa: E402
from run import model_path, num_requests  # noqa: E402


def serve_cmd(model: str, draft: str, arm: dict, port: int, engine: dict) -> list[str]:
    """The ``vllm serve`` command line of an arm."""
    cmd = ["vllm", "serve", model, "--port", str(port), "--max-model-len", "2048",
           "--max-num-seqs", "64", "--no-enable-prefix-caching", "--seed", "0",
           "--kv-cache-memory-bytes", str(engine.get("kv_cache_memory_bytes", 2 << 30)),
           "--gpu-memory-utilization", str(engine.get("gpu_memory_utilization", 0.2))]
    if arm["k"]:
        spec = speculative_config(draft, arm["k"], arm["tau"], arm["schedule"],
                                  arm.get("dynamic", False), arm.get("av", False))
        cmd += ["--speculative-config", json.dumps(spec)]
    return cmd


def bench_cmd(model: str, prompts: Path, port: int, c: int, n: int, max_tokens: int,
              out: Path, name: str) -> list[str]:
    """The ``vllm bench serve`` command line of one point."""
    return ["vllm", "bench", "serve", "--backend", "vllm", "--model", model,
            "--base-url", f"http://127.0.0.1:{port}", "--dataset-name", "custom",
            "--dataset-path", str(prompts), "--skip-chat-template", "--disable-shuffle",
            "--custom-output-len", str(max_tokens), "--ignore-eos", "--temperature", "0",
            "--max-concurrency", str(c), "--num-prompts", str(n),
            "--request-rate", "inf", "--num-warmups", str(c), "--save-result",
            "--result-dir", str(out), "--result-filename", f"{name}.json"]


def compare(points: dict[str, dict[int, float]], harness: dict | None) -> dict:
    """Per c: each arm's bench-serve TPOT over the harness's median TPOT of the
    same arm, and each arm's TPOT over the first arm's under both tools."""
    arms = list(points)
    out: dict = {}
    h_points = {p["concurrency"]: p for p in (harness or {}).get("points", [])}
    for c in sorted({c for v in points.values() for c in v}):
        row: dict = {"tpot_ms": {a: points[a].get(c) for a in arms}}
        base = points[arms[0]].get(c)
        row["vs_first_arm"] = {a: points[a][c] / base for a in arms[1:]
                               if base and points[a].get(c)}
        hp = h_points.get(c)
        if hp:
            med = {a: sorted(v)[len(v) // 2] for a, v in hp["tpot_ms"].items() if v}
            row["harness_tpot_ms"] = {a: med.get(a) for a in arms}
            row["over_harness"] = {a: points[a][c] / med[a] for a in arms
                                   if points[a].get(c) and med.get(a)}
            if med.get(arms[0]):
                row["harness_vs_first_arm"] = {a: med[a] / med[arms[0]] for a in arms[1:]
                                               if med.get(a)}
        out[str(c)] = row
    return out


def wait_up(server: subprocess.Popen, port: int, timeout: float = 900.0) -> None:
    t0 = time.time()
    while True:
        if server.poll() is not None:
            raise SystemExit(f"vllm serve exited with {server.returncode} (see its log)")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return
        except OSError:
            if time.time() - t0 > timeout:
                raise SystemExit(f"vllm serve not up after {timeout:.0f} s") from None
            time.sleep(1)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    add_model_args(ap, dataset="sharegpt-test")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arms", default="target,sd3")
    ap.add_argument("--concurrency", default="1,16")
    ap.add_argument("--base-requests", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--engine", default="{}", help="kv_cache_memory_bytes, "
                    "gpu_memory_utilization (JSON)")
    ap.add_argument("--harness", type=Path, help="abab.py result of the same prompts")
    ap.add_argument("--port", type=int, default=8200)
    args = ap.parse_args(argv)
    arms = [parse_arm(a) for a in args.arms.split(",")]
    conc = [int(c) for c in args.concurrency.split(",")]
    prompts = args.prompts / f"{args.dataset}.jsonl"
    if not prompts.exists():
        raise SystemExit(f"--prompts: no {prompts}")
    engine = json.loads(args.engine)
    model = model_path(args.models, args.target)
    draft = model_path(args.models, args.draft)
    args.out.mkdir(parents=True, exist_ok=True)
    points: dict[str, dict[int, float]] = {}
    for arm in arms:
        log = open(args.out / f"serve-{arm['name']}.log", "w")
        server = subprocess.Popen(serve_cmd(model, draft, arm, args.port, engine),
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_up(server, args.port)
            points[arm["name"]] = {}
            for c in conc:
                name = f"{arm['name']}-c{c}"
                n = num_requests(c, args.base_requests)
                with open(args.out / f"bench-{name}.log", "w") as blog:
                    subprocess.run(bench_cmd(model, prompts, args.port, c, n,
                                             args.max_tokens, args.out, name),
                                   stdout=blog, stderr=subprocess.STDOUT, check=True)
                res = json.loads((args.out / f"{name}.json").read_text())
                points[arm["name"]][c] = res["mean_tpot_ms"]
                print(f"{name}: mean TPOT {res['mean_tpot_ms']:.3f} ms", flush=True)
        finally:
            server.terminate()
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
    harness = json.loads(args.harness.read_text()) if args.harness else None
    summary = {"arms": [a["name"] for a in arms], "dataset": args.dataset,
               "max_tokens": args.max_tokens, "engine": engine,
               "points": compare(points, harness)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary["points"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
