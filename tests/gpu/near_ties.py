"""Greedy outputs under load: every divergence from target-only must start at a
near-tie of the target.

Under load (64 requests in flight, aborts, preemptions) a DSL engine and the
target-only engine run the target in different batch shapes, so bf16 numerics
may flip the argmax where the target's top two tokens are nearly tied. A share
of identical requests cannot tell such a flip from a bug, and any fixed share
fails once enough near-ties occur. Instead, per request, the first position at
which the DSL output differs from target-only's must be one where the target
run itself ranked the DSL token within ``max_gap`` (natural-log units) of its
own greedy token, i.e. the DSL token is among the target's recorded top
logprobs there and ``logprob(target token) - logprob(DSL token) <= max_gap``
(the top-2 gap when the DSL token is the second choice). What follows the
first divergence is a different continuation and is not compared.

No torch: the checker runs on recorded results (``stress`` of
engine_worker.py, whose target-only cases record ``logprobs``).
"""

from __future__ import annotations

# The largest top-2 logprob gap at which a divergence counts as a near-tie
# flip. SmolLM2-135M's logits are bf16: one ulp is 0.0625 for logits in
# [8, 16) and 0.125 in [16, 32), and the hidden state differs by a few ulps
# between batch shapes (and after a preemption's recompute), so flips are
# expected at gaps of a few tenths; a corrupted token (a bug) lands at the
# median gap of greedy decoding, typically several nats, or outside the
# target's top two altogether.
MAX_NEAR_TIE_GAP = 0.5


def first_divergence(a: list[int], b: list[int]) -> int | None:
    """The first position where ``a`` and ``b`` differ (a length difference
    counts at the shorter length); None if they are equal."""
    for j, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return j
    return None if len(a) == len(b) else min(len(a), len(b))


def divergence_violations(
    target: dict[str, dict],
    got: dict[str, dict],
    request_ids: list[str],
    max_gap: float = MAX_NEAR_TIE_GAP,
) -> tuple[list[str], list[dict]]:
    """Check every request of ``request_ids``: ``target`` and ``got`` map a
    request id to its record (``tokens``; the target's also ``logprobs``:
    per position ``[[token, logprob], ...]`` best first).

    Returns ``(violations, divergences)``: a message per request whose
    divergence is not a near-tie of the target (or cannot be checked), and
    one dict per diverging request (id, position, target and DSL tokens, gap;
    gap None when the DSL token is not among the target's recorded top
    tokens).
    """
    violations: list[str] = []
    divergences: list[dict] = []
    for rid in request_ids:
        want = target[rid]["tokens"]
        have = got[rid]["tokens"]
        j = first_divergence(want, have)
        if j is None:
            continue
        if j >= min(len(want), len(have)):
            violations.append(f"{rid}: lengths differ ({len(have)} vs {len(want)})")
            divergences.append({"request": rid, "position": j, "gap": None})
            continue
        logprobs = target[rid].get("logprobs")
        if not logprobs or j >= len(logprobs):
            violations.append(
                f"{rid}: diverges at token {j}, and the target run recorded no "
                "logprobs there (run the target case with stress_logprobs)"
            )
            divergences.append({"request": rid, "position": j, "gap": None})
            continue
        ranked = {int(t): float(lp) for t, lp in logprobs[j]}
        if want[j] not in ranked:
            violations.append(
                f"{rid}: the target's logprobs at token {j} lack its own token {want[j]}"
            )
            divergences.append({"request": rid, "position": j, "gap": None})
            continue
        gap = ranked[want[j]] - ranked[have[j]] if have[j] in ranked else None
        divergences.append(
            {
                "request": rid,
                "position": j,
                "target_token": want[j],
                "token": have[j],
                "gap": gap,
            }
        )
        if gap is None:
            violations.append(
                f"{rid}: diverges at token {j} to {have[j]}, not among the target's "
                f"top {len(ranked)} there ({sorted(ranked.items(), key=lambda kv: -kv[1])})"
            )
        elif gap > max_gap:
            violations.append(
                f"{rid}: diverges at token {j} to {have[j]} although the target "
                f"preferred {want[j]} by {gap:.3f} > {max_gap} nats"
            )
    return violations, divergences
