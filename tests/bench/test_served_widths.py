"""``benchmarks/served_widths.py``: the widths a DSL engine served, read from
vLLM's CUDA graph stats in an ``abab.py`` log, on a synthetic log and on a
committed H100 run."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import served_widths  # noqa: E402

SD2 = "1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40"
DSL4 = "1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40"


def _stats(when: str, sizes: str, rows: list[tuple[int, str, int]]) -> list[str]:
    head = f"(MainProcess pid=1) INFO 12-06 {when} [cuda_graph.py:123] "
    out = [head + "**CUDAGraph Config Settings:**", head + f"- Capture sizes: [{sizes}]",
           head + "| Unpadded Tokens | Padded Tokens | Num Paddings | Runtime Mode | Count |",
           head + "|-----------------|---------------|--------------|--------------|-------|"]
    out += [head + f"| {t} | {t} | 0 | {mode} | {n} |" for t, mode, n in rows]
    return out


def _log(tmp_path: Path) -> Path:
    lines = ["(EngineCore pid=2) INFO 12-06 10:00:00 [scheduler.py:1] started"]
    # c = 32: the DSL engine at 3 (128 tokens), 2 (96) and 1 (62 = 31 x 2);
    # the SD engine's tables and a PIECEWISE prompt step are not read.
    lines += _stats("10:00:10", DSL4, [(128, "FULL", 30), (96, "FULL", 10),
                                       (62, "FULL", 10), (2023, "PIECEWISE", 5)])
    lines += _stats("10:00:12", SD2, [(96, "FULL", 500)])
    lines += _stats("10:00:20", DSL4, [(96, "FULL", 40)])
    lines.append("c=32 (32 requests x 8 rounds): sd2 median 4.828 ms")
    # c = 4: steps of 4 requests at 4, 2 and 1; 6 tokens (3 requests at 1)
    # is not a step of (3, 4] requests.
    lines += _stats("10:00:30", DSL4, [(20, "FULL", 9), (12, "FULL", 7), (8, "FULL", 1),
                                       (6, "FULL", 30)])
    lines.append("c=4 (4 requests x 8 rounds): sd2 median 4.1 ms")
    lines += _stats("10:00:40", DSL4, [(20, "FULL", 3)])
    path = tmp_path / "abab.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_width_of_reads_one_explanation_only():
    assert served_widths.width_of(128, 32, 4) == 3
    assert served_widths.width_of(96, 32, 4) == 2  # 24 at 3 is outside (24, 32]
    assert served_widths.width_of(62, 32, 4) == 1
    assert served_widths.width_of(12, 4, 4) == 2  # 3 at 3 is outside (3, 4]
    assert served_widths.width_of(224, 32, 8) is None  # 32 at 6, or 28 at 7
    assert served_widths.width_of(160, 32, 3) is None  # above the cap
    assert served_widths.width_of(40, 32, 4) is None  # too few requests


def test_reads_the_dsl_engines_intervals_per_point(tmp_path, capsys):
    assert served_widths.main([str(_log(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("c=32 (32 requests")
    assert out[1].split() == ["12-06", "10:00:10", "50", "steps", "1:20%", "2:20%", "3:60%"]
    assert out[2].split() == ["12-06", "10:00:20", "40", "steps", "2:100%"]
    assert out[3].startswith("c=4 (4 requests")
    assert out[4].split() == ["12-06", "10:00:30", "17", "steps", "1:6%", "2:41%", "4:53%"]
    assert out[5] == "(1 stats intervals after the last point, not read)"


def test_a_log_without_graph_stats_says_how_to_get_them(tmp_path):
    log = tmp_path / "abab.log"
    log.write_text("c=32 (32 requests x 8 rounds): sd2 median 4.8 ms\n")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/served_widths.py"), str(log)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "cudagraph_metrics" in r.stderr


def test_session_48s_narrowing_at_32_requests(capsys):
    """The committed H100 run where 32 requests moved from 2 drafts to 1 in
    the point's last interval (``2026-12-06-h100-s48``, ``s48q``)."""
    log = ROOT / "benchmarks/results/2026-12-06-h100-s48/s48q-abab.log.gz"
    assert served_widths.main([str(log)]) == 0
    out = capsys.readouterr().out
    c32 = out.split("c=32 (")[1].split("\nc=")[0].splitlines()[1:]
    assert c32[-1].split()[-2:] == ["1:86%", "2:14%"]
    assert all("2:" in line for line in c32)


def _engine(pid: int, sizes: str) -> str:
    return (f"(EngineCore pid={pid}) INFO 12-06 09:59:00 [core.py:133] Initializing a V1 LLM "
            f"engine (v0.32.0) with config: model='t', compilation_config={{'mode': 3, "
            f"'cudagraph_capture_sizes': [{sizes}], 'max_cudagraph_capture_size': 40}}")


def test_two_dsl_engines_at_one_cap_cannot_be_told_apart(tmp_path):
    """Two DSL arms at cap 4 (session 50's plan: dsl4 and dsl4+once) capture
    the same sizes; one SD engine beside one DSL engine is read as before."""
    log = _log(tmp_path)
    one = [_engine(7, SD2), _engine(8, DSL4)]
    log.write_text("\n".join(one) + "\n" + log.read_text())
    assert served_widths.main([str(log)]) == 0
    log.write_text(_engine(9, DSL4) + "\n" + log.read_text())
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/served_widths.py"), str(log)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and r.stdout == ""
    assert "2 engines started with the DSL engine's capture sizes" in r.stderr
    assert "no turn marks" in r.stderr


def _turns_log(tmp_path: Path) -> Path:
    """Two DSL arms at cap 4 (the same capture sizes) and SD K=2, with
    abab.py's turn marks: dsl4 at 2 drafts, dsl4+once at 3."""
    lines = [_engine(7, SD2), _engine(8, DSL4), _engine(9, DSL4)]
    lines += ["[abab] turn sd2 r0c32"] + _stats("10:00:05", SD2, [(96, "FULL", 500)])
    lines += ["[abab] turn dsl4 r0c32"] + _stats("10:00:10", DSL4, [(96, "FULL", 40)])
    lines += ["[abab] turn dsl4+once r0c32"]
    lines += _stats("10:00:20", DSL4, [(128, "FULL", 30), (96, "FULL", 10)])
    lines += ["[abab] turn dsl4+once r1c32"] + _stats("10:00:25", DSL4, [(128, "FULL", 20)])
    lines += ["[abab] turn dsl4 r1c32"] + _stats("10:00:30", DSL4, [(64, "FULL", 10)])
    lines.append("c=32 (32 requests x 2 rounds): sd2 median 4.8 ms")
    path = tmp_path / "abab.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_arm_reads_the_intervals_of_that_arms_turns(tmp_path, capsys):
    log = str(_turns_log(tmp_path))
    assert served_widths.main([log, "--arm", "dsl4+once", "--exact"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1:] for line in out[1:]] == [
        ["10:00:20", "40", "steps", "2:25%", "3:75%"], ["10:00:25", "20", "steps", "3:100%"]]
    assert served_widths.main([log, "--arm", "dsl4", "--exact"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1:] for line in out[1:]] == [
        ["10:00:10", "40", "steps", "2:100%"], ["10:00:30", "10", "steps", "1:100%"]]
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/served_widths.py"), log],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "name one with --arm (dsl4, dsl4+once, sd2)" in r.stderr


def test_arm_bad_input(tmp_path):
    script = str(ROOT / "benchmarks/served_widths.py")
    r = subprocess.run([sys.executable, script, str(_turns_log(tmp_path)), "--arm", "dsl8"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--arm 'dsl8' had no turn; arms: dsl4, dsl4+once, sd2" in r.stderr
    r = subprocess.run([sys.executable, script, str(_log(tmp_path)), "--arm", "dsl4"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "no '[abab] turn' marks" in r.stderr


def test_exact_reads_only_steps_of_c_requests(tmp_path, capsys):
    """62 tokens (31 requests at 1) is left out at c = 32; 6 tokens (3
    requests at 1) and 8 (4 at 1, or 2 at 3) at c = 4: only 8 is 4 requests."""
    assert served_widths.main([str(_log(tmp_path)), "--exact"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["12-06", "10:00:10", "40", "steps", "2:25%", "3:75%"]
    assert out[4].split() == ["12-06", "10:00:30", "17", "steps", "1:6%", "2:41%", "4:53%"]


def test_session_50s_widths_at_64_requests(capsys):
    """The committed H100 run with SD K=2, DSL at cap 4 and DSL at a fixed
    width of 2 (``2026-12-06-h100-s50``): three engines, one of them with
    the DSL engine's capture sizes; at 64 requests its full batches ran at
    1 and 3 drafts in 26% of the first interval's steps (the batch size of
    64, new there, exploring its open neighbours), 0-10% after."""
    log = ROOT / "benchmarks/results/2026-12-06-h100-s50/s50p-abab.log.gz"
    import gzip

    with gzip.open(log, "rt") as f:
        engines = served_widths.engines_by_sizes(f.read().splitlines())
    assert sorted(len(p) for p in engines.values()) == [1, 2]
    assert served_widths.main([str(log), "--exact"]) == 0
    out = capsys.readouterr().out
    c64 = out.split("c=64 (")[1].split("\nc=")[0].splitlines()[1:]
    assert c64[0].split()[2:] == ["94", "steps", "1:17%", "2:74%", "3:9%"]
    assert len(c64) == 6
    for line in c64[2:]:
        shares = dict(share.split(":") for share in line.split()[4:])
        assert 90 <= int(shares["2"].rstrip("%")) <= 100, line
