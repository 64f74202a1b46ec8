"""`vllm serve` from the build venv on CPU, as the README's recipe runs it (issue #20).

Starts the venv's ``vllm`` console script (the one scripts/build.sh writes) on
127.0.0.1 with DSL on the fixture models, with vLLM's default engine-core
subprocess (the spawned process re-runs the CLI script: an unguarded script
dies there), then: one completion with ``vllm_xargs``, a request with an
invalid per-request value (HTTP 400 naming the field), ``/metrics`` (the DSL
counters), and a clean stop. Bounded: the server gets ``START_TIMEOUT_S`` to come
up and is killed (its whole process group) if it does not stop in ``STOP_TIMEOUT_S``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import harness
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

START_TIMEOUT_S = 420
STOP_TIMEOUT_S = 60
K = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, body: dict | None = None, timeout: float = 120) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _metric(text: str, name: str) -> float:
    """Sum of the samples of one metric (all label sets)."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
            seen = True
    assert seen, f"{name} is not in /metrics"
    return total


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_vllm_serve_completion_with_vllm_xargs_and_metrics(fixtures, tmp_path):
    cli = Path(sys.executable).parent / "vllm"
    assert cli.is_file(), f"no vllm CLI at {cli}: run scripts/build.sh"
    if not harness.dsl_supported():
        pytest.fail("the DSL series is not applied to the vLLM under test")
    target = fixtures.model("target")
    spec = {"method": "draft_model", "model": fixtures.model("draft_l20"),
            "num_speculative_tokens": K, "draft_confidence_threshold": 0.6}
    port = _free_port()
    env = dict(os.environ)
    for key, value in harness.ENGINE_ENV.items():
        env.setdefault(key, value)
    # The point of this test: vLLM's default engine-core subprocess.
    env.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
    # And the README's core reservation: vLLM's default (0 is below its minimum, a warning).
    env.pop("VLLM_CPU_NUM_OF_RESERVED_CPU", None)
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            # The README's recipe ("Using DSL": on CPU), on a free port.
            [str(cli), "serve", target, "--host", "127.0.0.1", "--port", str(port),
             "--served-model-name", "smollm2", "--dtype", "float32",
             "--max-model-len", "1024", "--enforce-eager",
             "--speculative-config", json.dumps(spec)],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def tail() -> str:
        return "\n".join(log.read_text(errors="replace").splitlines()[-40:])

    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert proc.poll() is None, f"vllm serve exited with {proc.returncode}:\n{tail()}"
            try:
                if _request(base + "/health", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"not up after {START_TIMEOUT_S}s:\n{tail()}"
            time.sleep(2)

        status, body = _request(base + "/v1/completions", {
            "model": "smollm2", "prompt": "The capital of France is", "max_tokens": 16,
            "temperature": 0.0,
            "vllm_xargs": {"draft_confidence_threshold": 0.3, "max_draft_tokens": 2}})
        assert status == 200, body
        assert json.loads(body)["choices"][0]["text"].strip(), body

        status, body = _request(base + "/v1/completions", {
            "model": "smollm2", "prompt": "Hi", "max_tokens": 4,
            "vllm_xargs": {"draft_confidence_threshold": 1.5}})
        assert status == 400, body
        assert "draft_confidence_threshold" in body, body

        status, metrics = _request(base + "/metrics")
        assert status == 200
        assert _metric(metrics, "vllm:spec_decode_num_drafts_total") > 0, metrics
        assert _metric(metrics, "vllm:spec_decode_num_draft_tokens_requested_total") > 0
        assert _metric(metrics, "vllm:spec_decode_num_drafted_tokens_per_pos_total") > 0
        # The capped request (max_draft_tokens 2 < K) stops short of K: an
        # early exit, also on the V1 runner under sync scheduling.
        assert _metric(metrics, "vllm:spec_decode_num_early_exits_total") > 0
        _metric(metrics, "vllm:spec_decode_num_draft_forwards_total")
    finally:
        _stop(proc)
    print(tail())
    # The recipe starts without warnings about its own settings.
    assert "less than the minimum requirement" not in log.read_text(errors="replace"), tail()
