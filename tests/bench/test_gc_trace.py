# SPDX-License-Identifier: Apache-2.0
"""benchmarks/gc_trace: the per-process collection tracer and its report."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "benchmarks" / "gc_trace"
sys.path.insert(0, str(TRACE))
import gc_report as report  # noqa: E402

# A child that builds reference cycles, then forces one full collection of
# them, timed from the child's side on the tracer's clock.
CHILD = """
import gc, json, sys, time
class Node:
    pass
def cycles(n):
    out = []
    for _ in range(n):
        a, b = Node(), Node()
        a.b, b.a = b, a
        out.append(a)
    return out
keep = cycles(200000)
del keep
t0 = time.monotonic()
gc.collect()
t1 = time.monotonic()
print(json.dumps([t0, t1]))
"""


def run_child(env_extra: dict, code: str = CHILD) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSL_GC_TRACE")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(TRACE)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_child_process_records_its_slow_collection_on_the_shared_clock(tmp_path):
    out = run_child({"DSL_GC_TRACE_DIR": str(tmp_path), "DSL_GC_TRACE_MIN_MS": "0.5"})
    assert out.returncode == 0, out.stderr
    t0, t1 = json.loads(out.stdout)
    files = list(tmp_path.glob("gc-*.tsv"))
    assert len(files) == 1
    proc = report.read_trace(str(files[0]))
    assert "-c" in proc.argv
    # The forced full collection freed the 400000 nodes of the cycles: it is a
    # slow generation-2 entry inside the window the child timed itself.
    full = [s for s in proc.slow if s[2] == 2 and t0 <= s[0] <= t1]
    assert len(full) == 1, proc.slow
    assert full[0][1] <= 1e3 * (t1 - t0) + 1e-3
    # The exit summary counts it (and whatever the interpreter collected before).
    assert proc.counts[2] >= 1 and proc.ms[2] >= full[0][1] - 1e-3


def test_fast_collections_count_but_are_not_listed(tmp_path):
    code = "import gc\nfor _ in range(50):\n    gc.collect(0)\n"
    out = run_child({"DSL_GC_TRACE_DIR": str(tmp_path), "DSL_GC_TRACE_MIN_MS": "10000"},
                    code)
    assert out.returncode == 0, out.stderr
    (f,) = tmp_path.glob("gc-*.tsv")
    proc = report.read_trace(str(f))
    assert proc.slow == []
    assert proc.counts[0] >= 50


def test_a_forked_child_writes_its_own_trace(tmp_path):
    # vLLM forks its engine cores where CUDA is not initialised yet.
    code = ("import gc, os\n"
            "gc.collect()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    gc.collect(); gc.collect(); os._exit(0)\n"
            "os.waitpid(pid, 0)\n"
            "print(pid)\n")
    out = run_child({"DSL_GC_TRACE_DIR": str(tmp_path), "DSL_GC_TRACE_MIN_MS": "0"}, code)
    assert out.returncode == 0, out.stderr
    child = int(out.stdout)
    procs = {p.pid: p for p in report.read_traces(str(tmp_path))}
    assert child in procs and len(procs) == 2
    # The child's two collections are its own, not added to the parent's
    # (os._exit skips the exit summary: its slow lines are what it wrote).
    assert sum(s[2] == 2 for s in procs[child].slow) == 2


def test_without_a_trace_dir_nothing_is_written(tmp_path):
    out = run_child({"DSL_GC_TRACE_MIN_MS": "0"}, "import gc; gc.collect()")
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_threshold_names_the_variable(tmp_path):
    out = run_child({"DSL_GC_TRACE_DIR": str(tmp_path), "DSL_GC_TRACE_MIN_MS": "fast"},
                    "pass")
    assert out.returncode != 0
    assert "DSL_GC_TRACE_MIN_MS" in out.stderr and "fast" in out.stderr


def test_a_shadowed_sitecustomize_still_runs(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.OTHER_SITE = 1\n")
    env = {"DSL_GC_TRACE_DIR": str(tmp_path / "gc"),
           "PYTHONPATH": os.pathsep.join([str(TRACE), str(other)])}
    out = run_child(env, "import builtins; print(getattr(builtins, 'OTHER_SITE', 0))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def write_trace(path: Path, pid: int, lines: list[str]) -> None:
    (path / f"gc-{pid}.tsv").write_text(
        f"#proc\t{pid}\tengine core\n" + "".join(x + "\n" for x in lines))


def test_report_counts_the_long_steps_a_collection_overlaps(tmp_path):
    origin = time.monotonic()
    # Core 11: a 40 ms collection 1.010 s into the round; client 12: a 3 ms one
    # at 2.5 s, outside every listed step.
    write_trace(tmp_path, 11, [f"{origin + 1.010:.6f}\t40.000\t2\t900",
                               "#sum\t0\t900 80 3\t10.0 20.0 45.0"])
    write_trace(tmp_path, 12, [f"{origin + 2.500:.6f}\t3.000\t0\t10"])
    abab = {"points": [{"concurrency": 32, "step_ms": {
        "dsl4": [{"start_monotonic_s": origin,
                  # [start ms, ms, first tokens, client gc ms]
                  "longest": [[1000.0, 60.0, 0, 0.0], [2000.0, 30.0, 0, 0.0]]}],
        "sd3": [{"longest": [[1000.0, 60.0, 0, 0.0]]}]}}]}
    rows = report.long_steps_against(abab, report.read_traces(str(tmp_path)))
    # sd3's round has no clock origin (an older JSON): it is not guessed at.
    assert len(rows) == 1
    (row,) = rows
    assert (row["arm"], row["concurrency"], row["long_steps"], row["with_gc"]) == (
        "dsl4", 32, 2, 1)
    assert row["long_ms"] == pytest.approx(90.0)
    assert row["gc_ms_inside"] == {11: pytest.approx(40.0, abs=1e-3)}
    procs = {p.pid: p for p in report.read_traces(str(tmp_path))}
    assert procs[11].counts == [900, 80, 3] and procs[11].ms == [10.0, 20.0, 45.0]


def test_report_rejects_a_broken_trace_line_by_file_and_line(tmp_path):
    write_trace(tmp_path, 7, ["1.0\t2.0\t0\t5", "garbage"])
    with pytest.raises(ValueError, match=r"gc-7.tsv:3"):
        report.read_trace(str(tmp_path / "gc-7.tsv"))


def test_report_reads_a_gzipped_abab_json(tmp_path, capsys):
    import gzip
    import json

    origin = time.monotonic()
    traces = tmp_path / "gc"
    traces.mkdir()
    write_trace(traces, 11, [f"{origin + 1.010:.6f}\t40.000\t2\t900"])
    abab = {"points": [{"concurrency": 32, "step_ms": {
        "dsl4": [{"start_monotonic_s": origin,
                  "longest": [[1000.0, 60.0, 0, 0.0]]}]}}]}
    packed = tmp_path / "abab.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(abab).encode()))
    assert report.main([str(packed), str(traces)]) == 0
    assert "dsl4 c=32: 1 of 1 longest steps" in capsys.readouterr().out
