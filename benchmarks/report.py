"""Tables, goals, oracle and plots from a ``run.py`` results folder.

    python benchmarks/report.py RESULTS_DIR [--title TEXT]

Writes ``RESULTS_DIR/report.md``, ``summary.json`` and, when matplotlib is
installed, ``tpot_vs_k_tau.png``, ``speedup_vs_concurrency.png`` and
``acceptance_per_position.png``.

Definitions (every number comes from the raw cell files):

- TPOT of a request: (time of its last token - time of its first) / (tokens - 1);
  a cell's TPOT is the mean over the requests of all its repetitions.
- Noise floor: per cell, |rep0 - rep1| / mean of the two repetitions' TPOT.
- Acceptance length: tokens emitted per verification step (accepted + 1),
  from the per-step token counts of each request.
- Oracle: a policy that knows every step's acceptance length a drafts exactly
  a tokens. Per step it costs c_t + a * c_d, where c_t (target verification
  step) and c_d (one draft token) are fitted by least squares to the measured
  step times of SD at each K (same dataset, concurrency, test split); a comes
  from SD at the largest K (so a is capped there). Oracle TPOT =
  sum(cost) / sum(a + 1); DSL's fraction of it = oracle TPOT / DSL TPOT.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import dsl_name, dsl_tune_tpot, floats, ints, read_json  # noqa: E402

GOALS = {
    "dsl_over_sd_c1": 1.18,
    "dsl_fraction_of_oracle": 0.95,
    "dsl_worse_than_sd_max": 0.02,
    "tau0_overhead_max": 0.01,
}


def load(folder: Path) -> dict[str, dict]:
    """The cell files of a results folder (``*.json``, or ``*.json.gz`` as
    committed), by cell name."""
    cells = {}
    for f in sorted([*folder.glob("*.json"), *folder.glob("*.json.gz")]):
        name = f.name.removesuffix(".gz").removesuffix(".json")
        if name in ("config", "selection", "summary"):
            continue
        data = read_json(f)
        if "results" in data:
            cells[name] = data
    return cells


def runs(cell: dict, prompts: str, c: int) -> list[dict]:
    return [r for r in cell["results"]
            if r["prompts"] == prompts and r["concurrency"] == c]


def tpot(cell: dict | None, prompts: str, c: int) -> float | None:
    if cell is None:
        return None
    vals = [q["tpot"] for r in runs(cell, prompts, c) for q in r["requests"]
            if q["tpot"] is not None]
    return sum(vals) / len(vals) if vals else None


def rep_noise(cell: dict, prompts: str, c: int) -> float | None:
    per_rep = {}
    for r in runs(cell, prompts, c):
        vals = [q["tpot"] for q in r["requests"] if q["tpot"] is not None]
        if vals:
            per_rep[r["rep"]] = sum(vals) / len(vals)
    if len(per_rep) < 2:
        return None
    a, b = per_rep[0], per_rep[1]
    return abs(a - b) / ((a + b) / 2)


def stats(cell: dict, prompts: str, c: int) -> dict:
    """TTFT, throughput, acceptance and drafting statistics of one cell."""
    rs = runs(cell, prompts, c)
    reqs = [q for r in rs for q in r["requests"]]
    steps = [d for q in reqs for d in q["deltas"][1:]]
    tokens = sum(q["num_tokens"] for q in reqs)
    wall = sum(r["wall_s"] for r in rs)
    out = {
        "tpot_ms": 1e3 * tpot(cell, prompts, c) if reqs else None,
        "ttft_ms": 1e3 * sum(q["ttft"] for q in reqs) / len(reqs) if reqs else None,
        "output_tok_s": tokens / wall if wall else None,
        "acceptance_length": sum(steps) / len(steps) if steps else None,
    }
    cnt: dict = {}
    for r in rs:
        for k, v in r["counters"].items():
            if isinstance(v, list):
                old = cnt.get(k, [])
                old = old + [0] * (len(v) - len(old))
                cnt[k] = [a + b for a, b in zip(old, v)]
            else:
                cnt[k] = cnt.get(k, 0) + v
    drafts = cnt.get("vllm:spec_decode_num_drafts", 0)
    if drafts:
        acc = cnt.get("vllm:spec_decode_num_accepted_tokens_per_pos", [])
        drafted = cnt.get("vllm:spec_decode_num_drafted_tokens_per_pos")
        out["acceptance_per_pos"] = [a / drafts for a in acc]
        out["mean_drafted"] = cnt.get("vllm:spec_decode_num_draft_tokens", 0) / drafts
        out["exit_rate"] = cnt.get("vllm:spec_decode_num_early_exits", 0) / drafts
        if drafted:
            out["drafted_per_pos"] = [d / drafts for d in drafted]
    return out


def step_time(cell: dict, prompts: str, c: int) -> float | None:
    """Mean time of one verification step (first token excluded)."""
    vals = []
    for q in (q for r in runs(cell, prompts, c) for q in r["requests"]):
        if q["tpot"] is not None and len(q["deltas"]) > 1:
            vals.append(q["tpot"] * (q["num_tokens"] - 1) / (len(q["deltas"]) - 1))
    return sum(vals) / len(vals) if vals else None


def oracle(cells: dict, sd_ks: list[int], prompts: str, c: int) -> dict | None:
    pts = [(k, step_time(cells[f"tune-sd-k{k}"], prompts, c)) for k in sd_ks
           if f"tune-sd-k{k}" in cells]
    pts = [(k, t) for k, t in pts if t is not None]
    if len(pts) < 2:
        return None
    n = len(pts)
    mk = sum(k for k, _ in pts) / n
    mt = sum(t for _, t in pts) / n
    var = sum((k - mk) ** 2 for k, _ in pts)
    c_d = sum((k - mk) * (t - mt) for k, t in pts) / var
    c_t = mt - c_d * mk
    kmax = max(k for k, _ in pts)
    accepted = [d - 1 for r in runs(cells[f"tune-sd-k{kmax}"], prompts, c)
                for q in r["requests"] for d in q["deltas"][1:]]
    if not accepted:
        return None
    cost = sum(c_t + a * max(c_d, 0.0) for a in accepted)
    return {"tpot_ms": 1e3 * cost / sum(a + 1 for a in accepted),
            "c_t_ms": 1e3 * c_t, "c_d_ms": 1e3 * c_d, "k_cap": kmax}


# Results folders from before the removal of draft_confidence_exit_lag may
# select (K, τ, lag): lag 1 named its cells like (K, τ), another lag L added
# ``-lag<L>`` to the cell name. The two helpers below read both forms.


def dsl_cell(phase: str, sel) -> str | None:
    """Cell name of a DSL selection (K, τ); ``None`` without one."""
    if not sel:
        return None
    k, t, *lag = sel
    return dsl_name(phase, k, t) + (f"-lag{lag[0]}" if lag and lag[0] != 1 else "")


def dsl_label(sel) -> str:
    """(K, τ) of a DSL selection (an older folder's lag L ≠ 1: (K, τ, lag L))."""
    if not sel:
        return "–"
    k, t, *lag = sel
    return f"({k}, {t})" if not lag or lag[0] == 1 else f"({k}, {t}, lag {lag[0]})"


def recommend(cells: dict, cfg: dict, sel: dict, datasets: list[str],
              conc: list[int]) -> dict:
    """Per dataset and concurrency band, the fastest arm on the tune split
    (target-only, SD at its best K, DSL at its best (K, tau)) and the
    ``--speculative-config`` that runs it (None: no speculation). A band runs
    from a measured concurrency to the next one; the last is open-ended."""
    draft = cfg["draft"]
    if not Path(draft).is_absolute() and cfg.get("models"):
        draft = str(Path(cfg["models"]) / draft)
    out: dict[str, list[dict]] = {}
    for d in datasets:
        bands = []
        cs = sorted(conc)
        for i, c in enumerate(cs):
            s = sel.get(f"{d}-c{c}", {})
            cand: dict[str, tuple[float, dict | None]] = {}
            t = tpot(cells.get("tune-target"), f"{d}-tune", c)
            if t:
                cand["target-only"] = (t, None)
            for k, v in (s.get("tune_tpot_sd") or {}).items():
                if v:
                    cand[f"SD K={k}"] = (v, {"method": "draft_model", "model": draft,
                                             "num_speculative_tokens": int(k)})
            for name, v in (s.get("tune_tpot_dsl") or {}).items():
                k, tau = name.removeprefix("k").split("-t")
                if v:
                    cand[f"DSL ({k}, {tau})"] = (v, {
                        "method": "draft_model", "model": draft,
                        "num_speculative_tokens": int(k),
                        "draft_confidence_threshold": float(tau)})
            if not cand:
                continue
            ranked = sorted(cand.items(), key=lambda kv: kv[1][0])
            (arm, (best, spec)) = ranked[0]
            bands.append({
                "concurrency": [c, cs[i + 1] - 1 if i + 1 < len(cs) else None],
                "arm": arm, "tune_tpot_ms": 1e3 * best, "speculative_config": spec,
                "runner_up": ranked[1][0] if len(ranked) > 1 else None,
                "margin": ranked[1][1][0] / best - 1 if len(ranked) > 1 else None})
        out[d] = bands
    return out


def one_config(bands: list[dict]) -> dict | None:
    """The bands' choices as one ``--speculative-config`` for a server whose
    concurrency varies: K per band through upstream's batch-size schedule
    (``num_speculative_tokens_per_batch_size``; 0 where target-only won, the
    last band open-ended) and the DSL threshold of the first band that chose
    DSL (the schedule varies K, not tau). None if no band speculates. Also the
    ``abab.py`` arm that measures it."""
    if not any(b["speculative_config"] for b in bands):
        return None
    schedule, tau, draft = [], None, None
    for b in bands:
        spec = b["speculative_config"] or {}
        lo, hi = b["concurrency"]
        schedule.append([lo, hi if hi is not None else lo,
                         spec.get("num_speculative_tokens", 0)])
        draft = draft or spec.get("model")
        if tau is None:
            tau = spec.get("draft_confidence_threshold")
    k = max(e[2] for e in schedule)
    spec = {"method": "draft_model", "model": draft, "num_speculative_tokens": k}
    arm = f"sd{k}" if tau is None else f"dsl{k}t{tau:g}"
    if tau is not None:
        spec["draft_confidence_threshold"] = tau
    if len({e[2] for e in schedule}) > 1:
        spec["num_speculative_tokens_per_batch_size"] = schedule
        arm += "@" + "/".join(f"{lo}-{hi}:{kk}" for lo, hi, kk in schedule)
    return {"speculative_config": spec, "abab_arm": arm}


def recommend_lines(rec: dict) -> list[str]:
    lines = ["## Recommended `--speculative-config` (tune split)", "",
             "Per concurrency band, the fastest arm measured on the tune split and the "
             "value to pass to `vllm serve --speculative-config` (none: serve without "
             "speculation). The margin is the runner-up's TPOT over the winner's, on "
             "one tune run; read it against the noise floor. `recommend.json` holds "
             "the same.", "",
             "| dataset | concurrency | fastest | tune TPOT ms | margin over | "
             "`--speculative-config` |", "| --- | --- | --- | --- | --- | --- |"]
    for d, bands in rec.items():
        for b in bands:
            lo, hi = b["concurrency"]
            rng = f"{lo}–{hi}" if hi and hi != lo else (f"{lo}" if hi else f"≥ {lo}")
            spec = (f"`{json.dumps(b['speculative_config'])}`"
                    if b["speculative_config"] else "none")
            margin = (f"{100 * b['margin']:.1f}% ({b['runner_up']})"
                      if b["margin"] is not None else "–")
            lines.append(f"| {d} | {rng} | {b['arm']} | {b['tune_tpot_ms']:.3f} | "
                         f"{margin} | {spec} |")
    lines.append("")
    for d, bands in rec.items():
        one = one_config(bands)
        if one is None or len(bands) < 2:
            continue
        lines += [f"For a server whose concurrency varies ({d}), the bands as one "
                  "config (K per band through `num_speculative_tokens_per_batch_size`, "
                  "0 = no drafts; the threshold of the first DSL band); measure it "
                  f"with the `abab.py` arm `{one['abab_arm']}`:", "",
                  f"    --speculative-config '{json.dumps(one['speculative_config'])}'",
                  ""]
    return lines


def fmt(x, spec=".3f"):
    return "–" if x is None else format(x, spec)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--title", default="DSL benchmark")
    args = ap.parse_args(argv)
    folder = args.results
    cfg = json.loads((folder / "config.json").read_text())
    sel = json.loads((folder / "selection.json").read_text())
    cells = load(folder)
    datasets = cfg["datasets"].split(",")
    conc = ints(cfg["concurrency"])
    sd_ks = ints(cfg["sd_k"])
    summary: dict = {"rows": [], "goals": {}}
    noise = []
    for cell in cells.values():
        for d in datasets:
            for c in conc:
                v = rep_noise(cell, f"{d}-test", c)
                if v is not None:
                    noise.append(v)
    noise.sort()
    lines = [f"# {args.title}", ""]
    lines += ["Raw data: the `*.json` cell files next to this report (one engine "
              "each); `config.json` holds the command's options, `selection.json` "
              "the tune-split choices. Definitions: `benchmarks/report.py`.", ""]
    if noise:
        lines += [f"**Noise floor** (|rep0 − rep1| / mean TPOT, {len(noise)} cells × "
                  f"settings, test split): median {100 * noise[len(noise) // 2]:.1f}%, "
                  f"max {100 * noise[-1]:.1f}%.", ""]
    lines += ["## TPOT on the test split (best settings chosen on the tune split)", "",
              "| dataset | c | target ms | SD best K | SD ms | DSL best (K, τ) | DSL ms "
              "| SD × | DSL × | DSL / SD | oracle ms | DSL / oracle |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for d in datasets:
        for c in conc:
            key = f"{d}-c{c}"
            s = sel.get(key, {})
            p = f"{d}-test"
            t_target = tpot(cells.get("tune-target"), p, c)
            k = s.get("sd_k")
            t_sd = tpot(cells.get(f"tune-sd-k{k}"), p, c) if k else None
            kt = s.get("dsl")
            t_dsl = tpot(cells.get(dsl_cell("test", kt)), p, c) if kt else None
            orc = oracle(cells, sd_ks, p, c)
            row = {"dataset": d, "concurrency": c, "target_tpot_ms": t_target and 1e3 * t_target,
                   "sd_k": k, "sd_tpot_ms": t_sd and 1e3 * t_sd, "dsl": kt,
                   "dsl_tpot_ms": t_dsl and 1e3 * t_dsl, "oracle": orc}
            row["sd_speedup"] = t_target / t_sd if t_target and t_sd else None
            row["dsl_speedup"] = t_target / t_dsl if t_target and t_dsl else None
            row["dsl_over_sd"] = t_sd / t_dsl if t_sd and t_dsl else None
            row["dsl_fraction_of_oracle"] = (orc["tpot_ms"] / (1e3 * t_dsl)
                                             if orc and t_dsl else None)
            summary["rows"].append(row)
            lines.append(
                f"| {d} | {c} | {fmt(row['target_tpot_ms'])} | {fmt(k, '')} | "
                f"{fmt(row['sd_tpot_ms'])} | {dsl_label(kt)} | "
                f"{fmt(row['dsl_tpot_ms'])} | {fmt(row['sd_speedup'], '.2f')} | "
                f"{fmt(row['dsl_speedup'], '.2f')} | {fmt(row['dsl_over_sd'], '.2f')} | "
                f"{fmt(orc and orc['tpot_ms'])} | {fmt(row['dsl_fraction_of_oracle'], '.2f')} |")
    lines += ["", "SD × / DSL ×: speedup over target-only (TPOT ratio). "
              "DSL / SD: best-K SD TPOT over DSL TPOT (> 1: DSL faster).", ""]

    # Per-arm statistics at each concurrency (test split).
    lines += ["## Per-arm statistics (test split)", "",
              "| cell | dataset | c | TPOT ms | TTFT ms | out tok/s | accept len "
              "| mean drafted | exit rate | accept/pos (first 5) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, cell in sorted(cells.items()):
        for d in datasets:
            for c in conc:
                if not runs(cell, f"{d}-test", c):
                    continue
                st = stats(cell, f"{d}-test", c)
                app = st.get("acceptance_per_pos")
                lines.append(
                    f"| {name} | {d} | {c} | {fmt(st['tpot_ms'])} | {fmt(st['ttft_ms'], '.1f')} | "
                    f"{fmt(st['output_tok_s'], '.0f')} | {fmt(st['acceptance_length'], '.2f')} | "
                    f"{fmt(st.get('mean_drafted'), '.2f')} | {fmt(st.get('exit_rate'), '.2f')} | "
                    f"{', '.join(f'{x:.2f}' for x in app[:5]) if app else '–'} |")
    lines.append("")

    # Goals.
    rows = summary["rows"]
    c1 = [r for r in rows if r["concurrency"] == min(conc) and r["dsl_over_sd"]]
    g = summary["goals"]
    g["dsl_over_sd_c1"] = {d["dataset"]: d["dsl_over_sd"] for d in c1}
    g["dsl_fraction_of_oracle"] = {f"{r['dataset']}-c{r['concurrency']}": r["dsl_fraction_of_oracle"]
                                   for r in rows if r["dsl_fraction_of_oracle"]}
    worst = [r["dsl_over_sd"] for r in rows if r["dsl_over_sd"]]
    g["dsl_worst_vs_sd"] = min(worst) if worst else None
    # tau = 0 overhead (DSL that never exits vs SD at the same K).
    overhead: list[float] = []
    ok_k = cfg.get("overhead_k")
    if ok_k:
        sdk = cells.get(f"tune-sd-k{ok_k}")
        t0 = cells.get(dsl_name("tune", ok_k, 0.0))
        for d in datasets:
            for c in conc:
                a, b = tpot(t0, f"{d}-test", c), tpot(sdk, f"{d}-test", c)
                if a and b:
                    overhead.append(a / b - 1)
    g["tau0_overhead"] = overhead
    verdict = []

    def met(ok):
        return "**met**" if ok else "**not met**"

    if g["dsl_over_sd_c1"]:
        vals = list(g["dsl_over_sd_c1"].values())
        verdict.append(f"- DSL ≥ {GOALS['dsl_over_sd_c1']}× best-K SD at c={min(conc)}: "
                       f"{', '.join(f'{k} {v:.2f}×' for k, v in g['dsl_over_sd_c1'].items())} — "
                       f"{met(min(vals) >= GOALS['dsl_over_sd_c1'])}")
    if g["dsl_fraction_of_oracle"]:
        vals = list(g["dsl_fraction_of_oracle"].values())
        verdict.append(f"- DSL ≥ {GOALS['dsl_fraction_of_oracle']} of the oracle: range "
                       f"{min(vals):.2f}–{max(vals):.2f} — "
                       f"{met(min(vals) >= GOALS['dsl_fraction_of_oracle'])}")
    if g["dsl_worst_vs_sd"] is not None:
        verdict.append(f"- DSL never > 2% slower than best-K SD: worst DSL/SD "
                       f"{g['dsl_worst_vs_sd']:.3f} — "
                       f"{met(g['dsl_worst_vs_sd'] >= 1 - GOALS['dsl_worse_than_sd_max'])}")
    if overhead:
        mean = sum(overhead) / len(overhead)
        verdict.append(f"- τ=0 bookkeeping overhead ≤ 1% (DSL τ=0 vs SD, K={ok_k}): "
                       f"mean {100 * mean:+.1f}%, max {100 * max(overhead):+.1f}% "
                       f"over {len(overhead)} points — "
                       f"{met(mean <= GOALS['tau0_overhead_max'])}")
    rec = recommend(cells, cfg, sel, datasets, conc)
    summary["recommend"] = rec
    lines += recommend_lines(rec)
    lines = lines[:2] + ["## Goals", ""] + verdict + [""] + lines[2:]
    (folder / "report.md").write_text("\n".join(lines) + "\n")
    (folder / "recommend.json").write_text(json.dumps(rec, indent=1))
    ones = {d: one_config(b) for d, b in rec.items()}
    (folder / "recommend-one.json").write_text(json.dumps(ones, indent=1))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    plots(folder, cells, cfg, sel, datasets, conc, sd_ks)
    print("\n".join(lines))
    return 0


def one_panel_per_dataset(plt, datasets: list[str]):
    """A figure with one panel per dataset, and (panel, dataset) pairs."""
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4),
                             squeeze=False)
    return fig, zip(axes[0], datasets)


def save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plots(folder, cells, cfg, sel, datasets, conc, sd_ks) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots", file=sys.stderr)
        return
    c0 = min(conc)
    fig, panels = one_panel_per_dataset(plt, datasets)
    for ax, d in panels:
        p = f"{d}-tune"
        xs = [k for k in sd_ks if tpot(cells.get(f"tune-sd-k{k}"), p, c0)]
        ax.plot(xs, [1e3 * tpot(cells[f"tune-sd-k{k}"], p, c0) for k in xs], "o-", label="SD")
        for t in floats(cfg["dsl_tau"]):
            pts = [(k, dsl_tune_tpot(folder, k, t, p, c0)) for k in ints(cfg["dsl_k"])]
            pts = [(k, v) for k, v in pts if v]
            ax.plot([k for k, _ in pts], [1e3 * v for _, v in pts], "s--",
                    label=f"DSL τ={t}")
        tt = tpot(cells.get("tune-target"), p, c0)
        if tt:
            ax.axhline(1e3 * tt, color="k", lw=1, label="target-only")
        ax.set(title=f"{d}, c={c0} (tune split)", xlabel="K", ylabel="TPOT (ms)")
        ax.legend(fontsize=7)
    save(fig, folder / "tpot_vs_k_tau.png")

    fig, panels = one_panel_per_dataset(plt, datasets)
    for ax, d in panels:
        p = f"{d}-test"
        for label, getter in (
            ("best-K SD", lambda c: cells.get(f"tune-sd-k{sel[f'{d}-c{c}']['sd_k']}")),
            ("DSL", lambda c: cells.get(dsl_cell("test", sel[f"{d}-c{c}"]["dsl"]))),
        ):
            xs, ys = [], []
            for c in conc:
                tt, tx = tpot(cells.get("tune-target"), p, c), tpot(getter(c), p, c)
                if tt and tx:
                    xs.append(c)
                    ys.append(tt / tx)
            ax.plot(xs, ys, "o-", label=label)
        ax.axhline(1.0, color="k", lw=1)
        ax.set(xscale="log", title=f"{d} (test split)", xlabel="concurrency",
               ylabel="speedup over target-only (TPOT)")
        ax.legend(fontsize=7)
    save(fig, folder / "speedup_vs_concurrency.png")

    fig, panels = one_panel_per_dataset(plt, datasets)
    for ax, d in panels:
        p = f"{d}-test"
        kmax = max(sd_ks)
        for name in (f"tune-sd-k{kmax}", dsl_cell("test", sel[f"{d}-c{c0}"]["dsl"])):
            if name in cells:
                app = stats(cells[name], p, c0).get("acceptance_per_pos")
                if app:
                    ax.plot(range(len(app)), app, "o-", label=name)
        ax.set(title=f"{d}, c={c0}", xlabel="draft position",
               ylabel="accepted / drafts")
        ax.legend(fontsize=7)
    save(fig, folder / "acceptance_per_position.png")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
