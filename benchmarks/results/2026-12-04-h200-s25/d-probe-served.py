#!/usr/bin/env python3
"""Session 25, the device time left: one DSL engine (SmolLM2-135M target, the
undistilled 4-layer draft, cap 4, default config) with patches-wip/
dsl-served-width 0001-0004, engine core in this process, serving one wave of
N requests of 256 tokens (greedy, EOS ignored) a few times at N = 32, 8, 1.
After each wave it writes the served width controller's state per captured
batch size: the width, the draft step and slot costs it reads from the served
steps, the periods by forward count, and the counterfactual log ratios; the
start-up cost table is in the engine log. Whether the draft step cost read
from served steps (one-step lagged forwards) matches the start-up table's is
the question.

    python3 d-probe-served.py MODELS PROMPTS_JSONL OUT_JSON
"""

import json
import os
import statistics as st
import sys
import time

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


def state(controller) -> list[dict]:
    rows = []
    for size in controller._state:
        rows.append({
            "rows": size.rows,
            "width": size.width,
            "blocks": size.blocks,
            "draft_step_ms": size.draft_step_time(),
            "slot_ms": size.slot_time(),
            "narrower": [round(x, 4) for x in size.narrower],
            "pairs": {w: [round(x, 4) for x in p] for w, p in size.pairs.items()},
            "periods_by_forwards": {
                k: [len(v), round(st.median(v) * 1e3, 3)]
                for k, v in size.periods_by_forwards.items() if v
            },
            "narrower_periods_by_forwards": {
                k: [len(v), round(st.median(v) * 1e3, 3)]
                for k, v in size.narrower_periods_by_forwards.items() if v
            },
        })
    return rows


def main(models: str, prompts_path: str, out: str) -> None:
    from vllm import LLM, SamplingParams

    with open(prompts_path) as f:
        prompts = [json.loads(line)["prompt"] for line in f][:64]
    t0 = time.perf_counter()
    llm = LLM(
        model=f"{models}/smollm2-135m",
        speculative_config={
            "method": "draft_model",
            "model": f"{models}/smollm2-l4",
            "num_speculative_tokens": 4,
            "dynamic_lookahead": True,
        },
        max_model_len=1024,
        gpu_memory_utilization=0.2,
        kv_cache_memory_bytes=2 << 30,
        max_num_seqs=32,
        seed=0,
    )
    record = {"init_s": round(time.perf_counter() - t0, 1), "waves": []}
    controller = llm.llm_engine.engine_core.engine_core.scheduler.draft_width_controller
    params = SamplingParams(max_tokens=256, ignore_eos=True, temperature=0.0)
    for n, waves in ((32, 6), (8, 4), (1, 4)):
        for w in range(waves):
            t = time.perf_counter()
            outs = llm.generate(prompts[w : w + n], params, use_tqdm=False)
            record["waves"].append({
                "n": n,
                "s": round(time.perf_counter() - t, 3),
                "tokens": sum(len(o.outputs[0].token_ids) for o in outs),
                "state": state(controller),
            })
            with open(out, "w") as f:
                json.dump(record, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
