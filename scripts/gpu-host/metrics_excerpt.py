"""Serve the target with DSL through `vllm serve`, load it, and keep what the
operator sees: the spec-decode lines of `/metrics` and of the periodic log.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/metrics_excerpt.py \
        --out DIR [--runner v2|v1] [--port 8123] [--seconds 25]

Writes DIR/metrics-<runner>.txt (every `vllm:spec_decode_*` sample of the
Prometheus endpoint, after the load) and DIR/serve-<runner>.log (the server's
log; its "SpecDecoding metrics" lines are the periodic log line). Requests:
the fixtures' ShareGPT test prompts (token ids), greedy, 8 in flight, sent
for --seconds so that the 10 s stats logger fires at least twice. Exit status
1 when the server does not come up or a metric the DSL patches add is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost"))
EXPECTED = (
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_draft_tokens_requested",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos",
    "vllm:spec_decode_num_early_exits",
    "vllm:spec_decode_num_drafted_tokens_per_pos",
    "vllm:spec_decode_num_draft_forwards",
)


def get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--runner", choices=["v2", "v1"], default="v2")
    ap.add_argument("--port", type=int, default=8123)
    ap.add_argument("--seconds", type=float, default=25.0)
    ap.add_argument("--prompts", type=Path, default=Path(".gpu-bundles/prompts"))
    ap.add_argument("--draft", default="smollm2-l4-kd")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model = str(ROOT / "models" / "smollm2-135m")
    spec = {"method": "draft_model", "model": str(ROOT / "models" / args.draft),
            "num_speculative_tokens": 5, "draft_confidence_threshold": 0.6}
    env = {**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "1" if args.runner == "v2" else "0"}
    log = open(args.out / f"serve-{args.runner}.log", "w")
    server = subprocess.Popen(
        ["vllm", "serve", model, "--port", str(args.port), "--max-model-len", "2048",
         "--kv-cache-memory-bytes", str(2 << 30), "--no-enable-prefix-caching",
         # Leaves room for other engines on the GPU (the GPU tests run beside it).
         "--gpu-memory-utilization", "0.1",
         "--speculative-config", json.dumps(spec)],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{args.port}"
    try:
        t0 = time.time()
        while True:
            if server.poll() is not None:
                print(f"server exited with {server.returncode}", file=sys.stderr)
                return 1
            try:
                get(f"{base}/health", 2.0)
                break
            except OSError:
                if time.time() - t0 > 300:
                    print("server did not come up in 300 s", file=sys.stderr)
                    return 1
                time.sleep(1)
        prompts = [json.loads(x)["prompt_token_ids"] for x in
                   (args.prompts / "sharegpt-test.jsonl").read_text().splitlines()
                   if x.strip()]
        prompts = [p for p in prompts if len(p) <= 1024]
        stop = time.time() + args.seconds
        done = [0]

        def client(i: int) -> None:
            j = i
            while time.time() < stop:
                post(f"{base}/v1/completions",
                     {"model": model, "prompt": prompts[j % len(prompts)],
                      "max_tokens": 128, "temperature": 0.0, "ignore_eos": True})
                done[0] += 1
                j += 8

        threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(11)  # one more stats-logger interval after the load
        text = get(f"{base}/metrics").decode()
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    lines = [x for x in text.splitlines() if "spec_decode" in x]
    (args.out / f"metrics-{args.runner}.txt").write_text("\n".join(lines) + "\n")
    missing = [m for m in EXPECTED if not any(x.startswith(m) for x in lines)]
    print(f"{args.runner}: {done[0]} requests; {len(lines)} spec_decode lines; "
          f"missing: {missing or 'none'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
