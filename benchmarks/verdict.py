"""DSL against best-K SD, per pair and concurrency, from abab.py runs.

    python benchmarks/verdict.py [--dsl-arm dsl6] [--tune FILE] [--out verdict.json] \\
        [NAME=]ABAB.json ...

Each input is one ``abab.py`` result of one model pair (labelled NAME, else
``<target>/<draft>`` from the file) at several concurrencies, with the arms
``target``, ``sd<K>`` (any Ks) and one DSL arm (``--dsl-arm``). Per pair and
concurrency, one row of ``verdict.json`` (a JSON list):

- ``best_sd_k``: the SD arm with the lowest median TPOT at that concurrency,
  read off this same run (``best_sd_note`` says so: it favours SD, whose K
  is picked on the very rounds it is compared on), or, with ``--tune FILE``,
  the K chosen on a tune split: an ``abab.py`` result on the tune split (best
  K per concurrency read off it), a ``run.py`` ``selection.json`` (``sd_k`` at
  ``<dataset>-c<c>``), or ``{"<c>": K, ...}``;
- ``best_sd_tpot_ms``, ``dsl_tpot_ms``, ``target_tpot_ms``: median TPOT over
  the rounds (null for an arm the run lacks);
- ``ratio_dsl_vs_best_sd`` = best-K SD TPOT / DSL TPOT, the mean over rounds
  of the per-round ratio (each round's two runs are adjacent in time):
  **> 1 means DSL is faster**, < 1 that best-K SD is; ``ci95`` its 95%
  t-interval over the rounds (null with one round); ``call``: "DSL faster" or
  "SD faster" when the interval excludes 1, else "tie";
- ``best_fixed``, ``ratio_dsl_vs_best_fixed``, ``ci95_vs_best_fixed``,
  ``call_vs_best_fixed``: the same against the faster (by median TPOT) of
  best-K SD and target-only (speculation off, what an operator would run
  where no K pays), so a load where target-only wins is not called a tie
  with SD;
- ``noise``: the round-to-round spread of the run's base arm (its first arm,
  as ``abab.py`` reports it): (max - min) / median of its TPOT;
- ``ratio_noise``: the same spread of the per-round ratio, what the interval
  is built from: with prompts rotated each round serves other requests, and
  the base arm's own TPOT moves with them (7-15% in session 50's run) where
  the ratio of DSL at cap 4 to SD K=2 on the same requests moved 2.6-6.0%;
- ``dsl_draft_forwards_per_step``, ``dsl_accepted_per_step``: the DSL arm's
  draft forward passes and accepted draft tokens per engine step (its own
  stat logger in ``abab.py``; null in files from before it);
- ``arms_per_step``: the same two numbers for every arm, with where the
  forwards come from (``forwards_source``): counted by DSL's worker, or for
  a fixed-K SD arm, whose worker does not count them, K for each engine step
  that verified drafts (null in files from before ``abab.py`` recorded those
  steps); 0 for target-only;
- ``other_arms_tpot_ms``: median TPOT of the arms that are neither target,
  a fixed-K SD arm nor the DSL arm (e.g. ``sd4av``, SD with upstream's
  adaptive verification, or an arm with a batch-size schedule).

With ``--label L`` the run's arms are ``<arm>+L`` (``abab.py``'s variants,
e.g. every arm under one worker extension): those are read as ``<arm>``, and
the other arms of the run are left out (``--dsl-arm`` names it without the
label), except a ``--dsl-arm`` named with another label (``--label t --dsl-arm
dsl4+u``: that DSL variant against the ``+t`` SD arms of the same rounds).

A short table is printed too.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abab import ci  # noqa: E402
from run import read_json  # noqa: E402

RATIO_NOTE = "best-K SD TPOT / DSL TPOT: > 1 means DSL is faster"
SAME_RUN = "best K read off this same run, which favours SD"
SD = re.compile(r"^sd(\d+)$")


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def best_k(point: dict) -> int | None:
    """The SD K with the lowest median TPOT at an abab point."""
    meds = {int(m.group(1)): statistics.median(v)
            for a, v in point["tpot_ms"].items() if (m := SD.match(a)) and v}
    return min(meds, key=meds.get) if meds else None


def tuned_ks(tune: dict, dataset: str) -> dict[int, int]:
    """Per concurrency the SD K chosen on a tune split, from an abab.py result,
    a run.py selection.json or ``{"<c>": K}``."""
    if "points" in tune:
        return {p["concurrency"]: k for p in tune["points"]
                if (k := best_k(p)) is not None}
    out: dict[int, int] = {}
    prefix = dataset.rsplit("-", 1)[0]
    for key, value in tune.items():
        if isinstance(value, dict):
            m = re.fullmatch(rf"{re.escape(prefix)}-c(\d+)", key)
            if m and value.get("sd_k") is not None:
                out[int(m.group(1))] = int(value["sd_k"])
        else:
            out[int(key)] = int(value)
    return out


def only_label(data: dict, label: str, keep: str | None = None) -> dict:
    """``data`` with its ``<arm>+label`` arms renamed ``<arm>`` and its other
    arms left out, in every per-arm table of every point; ``keep`` (an arm of
    another label, e.g. the DSL arm ``dsl4+u`` read against ``+t``'s SD arms)
    stays, under its own name."""
    suffix = f"+{label}"

    def rename(table: dict) -> dict:
        out = {a[: -len(suffix)]: v for a, v in table.items() if a.endswith(suffix)}
        if keep is not None and keep in table:
            out[keep] = table[keep]
        return out

    arms = [a[: -len(suffix)] for a in data["arms"] if a.endswith(suffix)]
    if keep is not None and keep in data["arms"] and not keep.endswith(suffix):
        arms.append(keep)
    if not arms:
        raise SystemExit(f"verdict: no arm ends in {suffix!r} ({', '.join(data['arms'])})")
    points = [{**p, **{k: rename(p[k]) for k in ("tpot_ms", "spec") if k in p}}
              for p in data["points"]]
    return {**data, "arms": arms, "points": points}


def rows_of(name: str | None, data: dict, dsl_arm: str,
            tune: dict[int, int] | None, tune_name: str | None) -> list[dict]:
    pair = name or f"{data.get('target')}/{data.get('draft')}"
    base = data["arms"][0]
    rows = []
    for point in data["points"]:
        if point.get("bystanders"):
            # Measured with idle engines beside the arms (abab.py --bystanders):
            # a question about the harness, not a row of the bar.
            continue
        c = point["concurrency"]
        tpot = point["tpot_ms"]

        def med(arm):
            v = tpot.get(arm) or []
            return statistics.median(v) if v else None

        if tune is not None:
            k = tune.get(c)
            note = (f"K chosen on the tune split ({tune_name})" if k is not None
                    else f"no K for c={c} in the tune split ({tune_name})")
            if k is not None and not tpot.get(f"sd{k}"):
                note += f"; sd{k} was not measured in this run"
        else:
            k, note = best_k(point), SAME_RUN
        sd, dsl = tpot.get(f"sd{k}") or [], tpot.get(dsl_arm) or []
        per_round, mean, lo, hi, call = _against(sd, dsl, "SD")
        fixed = f"sd{k}" if k is not None else None
        if med("target") is not None and (
                fixed is None or med(fixed) is None or med("target") < med(fixed)):
            fixed = "target"
        _, f_mean, f_lo, f_hi, f_call = _against(
            tpot.get(fixed) or [] if fixed else [], dsl,
            "target-only" if fixed == "target" else "SD")
        b = tpot.get(base) or []
        noise = (max(b) - min(b)) / statistics.median(b) if b else None
        ratio_noise = ((max(per_round) - min(per_round)) / statistics.median(per_round)
                       if per_round else None)
        spec_all = point.get("spec") or {}
        spec = spec_all.get(dsl_arm) or {}
        others = {a: med(a) for a in tpot
                  if a not in ("target", dsl_arm) and not SD.match(a)}
        rows.append({
            "pair": pair, "concurrency": c, "best_sd_k": k,
            "best_sd_tpot_ms": med(f"sd{k}") if k is not None else None,
            "dsl_tpot_ms": med(dsl_arm), "target_tpot_ms": med("target"),
            "ratio_dsl_vs_best_sd": mean, "ci95": [lo, hi], "noise": noise,
            "ratio_noise": ratio_noise,
            "best_fixed": fixed, "ratio_dsl_vs_best_fixed": f_mean,
            "ci95_vs_best_fixed": [f_lo, f_hi], "call_vs_best_fixed": f_call,
            "dsl_draft_forwards_per_step": spec.get("draft_forwards_per_step"),
            "dsl_accepted_per_step": spec.get("accepted_per_step"),
            "other_arms_tpot_ms": others,
            "arms_per_step": {
                a: {"draft_forwards": v.get("draft_forwards_per_step"),
                    "forwards_source": v.get("draft_forwards_source"),
                    "accepted": v.get("accepted_per_step")}
                for a, v in spec_all.items()},
            "best_sd_note": note,
            "call": call, "rounds": len(per_round), "per_round_ratio": per_round,
            "dsl_arm": dsl_arm, "noise_arm": base, "ratio_note": RATIO_NOTE,
        })
    return rows


def _against(base: list[float], dsl: list[float], name: str):
    """Per-round ratios base / DSL, their mean and 95% interval, and the call
    (``name`` faster, DSL faster, tie)."""
    per_round = [b / d for b, d in zip(base, dsl)]
    mean, lo, hi = ci(per_round) if per_round else (None, None, None)
    lo, hi = _num(lo), _num(hi)
    call = None
    if lo is not None and hi is not None:
        call = "DSL faster" if lo > 1 else f"{name} faster" if hi < 1 else "tie"
    return per_round, mean, lo, hi, call


def table(rows: list[dict]) -> str:
    def f(x, fmt=".3f"):
        return "-" if x is None else format(x, fmt)
    lines = [f"ratio = {RATIO_NOTE}",
             f"{'pair':32} {'c':>3} {'K':>2} {'SD ms':>7} {'DSL ms':>7} "
             f"{'tgt ms':>7} {'ratio':>6} {'95% CI':>15} {'noise':>6} {'r-noise':>7} "
             f"{'fwd/st':>6} {'acc/st':>6}  call  (vs the best fixed: arm ratio call)"]
    for r in rows:
        lo, hi = r["ci95"]
        lines.append(
            f"{r['pair'][:32]:32} {r['concurrency']:3d} {f(r['best_sd_k'], 'd'):>2} "
            f"{f(r['best_sd_tpot_ms']):>7} {f(r['dsl_tpot_ms']):>7} "
            f"{f(r['target_tpot_ms']):>7} {f(r['ratio_dsl_vs_best_sd']):>6} "
            f"{'[' + f(lo) + ', ' + f(hi) + ']':>15} "
            f"{f(r['noise'] and 100 * r['noise'], '.1f') + '%':>6} "
            f"{f(r['ratio_noise'] and 100 * r['ratio_noise'], '.1f') + '%':>7} "
            f"{f(r['dsl_draft_forwards_per_step'], '.2f'):>6} "
            f"{f(r['dsl_accepted_per_step'], '.2f'):>6}  {r['call'] or '-'}  "
            f"({r['best_fixed'] or '-'} {f(r['ratio_dsl_vs_best_fixed'])} "
            f"{r['call_vs_best_fixed'] or '-'})")
    notes = sorted({r["best_sd_note"] for r in rows})
    return "\n".join(lines + [f"K: {n}" for n in notes])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("runs", nargs="+", help="abab.py result files, [NAME=]FILE")
    ap.add_argument("--dsl-arm", required=True,
                    help="the DSL arm, e.g. dsl6; with --label, an arm of another "
                    "label (e.g. dsl4+u) is read as it is, against the label's SD arms")
    ap.add_argument("--tune", type=Path,
                    help="per-concurrency SD K chosen on a tune split (see below)")
    ap.add_argument("--label", help="read the arms <arm>+LABEL as <arm>, "
                    "leaving the others out")
    ap.add_argument("--out", type=Path, default=Path("verdict.json"),
                    help=f"the rows (JSON list); ratio_dsl_vs_best_sd = {RATIO_NOTE}")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    tune_data = read_json(args.tune) if args.tune else None
    for spec in args.runs:
        name, _, path = spec.rpartition("=")
        data = read_json(Path(path))
        if args.label:
            data = only_label(data, args.label,
                              keep=args.dsl_arm if "+" in args.dsl_arm else None)
        if args.dsl_arm not in data["arms"]:
            sys.stderr.write(f"verdict: {path} has no arm {args.dsl_arm} "
                             f"({', '.join(data['arms'])}; failed: "
                             f"{data.get('failed') or {}})\n")
        tune = (tuned_ks(tune_data, data.get("dataset", "")) if tune_data is not None
                else None)
        rows += rows_of(name or None, data, args.dsl_arm, tune,
                        str(args.tune) if args.tune else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))
    print(table(rows))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
