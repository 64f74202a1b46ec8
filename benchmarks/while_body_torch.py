# SPDX-License-Identifier: Apache-2.0
"""What DeviceWhileLoop costs an iteration around a torch-captured body.

Session 55's trace (benchmarks/results/2026-12-06-h100-s55/) put 41.8 us of
GPU idle inside the draft loop's graph each time the decode body started,
where benchmarks/while_node_cost.cu's bodies of plain chained kernels cost a
WHILE node 3.7 us an iteration. This script wraps bodies that torch captures
(cuBLAS GEMMs, Triton/elementwise kernels, tensor copies) in the series'
own DeviceWhileLoop (vllm/v1/worker/gpu/conditional_graph.py) and times, per
launch (CUDA events over back-to-back launches), the loop at 1 and 2
iterations against the body replayed 1 and 2 times from the host; each body
kind alone, so the kind that costs the 42 us shows. On a staged GPU host:

    source /tmp/gpuhost/env.sh && python benchmarks/while_body_torch.py

One line per body: replay_1, replay_2, loop_1, loop_2 (us a launch), then
loop_1 - replay_1 (entry and one iteration) and the added iteration's extra
(loop_2 - loop_1) - (replay_2 - replay_1). With ``--dot-dir``, each body's
loop graph as a verbose Graphviz file (``cudaGraphDebugDotPrint``: node
kinds, kernels, launch shapes, edges), to set beside the engine's own draft
loop (``DSL_DUMP_LOOP_GRAPHS``, ``ab_hooks.dump_loop_graphs``).
"""

import argparse
import os

import torch

from vllm.v1.worker.gpu.conditional_graph import DeviceWhileLoop


def _bodies(rows: int, hidden: int, layers: int):
    dev = torch.device("cuda")
    x = torch.randn(rows, hidden, device=dev, dtype=torch.bfloat16)
    w = torch.randn(hidden, hidden, device=dev, dtype=torch.bfloat16) / hidden**0.5
    ids = torch.zeros(rows, device=dev, dtype=torch.long)
    last = torch.ones(rows, device=dev, dtype=torch.long)

    def gemm():
        for _ in range(layers):
            x.copy_(torch.nn.functional.silu(x @ w))

    def elementwise():
        for _ in range(layers):
            x.mul_(0.999).add_(1.0)

    def copies():
        for _ in range(layers):
            ids.copy_(last)
            x[:, :8].copy_(x[:, 8:16])

    def mixed():
        ids.copy_(last)
        gemm()
        elementwise()

    return {"gemm": gemm, "elementwise": elementwise, "copies": copies, "mixed": mixed}


def _dump(loop: DeviceWhileLoop, path: str) -> None:
    """The loop's graph as a verbose Graphviz file; a failure is a line of
    the output, not the end of the timings."""
    try:
        from cuda.bindings import runtime as rt

        os.makedirs(os.path.dirname(path), exist_ok=True)
        flags = int(rt.cudaGraphDebugDotFlags.cudaGraphDebugDotFlagsVerbose)
        rt.cudaGraphDebugDotPrint(loop._graph, path.encode(), flags)
    except Exception as e:  # noqa: BLE001
        print(f"# no graph written to {path}: {e!r}")


def _time(fn, launches: int) -> float:
    start, end = (
        torch.cuda.Event(enable_timing=True),
        torch.cuda.Event(enable_timing=True),
    )
    for _ in range(10):
        fn()
    best = float("inf")
    for _ in range(5):
        start.record()
        for _ in range(launches):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) * 1e3 / launches)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--dot-dir", help="write each loop graph here (.dot)")
    args = parser.parse_args()
    dev = torch.device("cuda")
    step = torch.zeros((), device=dev, dtype=torch.int64)
    num_steps = torch.zeros((), device=dev, dtype=torch.int64)
    print(
        f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, rows "
        f"{args.rows}, hidden {args.hidden}, layers {args.layers}"
    )
    print(
        "# body         replay_1  replay_2    loop_1    loop_2  entry+1  "
        "added_iter_extra"
    )
    for name, body in _bodies(args.rows, args.hidden, args.layers).items():
        body()  # cuBLAS workspaces and Triton kernels before capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.graph(graph):
            body()
        graph.instantiate()
        loop = DeviceWhileLoop(
            graph, step=step, num_steps=num_steps, active=None, num_rows=0
        )
        if args.dot_dir:
            _dump(loop, os.path.join(args.dot_dir, f"loop-{name}.dot"))

        def run_loop(iters: int) -> float:
            num_steps.fill_(iters + 1)

            def launch():
                step.zero_()
                loop.launch()

            return _time(launch, args.launches)

        def run_replay(iters: int) -> float:
            def launch():
                step.zero_()
                for _ in range(iters):
                    graph.replay()

            return _time(launch, args.launches)

        r1, r2 = run_replay(1), run_replay(2)
        l1, l2 = run_loop(1), run_loop(2)
        print(
            f"{name:12s} {r1:9.1f} {r2:9.1f} {l1:9.1f} {l2:9.1f} {l1 - r1:8.1f} "
            f"{(l2 - l1) - (r2 - r1):17.1f}",
            flush=True,
        )
        loop.close()


if __name__ == "__main__":
    main()
