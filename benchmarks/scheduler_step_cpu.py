"""Host time of the scheduler's part of one decode step, with and without SD.

    python benchmarks/scheduler_step_cpu.py [--batch 1,8,32,64] [--k 0,1,3] \\
        [--steps 400] [--dsl] [--out FILE.json]

Runs vLLM's ``Scheduler`` alone (no model, no worker: the test helpers of
vLLM's tree build it with a stand-in KV cache config) through steady decode
steps of B requests: ``schedule()``, ``update_from_output()`` with every
request accepting half of its K drafts (rounded down) plus its bonus token,
and ``update_draft_token_ids()`` with K drafts. Reports the median time of
those three calls per step, per (B, K), K = 0 being target-only.

With ``--dsl`` each K >= 1 runs a second time as DSL's scheduler runs it with
``dynamic_lookahead`` on the MRV2 runner: the served draft width controller
(``ServedWidthController``, over vLLM's default capture sizes up to B) chooses
the width each step and is handed each output, and the output carries the
drafted counts (the half of the width that was accepted, plus one) and the
draft forwards. The difference is DSL's scheduler-side host work.

What it answers: how much of a served speculative step at large batch is the
scheduler's host work, and how that grows with B and K. It measures the
scheduler only; the model runner's host work (input preparation, the
rejection sampler's bookkeeping) is not in it. Run it on the machine whose
host time matters; numbers from another CPU give the shape, not the size.
Runs on the checkout's ``vllm/`` tree (put first on ``sys.path``), whose
``tests/v1/core/utils.py`` builds the scheduler; its model config comes from
the Hugging Face cache (``tests/upstream/seed_hf_cache.py`` seeds one).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def measure(batch: int, k: int, steps: int, warmup: int = 20, dsl: bool = False) -> dict:
    from tests.v1.core.utils import create_requests, create_scheduler
    from vllm.v1.outputs import DraftTokenIds, ModelRunnerOutput
    from vllm.v1.spec_decode.dynamic.served_width import ServedWidthController

    scheduler = create_scheduler(
        max_num_seqs=batch,
        num_speculative_tokens=k or None,
        num_blocks=100000,
    )
    total = warmup + steps + 8
    requests = create_requests(
        num_requests=batch, num_tokens=100, max_tokens=total * (k + 1) + 16
    )
    for r in requests:
        scheduler.add_request(r)
    if dsl:
        if not k:
            raise SystemExit("scheduler_step_cpu: --dsl needs K >= 1")
        sizes = [s for s in (1, 2, 4, *range(8, 513, 8)) if s <= batch] or [batch]
        scheduler.draft_width_controller = ServedWidthController(sizes, batch, k)
    accepted = k // 2
    times = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        out = scheduler.schedule()
        t1 = time.perf_counter()
        # The stand-in model output is the benchmark's work, not timed.
        req_ids = [r.request_id for r in scheduler.running]
        index = {rid: i for i, rid in enumerate(req_ids)}
        sampled = [
            [7] * (min(accepted, len(out.scheduled_spec_decode_tokens.get(rid, ()))) + 1)
            for rid in req_ids
        ]
        output = ModelRunnerOutput(
            req_ids=req_ids,
            req_id_to_index=index,
            sampled_token_ids=sampled,
            logprobs=None,
            prompt_logprobs_dict={},
            pooler_output=[],
        )
        if dsl:
            widths = [len(out.scheduled_spec_decode_tokens.get(r, ())) for r in req_ids]
            output.num_spec_tokens_drafted = [min(w, accepted + 1) for w in widths]
            output.num_draft_forwards = max(output.num_spec_tokens_drafted, default=0)
        drafts = DraftTokenIds(req_ids, [[5] * k for _ in req_ids]) if k else None
        t2 = time.perf_counter()
        scheduler.update_from_output(out, output)
        if drafts is not None:
            scheduler.update_draft_token_ids(drafts)
        t3 = time.perf_counter()
        if step >= warmup:
            times.append((t1 - t0) + (t3 - t2))
    return {
        "batch": batch,
        "k": k,
        "dsl": dsl,
        "steps": steps,
        "median_ms": 1e3 * statistics.median(times),
        "p90_ms": 1e3 * sorted(times)[int(0.9 * len(times))],
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", default="1,8,32,64")
    ap.add_argument("--k", default="0,1,3")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--dsl", action="store_true",
                    help="also run each K >= 1 with DSL's served draft width controller")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    here = Path(__file__).resolve().parents[1] / "vllm"
    sys.path.insert(0, str(here))
    rows = []
    for b in (int(x) for x in args.batch.split(",")):
        for k in (int(x) for x in args.k.split(",")):
            for dsl in (False, True) if args.dsl and k else (False,):
                row = measure(b, k, args.steps, dsl=dsl)
                rows.append(row)
                print(f"B={b:3d} K={k}{' DSL' if dsl else '    '}: scheduler "
                      f"{row['median_ms']:.3f} ms per step (p90 {row['p90_ms']:.3f})",
                      flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
