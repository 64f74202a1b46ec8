"""``benchmarks/startup_cost.py``: an engine's start-up (CUDA graphs by kind,
capture seconds and memory, DSL's price table) from an ``abab.py`` log, on a
synthetic log and on a committed H100 run."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import startup_cost  # noqa: E402


def _engine(pid: int, start: str, spec: str, hook: str | None, captured: str,
            capture_s: int, dsl: tuple[str, str] | None = None,
            warmed: str | None = None) -> list[str]:
    head = f"(EngineCore pid={pid}) INFO 12-07 "
    out = [head + f"{start} [core.py:134] Initializing a V1 LLM engine (v0.32.0) with "
           f"config: model='/m', speculative_config={spec}, tokenizer='/m'"]
    if hook:
        out.append(head + f"{start} [worker_base.py:317] Injected <class 'ab_hooks.{hook}'> "
                   "into <class 'vllm.v1.worker.gpu_worker.Worker'>")
    if warmed:
        out.append(head + f"{warmed} [kernel_warmup.py:189] JIT kernel warmup finished "
                   "in 0.00s.")
    if dsl:
        out.append(head + f"{dsl[0]} [speculator.py:264] Draft decode steps run as "
                   "device-side loops for 23 batch sizes.")
        out.append(head + f"{dsl[1]} [speculator.py:296] Dynamic speculation lookahead "
                   "prices each draft step (floor 0.00); rows: {1: 1.257/6.248}")
    out.append(head + f"{captured} [model_runner.py:1169] Graph capturing finished in "
               f"{capture_s} secs, took 1.61 GiB")
    out.append(head + f"{captured} [core.py:402] init engine (profile, create kv cache, "
               "warmup model) took 105.53 s (compilation: 7.55 s)")
    return out


def _bars(*bars: tuple[str, int, int]) -> str:
    """One tqdm line: each bar's 0% and its 100% drawn twice (update, close)."""
    parts = []
    for kind, n, s in bars:
        parts.append(f"Capturing {kind}:   0%|          | 0/{n} [00:00<?, ?it/s]")
        done = f"Capturing {kind}: 100%|##########| {n}/{n} [00:{s:02d}<00:00,  8.98it/s]"
        parts += [done, done]
    return "\r".join(parts)


SD = "SpeculativeConfig(method='draft_model', model='/d', num_spec_tokens=2)"
DSL = SD.replace("num_spec_tokens=2", "num_spec_tokens=8") + ", dynamic_lookahead=True"
FULL_SD = [("CUDA graphs (PIECEWISE)", 46, 5), ("CUDA graphs (FULL)", 27, 1),
           ("draft first-pass CUDA graphs (FULL)", 34, 1),
           ("draft decode CUDA graphs (FULL)", 14, 0)]
FULL_DSL = [("CUDA graphs (PIECEWISE)", 67, 5), ("CUDA graphs (FULL)", 323, 12),
            ("draft first-pass CUDA graphs (FULL)", 339, 9),
            ("draft decode CUDA graphs (FULL)", 23, 0)]


def _log(dsl_captured: str = "21:06:39") -> list[str]:
    lines = _engine(2756, "21:02:04", SD, "HostTimer", "21:03:55", 10, warmed="21:03:04")
    lines.append(_bars(*FULL_SD[:2]))  # the target's bars and the draft's on two lines
    lines.append(_bars(*FULL_SD[2:]))
    lines += _engine(3337, "21:04:25", DSL, "ServedWidthExplainsTimer", dsl_captured, 42,
                     dsl=("21:06:27", "21:06:38"))
    lines.append(_bars(*FULL_DSL))
    lines += _engine(4000, "21:07:00", "None", None, "21:08:00", 4)
    lines.append(_bars(*FULL_SD[:2]))
    return lines


def test_each_engine_gets_its_graphs_and_dsl_its_table():
    engines = {e.pid: e for e in startup_cost.read(_log())}
    sd, dsl, target = engines["2756"], engines["3337"], engines["4000"]
    assert (sd.label, sd.hook, dsl.label, dsl.hook, target.label, target.hook) == (
        "sd2", "HostTimer", "dsl8", "ServedWidthExplainsTimer", "target", "-")
    assert sd.graphs == {"piecewise": (46, 5), "full": (27, 1), "draft first": (34, 1),
                         "draft decode": (14, 0)}
    assert dsl.graphs == {"piecewise": (67, 5), "full": (323, 12), "draft first": (339, 9),
                          "draft decode": (23, 0)}
    assert target.graphs == {"piecewise": (46, 5), "full": (27, 1)}
    assert (dsl.capture_s, dsl.capture_gib, dsl.table_s) == (42, 1.61, 11.0)
    assert sd.table_s is None
    assert (sd.init_s, sd.compile_s) == (105.53, 7.55)
    # From the kernel warmup's end to the capture's start (21:03:45).
    assert sd.warmup_s == 41.0 and dsl.warmup_s is None


def test_overlapping_captures_give_no_engine_the_bars():
    # The DSL engine's 42 s of capture end 20 s after the SD engine's ended:
    # its window starts before the SD one's end, so whose bar is whose is unknown.
    engines = startup_cost.read(_log(dsl_captured="21:04:15"))
    assert all(e.graphs == {} for e in engines)
    assert {e.capture_s for e in engines} == {10, 42, 4}


def test_the_table_on_a_committed_h100_run():
    out = startup_cost.table(str(ROOT / "benchmarks/results/2026-12-07-h100-s65/"
                                 "s65p-abab.log.gz"))
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "sd2" in rows["2953"] and "323 in 10 s" not in rows["2953"]
    assert "124 in 4 s" in rows["3462"] and "1.04 GiB" in rows["3462"]
    assert "dsl8" in rows["4050"] and "323 in 10 s" in rows["4050"]
    assert rows["4050"].split()[-4] == "27"  # warmup s, before "95 (28 comp)"
    assert "339 in 5 s" in rows["4050"] and "1.61 GiB" in rows["4050"]
