#!/usr/bin/env python3
"""Session 24: which uniform decode batch sizes find no FULL CUDA graph in the
MRV2 runner's dispatch table, for the capture sizes two DSL engines of the run
chose (run/abab.log). Run from vllm/ with the project's venv (CPU):

    cd vllm && python3 ../benchmarks/results/2026-12-04-h200-s24/probe_dispatch.py

On the series before 0052 it lists the sizes in README.md; with 0052, none.
"""
import sys
from types import SimpleNamespace
import torch
sys.path.insert(0, "tests/v1/spec_decode")  # noqa: E402
from vllm.config import CUDAGraphMode, CompilationConfig
from vllm.v1.worker.gpu import cudagraph_utils as cu
import test_dynamic_sd_cug as t
cu.get_pp_group = lambda: SimpleNamespace(is_first_rank=True, is_last_rank=True)
cu.current_platform.get_global_graph_pool = lambda: None

def probe(sizes, max_seqs, K, schedule, widths_to_check):
    cfg = t._create_vllm_config_for_dsd(max_seqs, K, num_spec_per_batch_size=schedule)
    cc = CompilationConfig(cudagraph_mode=CUDAGraphMode.FULL_AND_PIECEWISE, cudagraph_capture_sizes=sizes)
    cc.max_cudagraph_capture_size = 512
    cc.post_init_cudagraph_sizes()
    cfg.compilation_config = cc
    m = cu.CudaGraphManager(vllm_config=cfg, device=torch.device("cpu"),
                            cudagraph_mode=CUDAGraphMode.FULL_AND_PIECEWISE, decode_query_len=K + 1)
    m._graphs_captured = True
    for w in widths_to_check:
        q = w + 1
        bad = []
        for b in range(1, max_seqs + 1):
            d = m.dispatch(b, b * q, q, 0)
            if d.cg_mode != CUDAGraphMode.FULL:
                bad.append(b)
        print(f"  width {w}: batch sizes without a FULL graph: {bad}")

dsl6 = [1, 2, 3, 4, 6, 7, 8, 12, 14, 16, 24, 28, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256, 272, 288, 304, 320, 336, 352, 368, 384, 400, 416, 432, 448, 464, 480, 496, 512]
print("dsl6@1-4:6/5-64:2 (cap 6), its engine's capture sizes")
probe(dsl6, 64, 6, [(1, 4, 6), (5, 64, 2)], [2, 6])
sd2 = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256, 272, 288, 304, 320, 336, 352, 368, 384]
dsl4 = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256, 272, 280, 288, 304, 320, 336, 352, 368, 384, 400, 416, 432, 448, 464, 480, 496, 512]
print("dsl4 served (widths 1-4), its engine's capture sizes")
probe(dsl4, 64, 4, [(1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 64, 4)], [1, 2, 3, 4])
