"""vLLM's device-side loop (``vllm/v1/worker/gpu/conditional_graph.py``) on the
GPU: a captured torch graph run inside a CUDA WHILE node runs exactly the
iterations the device state asks for, for every stop point 0..K, replayed with
changed inputs and no rebuild; and the loop control's cost per iteration
(``DSL_GPU_RESULTS``/loop_control_cost.json)."""

from __future__ import annotations

import json

import pytest
import torch


K = 8
ROWS = 16


def _capture_kept(body, warmups: int = 1) -> torch.cuda.CUDAGraph:
    """Warm ``body`` up on a side stream, then capture it into a graph that
    keeps its cudaGraph_t (what DeviceWhileLoop copies)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmups):
            body()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(graph):
        body()
    graph.instantiate()
    return graph


def test_loop_api_matches_the_suite_calls():
    """CPU: the calls this module makes bind to the real loop API, and
    without CUDA the loop reports itself unsupported (the speculators then
    keep the host loop)."""
    import inspect

    from vllm.v1.worker.gpu.conditional_graph import (
        DeviceWhileLoop,
        device_loops_supported,
    )

    sig = inspect.signature(DeviceWhileLoop)
    t = torch.zeros((), dtype=torch.int64)
    sig.bind(object(), t, t, torch.ones(ROWS, dtype=torch.bool), ROWS)
    sig.bind(object(), t, t, None, 0)
    # The speculator's call (standalone_ar/speculator.py) by keyword.
    sig.bind(object(), step=t, num_steps=t, active=None, num_rows=0)
    assert {"launch", "close"} <= set(dir(DeviceWhileLoop))
    if not torch.cuda.is_available():
        device_loops_supported.cache_clear()
        assert device_loops_supported() is False


def _reference(stop_at: list[int], num_steps: int) -> tuple[int, int]:
    """(body runs, final step) of: step = 0; while (++step < num_steps and
    any active) { body: active[r] &= step < stop_at[r] }."""
    active = [True] * len(stop_at)
    step, runs = 0, 0
    while True:
        step += 1
        if not (step < num_steps and any(active)):
            return runs, step
        runs += 1
        active = [a and step < s for a, s in zip(active, stop_at)]


@pytest.fixture(scope="module")
def loop_setup():
    from vllm.v1.worker.gpu.conditional_graph import (
        DeviceWhileLoop,
        device_loops_supported,
    )

    assert device_loops_supported(), "this GPU host must support conditional nodes"
    dev = torch.device("cuda")
    step = torch.zeros((), dtype=torch.int64, device=dev)
    num_steps = torch.zeros((), dtype=torch.int64, device=dev)
    active = torch.ones(ROWS + 8, dtype=torch.bool, device=dev)
    stop_at = torch.zeros(ROWS, dtype=torch.int64, device=dev)
    runs = torch.zeros((), dtype=torch.int64, device=dev)
    seen = torch.zeros(K + 1, dtype=torch.int64, device=dev)
    def body():
        runs.add_(1)
        seen.index_add_(0, step.view(1), torch.ones(1, dtype=torch.int64, device=dev))
        active[:ROWS] &= step < stop_at

    loop = DeviceWhileLoop(_capture_kept(body), step, num_steps, active, ROWS)
    return loop, step, num_steps, active, stop_at, runs, seen


def _run(setup, stops: list[int], bound: int) -> tuple[int, int, list[int]]:
    loop, step, num_steps, active, stop_at, runs, seen = setup
    stop_at.copy_(torch.tensor(stops))
    active.fill_(True)
    step.zero_()
    runs.zero_()
    seen.zero_()
    num_steps.fill_(bound)
    loop.launch()
    torch.cuda.synchronize()
    return int(runs), int(step), seen.tolist()


@pytest.mark.cuda
@pytest.mark.parametrize("stop", range(0, K + 1))
def test_trip_count_follows_the_device_state(loop_setup, stop):
    """All rows stop after ``stop`` steps: the body runs min(stop + 1, K - 1)
    times (the step that clears ``active`` runs), each step index once."""
    stops = [stop] * ROWS
    runs, final, seen = _run(loop_setup, stops, K)
    exp_runs, exp_final = _reference(stops, K)
    assert (runs, final) == (exp_runs, exp_final)
    assert seen == [0] + [1] * exp_runs + [0] * (K - exp_runs)


@pytest.mark.cuda
def test_the_last_row_decides_and_padding_rows_are_ignored(loop_setup):
    loop, _, _, active, *_ = loop_setup
    stops = [1, 2, 5, 0] + [0] * (ROWS - 4)
    assert _run(loop_setup, stops, K)[:2] == _reference(stops, K)
    # Rows past num_rows are never read (set after the reset in _run would
    # not matter; here they are True throughout).
    assert bool(active[ROWS:].all())


@pytest.mark.cuda
def test_replays_with_changed_bounds_without_rebuild(loop_setup):
    loop = loop_setup[0]
    before = loop.num_launches
    for bound, stops in [(2, [7] * ROWS), (K, [3] * ROWS), (1, [7] * ROWS), (5, [9] * ROWS)]:
        assert _run(loop_setup, stops, bound)[:2] == _reference(stops, bound)
    assert loop.num_launches == before + 4


@pytest.mark.cuda
def test_no_activity_mask_runs_to_the_bound():
    from vllm.v1.worker.gpu.conditional_graph import DeviceWhileLoop

    step = torch.zeros((), dtype=torch.int64, device="cuda")
    num_steps = torch.full((), 6, dtype=torch.int64, device="cuda")
    runs = torch.zeros((), dtype=torch.int64, device="cuda")
    loop = DeviceWhileLoop(
        _capture_kept(lambda: runs.add_(1)), step, num_steps, None, 0
    )
    runs.zero_()
    loop.launch()
    torch.cuda.synchronize()
    assert (int(runs), int(step)) == (5, 6)


@pytest.mark.cuda
def test_loop_control_cost_per_iteration():
    """Time K - 1 iterations of a ~50 us body: a static graph of K - 1 copies
    vs the WHILE loop (all rows active). The difference per iteration is the
    loop control's cost; written to the results folder, bounded loosely here
    (the issue's goal is <= 5 us; the committed number is the measurement)."""
    from vllm.v1.worker.gpu.conditional_graph import DeviceWhileLoop

    torch.manual_seed(0)
    h = 576
    ws = [torch.randn(h, h, device="cuda", dtype=torch.bfloat16) / h**0.5 for _ in range(12)]
    x = torch.randn(ROWS, h, device="cuda", dtype=torch.bfloat16)
    step = torch.zeros((), dtype=torch.int64, device="cuda")
    num_steps = torch.full((), K, dtype=torch.int64, device="cuda")
    active = torch.ones(ROWS, dtype=torch.bool, device="cuda")

    def body():
        y = x
        for w in ws:
            y = torch.tanh(y @ w)
        x.copy_(y)

    one = _capture_kept(body, warmups=3)
    static = torch.cuda.CUDAGraph()
    with torch.cuda.graph(static, pool=one.pool()):
        for _ in range(K - 1):
            body()
    loop = DeviceWhileLoop(one, step, num_steps, active, ROWS)

    def time_ms(fn, n=200):
        for _ in range(20):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / n

    def run_loop():
        step.zero_()
        loop.launch()

    def run_static():
        step.zero_()
        static.replay()

    samples = []
    for _ in range(5):
        samples.append((time_ms(run_static), time_ms(run_loop)))
    static_ms = sorted(a for a, _ in samples)[2]
    loop_ms = sorted(b for _, b in samples)[2]
    per_iter_us = (loop_ms - static_ms) * 1000 / (K - 1)
    from gpu_groups import results_dir

    out = results_dir()
    out.mkdir(parents=True, exist_ok=True)
    (out / "loop_control_cost.json").write_text(
        json.dumps(
            {
                "iterations": K - 1,
                "static_graph_ms": static_ms,
                "while_loop_ms": loop_ms,
                "control_us_per_iteration": per_iter_us,
                "samples_ms": samples,
                "gpu": torch.cuda.get_device_name(),
            },
            indent=1,
        )
    )
    print(f"loop control: {per_iter_us:.2f} us/iteration ({static_ms:.3f} vs {loop_ms:.3f} ms)")
    assert int(step) == K
    assert per_iter_us < 20, samples
