"""The demo of scripts/demo.sh: the bundled target + draft pair, per-request counts.

Runs one in-process vLLM engine (CPU, fp32) on the fixture SmolLM2-135M target
with a layer-truncated draft: with dynamic speculation lookahead (DSL) when
this vLLM has ``draft_confidence_threshold``, else plain speculative decoding
(and says so). Prints, per request, the verify steps, drafted and accepted
tokens and the steps that drafted fewer than K tokens (DSL early exits), then
the engine's totals, including its early-exit counter when it has one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the case, print the report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--draft", default="draft_l20", help="fixture draft model (draft_l4, "
                   "draft_l20, or target for a self-draft)")
    p.add_argument("--k", type=int, default=5, help="num_speculative_tokens (max per step)")
    p.add_argument("--tau", type=float, default=0.6, help="DSL confidence threshold")
    p.add_argument("--num-prompts", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--check", action="store_true",
                   help="also run the target alone and compare the tokens")
    args = p.parse_args(argv)
    harness.configure_env()
    t0 = time.perf_counter()
    fx = harness.Fixtures.load()
    prompts = fx.select_prompts(args.num_prompts)
    if harness.dsl_supported():
        case = harness.dsl_case(args.tau, args.k, args.draft)
        print(f"DSL: draft_model {args.draft}, K={args.k}, "
              f"{harness.DSL_FIELD}={args.tau}")
    else:
        case = harness.Case(f"sd_{args.draft}_k{args.k}", "draft_model", args.draft, args.k)
        print(f"DSL is not available in this vLLM (SpeculativeConfig has no "
              f"{harness.DSL_FIELD}): plain speculative decoding, draft_model "
              f"{args.draft}, K={args.k}")
    print(f"target {fx.model('target')}\ndraft  {fx.model(args.draft)}\n"
          f"{len(prompts)} prompts (ShareGPT + HumanEval, test split) x "
          f"{args.max_tokens} tokens, greedy\n", flush=True)
    result = harness.run_case(case, fx, prompts, args.max_tokens)
    print(harness.format_requests(result, prompts))
    drafts, drafted = result.counter("num_drafts"), result.counter("num_draft_tokens")
    accepted = result.counter("num_accepted_tokens")
    exits = result.early_exits()
    short = sum(s or 0 for s in harness.short_drafts(result))
    print(f"\nengine totals: {drafts} drafts, {drafted} drafted, {accepted} accepted "
          f"({100 * accepted / max(drafted, 1):.0f}%), mean acceptance length "
          f"{result.mean_acceptance_length or 0:.2f}, steps with < K drafted {short}, "
          f"early exits {'(no counter in this vLLM)' if exits is None else exits}")
    per_pos = result.counters.get(harness.SPEC_PREFIX + "num_accepted_tokens_per_pos")
    print(f"accepted per position: {per_pos}")
    requested = result.counters.get(harness.SPEC_PREFIX + "num_draft_tokens_requested")
    drafted_pos = result.counters.get(harness.SPEC_PREFIX + "num_drafted_tokens_per_pos")
    if requested is not None or drafted_pos is not None:
        print(f"requested draft tokens: {requested}; drafted per position: {drafted_pos}")
    print(f"engine start {result.init_s:.1f}s, generation {result.gen_s:.1f}s "
          f"({result.num_tokens / result.gen_s:.1f} tok/s)")
    print(f"\nrequest 0 ({prompts[0]['source']}): {' '.join(prompts[0]['text'].split())[:80]}"
          f"\n  -> {' '.join(result.texts[0].split())[:160]}")
    rc = 0
    if args.check:
        base = harness.run_case(harness.BASELINE, fx, prompts, args.max_tokens)
        diffs = harness.compare(base, result)
        print(f"\ntarget alone: {base.gen_s:.1f}s; tokens "
              f"{'identical' if not diffs else 'DIFFERENT: ' + '; '.join(diffs)}")
        rc = 1 if diffs else 0
    print(f"demo done in {time.perf_counter() - t0:.0f}s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
