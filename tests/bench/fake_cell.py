"""Stand-in for ``benchmarks/cell.py`` (same arguments and files), so the
benchmark's orchestration, selection and report run without a GPU.

TPOT is synthetic and deterministic: SD gets faster up to K = 3, DSL is
fastest at K = 10, tau = 0.6 on the tune split; every run records which
GPU it was given (``CUDA_VISIBLE_DEVICES``) and when it was measured.
"""

import json
import os
import sys
import time
from pathlib import Path


def tpot_ms(cell: dict, extra_args: dict | None) -> float:
    k = cell["k"]
    if not cell.get("draft"):
        return 2.0
    tau = (extra_args or {}).get("draft_confidence_threshold", cell.get("tau"))
    if tau is None:
        return 2.0 - 0.1 * min(k, 3) + 0.05 * max(k - 3, 0)
    return 1.6 + 0.01 * abs(k - 10) + abs(tau - 0.6)


def main(argv: list[str]) -> int:
    cell_file, out = argv[0], argv[1]
    ready = argv[argv.index("--ready") + 1]
    go = argv[argv.index("--go") + 1]
    cell = json.loads(Path(cell_file).read_text())
    if cell.get("fail"):
        return 1
    if "lag" in cell:
        # cell.py would set speculative_config.draft_confidence_exit_lag,
        # which vLLM no longer accepts: the engine fails to start.
        print("unknown field draft_confidence_exit_lag", file=sys.stderr)
        return 1
    Path(ready).write_text("0")
    while not os.path.exists(go):
        time.sleep(0.05)
    results = []
    for w in cell["workloads"]:
        for rep in range(w.get("reps", 1)):
            t0 = time.time()
            time.sleep(0.02)
            t = tpot_ms(cell, w.get("extra_args")) / 1e3 * (1 + 0.01 * rep)
            n = cell["max_tokens"]
            requests = [{"prompt_len": 8, "num_tokens": n, "ttft": 0.01,
                         "tpot": t, "latency": 0.01 + t * (n - 1),
                         "deltas": [1] + [2] * ((n - 1) // 2)}
                        for _ in range(w["num_requests"])]
            results.append({"wall_s": t * n, "requests": requests, "counters": {},
                            "prompts": w["prompts"], "concurrency": w["concurrency"],
                            "rep": rep, "extra_args": w.get("extra_args"),
                            "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
                            "measured": [t0, time.time()]})
    data = {k: v for k, v in cell.items() if k != "prompts"}
    data.update({"init_s": 0.0, "results": results})
    Path(out).write_text(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
