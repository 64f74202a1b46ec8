"""Run vLLM offline on CPU over the fixture models: target-only vs speculative cases.

A reusable library for the e2e tests, scripts/demo.sh and the benchmarks:

- ``Fixtures``: the models and prompt sets that scripts/fixtures.sh built;
- ``Case``: one engine configuration (target only, draft model, self-draft,
  n-gram, DSL), turned into vLLM's ``speculative_config``;
- ``run_case``: one in-process ``LLM`` engine, greedy generation over a prompt
  list, token ids, timings, the engine's ``vllm:spec_decode_*`` counters (as a
  delta over the run) and the per-request drafted/accepted counts;
- ``compare`` / ``format_table``: greedy-equivalence check and a report.

CLI (prints a table; exit 1 when a case differs from the target-only run)::

    .venv/bin/python tests/e2e/harness.py [--cases NAME,...] [--dsl-grid]
        [--num-prompts 16] [--max-tokens 64]

The engine runs in this process on CPU, fp32, eager, with the environment of
``ENGINE_ENV`` (set before vLLM is imported; values already set are kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ENGINE_ENV = {
    # One process: no engine-core subprocess (each would re-import vLLM, ~30 s).
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    # GiB of KV cache on CPU: plenty for 135M fp32 at these lengths.
    "VLLM_CPU_KVCACHE_SPACE": "1",
    # Use both cores for the model (the default reserves one).
    "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# The SpeculativeConfig field of the DSL series (confidence threshold tau).
DSL_FIELD = "draft_confidence_threshold"
SPEC_PREFIX = "vllm:spec_decode_"


def configure_env() -> None:
    """Set ``ENGINE_ENV`` defaults; call before importing vLLM."""
    for key, value in ENGINE_ENV.items():
        os.environ.setdefault(key, value)


def default_fixtures_dir() -> Path:
    """``$FIXTURES_DIR``, else ``$DSL_CACHE/fixtures`` (as scripts/fixtures.sh)."""
    if os.environ.get("FIXTURES_DIR"):
        return Path(os.environ["FIXTURES_DIR"])
    cache = os.environ.get("DSL_CACHE") or str(Path.home() / ".cache" / "vllm-dsl")
    return Path(cache) / "fixtures"


class FixturesMissing(RuntimeError):
    """The fixtures are not built (the message says how to build them)."""


@dataclass
class Fixtures:
    """The models and prompt sets listed in a fixtures directory's manifest."""

    root: Path
    manifest: dict

    @classmethod
    def load(cls, root: Path | None = None) -> Fixtures:
        """Read ``manifest.json`` of ``root`` (default: ``default_fixtures_dir()``)."""
        root = Path(root or default_fixtures_dir())
        try:
            manifest = json.loads((root / "manifest.json").read_text())
        except (OSError, ValueError):
            raise FixturesMissing(
                f"no fixtures in {root}: run scripts/fixtures.sh "
                f"(or set FIXTURES_DIR)") from None
        return cls(root, manifest)

    def model(self, key: str) -> str:
        """Path of a model: ``target``, ``draft_l4``, ``draft_l20``, ..."""
        try:
            return str(self.root / self.manifest["models"][key])
        except KeyError:
            have = ", ".join(sorted(self.manifest["models"]))
            raise FixturesMissing(f"no model {key!r} in {self.root} (have: {have})") from None

    def prompts(self, source: str, split: str = "test") -> list[dict]:
        """Records of ``prompts/<source>-<split>.jsonl`` (see scripts/lib/fixtures)."""
        rel = self.manifest["prompts"][f"{source}-{split}"]
        with (self.root / rel).open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def select_prompts(self, n: int, sources: tuple[str, ...] = ("sharegpt", "humaneval"),
                       split: str = "test", max_prompt_tokens: int = 256) -> list[dict]:
        """The first ``n`` prompts of ``split``, alternating over ``sources``.

        Deterministic: each split is already in its seeded order. Prompts longer
        than ``max_prompt_tokens`` are skipped to bound the CPU time.
        """
        pools = [[r for r in self.prompts(s, split) if r["num_prompt_tokens"] <= max_prompt_tokens]
                 for s in sources]
        out: list[dict] = []
        i = 0
        while len(out) < n and any(i < len(p) for p in pools):
            out.extend(p[i] for p in pools if i < len(p))
            i += 1
        if len(out) < n:
            raise FixturesMissing(f"only {len(out)} prompts of <= {max_prompt_tokens} tokens")
        return out[:n]


@dataclass(frozen=True)
class Case:
    """One engine configuration.

    ``method`` None is the target-only baseline. ``draft`` names the fixture
    model that drafts (``target`` for a self-draft). ``tau`` set makes it a DSL
    case (``draft_confidence_threshold``), which needs the DSL series.
    """

    name: str
    method: str | None = None
    draft: str | None = None
    k: int = 4
    tau: float | None = None
    options: tuple[tuple[str, object], ...] = ()

    @property
    def is_dsl(self) -> bool:
        """Whether the case needs the DSL config field."""
        return self.tau is not None

    @property
    def imports_numba(self) -> bool:
        """Whether the engine imports numba (the n-gram proposer): see ``in_run_order``."""
        return self.method == "ngram"

    def speculative_config(self, fx: Fixtures) -> dict | None:
        """vLLM's ``speculative_config`` dict for this case (None: no speculation)."""
        if self.method is None:
            return None
        cfg: dict = {"method": self.method, "num_speculative_tokens": self.k}
        if self.draft is not None:
            cfg["model"] = fx.model(self.draft)
        if self.tau is not None:
            cfg[DSL_FIELD] = self.tau
        cfg.update(self.options)
        return cfg


BASELINE = Case("target")
# K=3 keeps the reject path (two drafted tokens discarded behind a rejection) at a
# fraction of the CPU time of larger K; the DSL grid covers K up to 8.
DRAFT_L4 = Case("draft_l4_k3", "draft_model", "draft_l4", 3)
SELF_DRAFT = Case("self_k4", "draft_model", "target", 4)
NGRAM = Case("ngram_k4", "ngram", None, 4, options=(("prompt_lookup_max", 3),
                                                    ("prompt_lookup_min", 1)))
STANDARD_CASES = (DRAFT_L4, SELF_DRAFT, NGRAM)
# Partial acceptance: the non-DSL reference for the DSL cases (not in the default set).
DRAFT_L20 = Case("draft_l20_k5", "draft_model", "draft_l20", 5)
DSL_TAUS = (0.3, 0.6, 0.9)
DSL_KS = (2, 5, 8)


def dsl_case(tau: float, k: int, draft: str = "draft_l20") -> Case:
    """A DSL case: draft-model drafting that exits when confidence < ``tau``."""
    short = draft.removeprefix("draft_")
    return Case(f"dsl_{short}_t{tau}_k{k}", "draft_model", draft, k, tau)


def dsl_cases(full: bool = False, draft: str = "draft_l20") -> list[Case]:
    """The DSL grid (tau x K); by default only its diagonal (3 engines)."""
    if full:
        return [dsl_case(t, k, draft) for t in DSL_TAUS for k in DSL_KS]
    return [dsl_case(t, k, draft) for t, k in zip(DSL_TAUS, DSL_KS)]


def in_run_order(cases: list[Case]) -> list[Case]:
    """``cases`` with those that import numba last (otherwise in the given order).

    vLLM 0.32.0's CPU worker rebinds its Triton-kernel fallbacks by scanning every
    module namespace (``vllm/triton_utils/dispatcher.py``, ``_rebind_kernels``)
    and calls ``vars()`` on any value that ``hasattr(value, "__dict__")``.
    llvmlite's ``ffi.lib`` answers every attribute, ``__dict__`` included, with a
    function wrapper, so once numba is imported every later engine start in the
    process fails (``'_lib_fn_wrapper' object has no attribute 'get'``). The
    series fixes it ("[Bugfix] Skip non-dict __dict__ objects when rebinding
    kernel overrides"); the order keeps the harness usable on the bare base.
    """
    return sorted(cases, key=lambda c: c.imports_numba)


def dsl_supported() -> bool:
    """Whether the installed vLLM's ``SpeculativeConfig`` has the DSL field."""
    configure_env()
    from vllm.config import SpeculativeConfig

    if dataclasses.is_dataclass(SpeculativeConfig):
        if DSL_FIELD in {f.name for f in dataclasses.fields(SpeculativeConfig)}:
            return True
    return hasattr(SpeculativeConfig, DSL_FIELD)


@dataclass
class CaseResult:
    """What one case produced."""

    case: Case
    token_ids: list[list[int]]
    init_s: float
    gen_s: float
    counters: dict[str, object] = field(default_factory=dict)
    per_request: list[dict | None] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def num_tokens(self) -> int:
        """Generated tokens over all requests."""
        return sum(len(t) for t in self.token_ids)

    def counter(self, suffix: str, default: int = 0) -> int:
        """A scalar ``vllm:spec_decode_<suffix>`` counter (delta over the run)."""
        value = self.counters.get(SPEC_PREFIX + suffix, default)
        return value if isinstance(value, int) else default

    @property
    def acceptance_rate(self) -> float | None:
        """Accepted / drafted tokens, None without drafts."""
        drafted = self.counter("num_draft_tokens")
        return self.counter("num_accepted_tokens") / drafted if drafted else None

    @property
    def mean_acceptance_length(self) -> float | None:
        """1 + accepted tokens per draft (tokens per target forward), None without drafts."""
        drafts = self.counter("num_drafts")
        return 1 + self.counter("num_accepted_tokens") / drafts if drafts else None

    def early_exits(self) -> int | None:
        """The engine's early-exit counter (DSL series), None when it has none."""
        for name, value in self.counters.items():
            if "early_exit" in name and isinstance(value, int):
                return value
        return None


def _metric_snapshot(llm) -> dict[str, object]:
    """``vllm:spec_decode_*`` counters of an engine: ints, or int lists per position.

    Per-position counters come either as one ``Vector`` or as one ``Counter``
    per ``position`` label; both become a list indexed by position.
    """
    snap: dict[str, object] = {}
    by_pos: dict[str, dict[int, int]] = {}
    for m in llm.get_metrics():
        if not m.name.startswith(SPEC_PREFIX):
            continue
        if hasattr(m, "values"):
            snap[m.name] = [int(v) for v in m.values]
        elif "position" in (m.labels or {}):
            by_pos.setdefault(m.name, {})[int(m.labels["position"])] = int(m.value)
        elif isinstance(getattr(m, "value", None), (int, float)):
            snap[m.name] = int(m.value)
    for name, pos in by_pos.items():
        snap[name] = [pos.get(i, 0) for i in range(max(pos) + 1)]
    return snap


def _delta(before: dict, after: dict) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, value in after.items():
        old = before.get(name)
        if isinstance(value, list):
            old = old if isinstance(old, list) else [0] * len(value)
            out[name] = [a - b for a, b in zip(value, old + [0] * (len(value) - len(old)))]
        else:
            out[name] = value - (old if isinstance(old, int) else 0)
    return out


def engine_kwargs(case: Case, fx: Fixtures, max_model_len: int = 1024,
                  max_num_seqs: int = 16, seed: int = 0) -> dict:
    """Keyword arguments of ``vllm.LLM`` for a case."""
    kw = dict(model=fx.model("target"), dtype="float32", max_model_len=max_model_len,
              enforce_eager=True, seed=seed, max_num_seqs=max_num_seqs,
              disable_log_stats=False)
    spec = case.speculative_config(fx)
    if spec is not None:
        kw["speculative_config"] = spec
        kw["per_request_spec_decode_metrics"] = "detailed"
    return kw


def run_case(case: Case, fx: Fixtures, prompts: list[dict], max_tokens: int = 64,
             **engine_overrides) -> CaseResult:
    """Start an engine for ``case``, generate greedily for ``prompts``, shut it down."""
    configure_env()
    from vllm import LLM, SamplingParams
    from vllm.distributed import cleanup_dist_env_and_memory

    t0 = time.perf_counter()
    try:
        llm = LLM(**engine_kwargs(case, fx, **engine_overrides))
    except AttributeError as e:
        if "_lib_fn_wrapper" not in str(e):
            raise
        raise RuntimeError(f"{case.name}: the engine cannot start once numba is "
                           f"imported in this process (see harness.in_run_order)") from e
    init_s = time.perf_counter() - t0
    try:
        params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=False)
        inputs = [{"prompt_token_ids": p["prompt_token_ids"]} for p in prompts]
        before = _metric_snapshot(llm)
        t0 = time.perf_counter()
        outs = llm.generate(inputs, params, use_tqdm=False)
        gen_s = time.perf_counter() - t0
        counters = _delta(before, _metric_snapshot(llm))
        token_ids = [list(o.outputs[0].token_ids) for o in outs]
        per_request = []
        for o in outs:
            m = o.outputs[0].spec_decode_metrics
            per_request.append(m.to_dict() if m is not None else None)
    finally:
        del llm
        gc.collect()
        cleanup_dist_env_and_memory()
    texts = [o.outputs[0].text for o in outs]
    return CaseResult(case, token_ids, init_s, gen_s, counters, per_request, texts)


def compare(base: CaseResult, other: CaseResult) -> list[str]:
    """Where ``other`` differs from ``base``: one line per differing request."""
    diffs = []
    for i, (a, b) in enumerate(zip(base.token_ids, other.token_ids)):
        if a != b:
            pos = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            diffs.append(f"request {i}: first difference at token {pos} "
                         f"(lengths {len(a)} vs {len(b)})")
    if len(base.token_ids) != len(other.token_ids):
        diffs.append(f"{len(base.token_ids)} vs {len(other.token_ids)} requests")
    return diffs


def short_drafts(result: CaseResult) -> list[int | None]:
    """Per request: verify steps that drafted fewer than K tokens (DSL exits or caps)."""
    out: list[int | None] = []
    for m in result.per_request:
        if m is None or "per_step_drafted" not in m:
            out.append(None)
        else:
            out.append(sum(d < result.case.k for d in m["per_step_drafted"]))
    return out


def format_table(results: list[CaseResult], base: CaseResult | None = None) -> str:
    """A plain-text table: timings, equivalence and spec-decode counters per case.

    A case without any ``vllm:spec_decode_*`` counter shows ``-`` in the counter
    columns and says why (the baseline drafts nothing; a speculative case without
    counters is marked, not shown as zeros)."""
    head = (f"{'case':<22} {'init_s':>6} {'gen_s':>6} {'tok/s':>6} {'equal':>5} "
            f"{'drafts':>6} {'req':>5} {'drafted':>7} {'accepted':>8} {'acc%':>5} "
            f"{'AL':>5} {'exits':>5}  accepted_per_pos")
    lines = [head, "-" * len(head)]
    for r in results:
        eq = "ref" if base is None or r is base else ("yes" if not compare(base, r) else "NO")
        timing = (f"{r.case.name:<22} {r.init_s:6.1f} {r.gen_s:6.1f} "
                  f"{r.num_tokens / r.gen_s if r.gen_s else 0:6.1f} {eq:>5} ")
        if not any(name.startswith(SPEC_PREFIX) for name in r.counters):
            why = ("(target only: no drafts)" if r.case.method is None
                   else "(NO spec-decode counters recorded for this case)")
            lines.append(timing + f"{'-':>6} {'-':>5} {'-':>7} {'-':>8} {'-':>5} {'-':>5} {'-':>5}  {why}")
            continue
        rate, al, ex = r.acceptance_rate, r.mean_acceptance_length, r.early_exits()
        req = r.counters.get(SPEC_PREFIX + "num_draft_tokens_requested")
        per_pos = r.counters.get(SPEC_PREFIX + "num_accepted_tokens_per_pos", "")
        lines.append(
            timing
            + f"{r.counter('num_drafts'):6d} "
            f"{'' if req is None else req:>5} {r.counter('num_draft_tokens'):7d} "
            f"{r.counter('num_accepted_tokens'):8d} "
            f"{'' if rate is None else f'{100 * rate:.0f}':>5} "
            f"{'' if al is None else f'{al:.2f}':>5} {'' if ex is None else ex:>5}  {per_pos}")
    return "\n".join(lines)


def format_requests(result: CaseResult, prompts: list[dict] | None = None) -> str:
    """Per-request drafted/accepted counts (and short drafts) of one case."""
    lines = [f"{'req':>3} {'source':<9} {'steps':>5} {'drafted':>7} {'accepted':>8} "
             f"{'acc%':>5} {'<K':>4}  prompt"]
    for i, (m, short) in enumerate(zip(result.per_request, short_drafts(result))):
        p = prompts[i] if prompts else {}
        text = " ".join(str(p.get("text", "")).split())[:40]
        if m is None:
            lines.append(f"{i:3d} {p.get('source', ''):<9} (no speculative metrics)  {text}")
            continue
        d, a = m["num_draft_tokens"], m["num_accepted_draft_tokens"]
        lines.append(f"{i:3d} {p.get('source', ''):<9} {m['num_spec_steps']:5d} {d:7d} {a:8d} "
                     f"{100 * a / d if d else 0:5.0f} {'' if short is None else short:>4}  {text}")
    return "\n".join(lines)


def named_cases() -> dict[str, Case]:
    """Every case the CLI knows, by name (DSL grids with the 20- and 4-layer drafts)."""
    cases = {c.name: c for c in (BASELINE, *STANDARD_CASES, DRAFT_L20)}
    cases.update({c.name: c for c in dsl_cases(True)})
    cases.update({c.name: c for c in dsl_cases(True, "draft_l4")})
    return cases


def main(argv: list[str] | None = None) -> int:
    """CLI: run cases against the baseline and print a table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=",".join(c.name for c in STANDARD_CASES),
                   help="comma-separated case names (see --list); the target-only "
                        "baseline always runs first")
    p.add_argument("--dsl", action="store_true", help="add the DSL diagonal (tau, K)")
    p.add_argument("--dsl-grid", action="store_true", help="add the full DSL grid")
    p.add_argument("--num-prompts", type=int, default=16)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--max-prompt-tokens", type=int, default=256)
    p.add_argument("--split", default="test", choices=("test", "tune"))
    p.add_argument("--requests", action="store_true", help="also print per-request counts")
    p.add_argument("--list", action="store_true", help="list the case names and exit")
    args = p.parse_args(argv)
    configure_env()
    has_dsl = dsl_supported()
    known = named_cases()
    if args.list:
        for name, c in known.items():
            note = " (needs the DSL series)" if c.is_dsl and not has_dsl else ""
            what = "target only" if c.method is None else f"{c.method} {c.draft or ''} K={c.k}"
            tau = "" if c.tau is None else f" tau={c.tau}"
            print(f"{name:<22} {what}{tau}{note}")
        return 0
    names = [n for n in args.cases.split(",") if n and n != BASELINE.name]
    unknown = [n for n in names if n not in known]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)} (see --list)")
    cases = [known[n] for n in names]
    if args.dsl or args.dsl_grid:
        cases += dsl_cases(args.dsl_grid)
    skipped = [c.name for c in cases if c.is_dsl and not has_dsl]
    cases = in_run_order([c for c in cases if not (c.is_dsl and not has_dsl)])
    if skipped:
        print(f"skipping {', '.join(skipped)}: SpeculativeConfig has no {DSL_FIELD} "
              f"(the DSL series is not applied)", file=sys.stderr)
    fx = Fixtures.load()
    prompts = fx.select_prompts(args.num_prompts, split=args.split,
                                max_prompt_tokens=args.max_prompt_tokens)
    t0 = time.perf_counter()
    if "numba" in sys.modules:
        print("warning: numba is already imported: engine starts may fail (see "
              "harness.in_run_order)", file=sys.stderr)
    base = run_case(BASELINE, fx, prompts, args.max_tokens)
    results = [base]
    for case in cases:
        results.append(run_case(case, fx, prompts, args.max_tokens))
    print(f"\n{len(prompts)} prompts x {args.max_tokens} tokens, greedy, fp32 CPU; "
          f"{time.perf_counter() - t0:.0f}s in all")
    print(format_table(results, base))
    if args.requests:
        for r in results[1:]:
            print(f"\n{r.case.name}:\n{format_requests(r, prompts)}")
    bad = [r.case.name for r in results[1:] if compare(base, r)]
    if bad:
        print(f"\nDIFFERENT from target-only: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
