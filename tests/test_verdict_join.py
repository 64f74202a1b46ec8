"""benchmarks/verdict_join.py on session 62's committed runs: issue 29's rows
of several runs in one list, each naming its run and prompt schedule; bad
inputs get one error naming the file."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
S62 = ROOT / "benchmarks" / "results" / "2026-12-07-h100-s62"
S61 = ROOT / "benchmarks" / "results" / "2026-12-07-h100-s61"


def _join(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "verdict_join.py"), *args],
                          capture_output=True, text=True, timeout=60)


def test_rows_of_three_runs_keep_every_point_and_say_where_it_came_from(tmp_path):
    out = tmp_path / "v.json"
    r = _join("--out", str(out), str(S62 / "verdict-s62q-dsl4.json"),
              str(S62 / "verdict-s62p-dsl4.json"), str(S61 / "verdict-s61p-dsl4.json"))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())
    keys = [(x["concurrency"], x["run"]) for x in rows]
    assert keys == sorted(keys)
    two = [x for x in rows if x["concurrency"] == 2]
    assert [(x["run"], x["prompts"], x["rounds"]) for x in two] == [
        ("2026-12-07-h100-s61/s61p", "rotated", 10),
        ("2026-12-07-h100-s62/s62p", "same", 6),
        ("2026-12-07-h100-s62/s62q", "same", 10)]
    # The rows are verdict.py's as written, with the four keys added.
    own = json.loads((S62 / "verdict-s62q-dsl4.json").read_text())[0]
    joined = next(x for x in two if x["run"].endswith("s62q"))
    assert {k: joined[k] for k in own} == own
    assert joined["requests"] == 8
    assert "1.022 [1.017, 1.027] noise 1.7% same" in r.stdout


def test_an_input_not_named_as_ab_read_names_verdicts(tmp_path):
    bad = tmp_path / "verdict.json"
    bad.write_text("[]")
    r = _join("--out", str(tmp_path / "v.json"), str(bad))
    assert r.returncode == 2 and f"{bad} is not a verdict-<run>-dslN.json" in r.stderr
    assert not (tmp_path / "v.json").exists()


def test_a_verdict_without_its_run_beside_it(tmp_path):
    v = tmp_path / "verdict-s62q-dsl4.json"
    shutil.copy(S62 / "verdict-s62q-dsl4.json", v)
    r = _join("--out", str(tmp_path / "v.json"), str(v))
    assert r.returncode == 2 and "s62q-abab.json.gz is missing" in r.stderr


def test_a_row_at_a_concurrency_its_run_never_measured(tmp_path):
    v = tmp_path / "verdict-s62q-dsl4.json"
    rows = json.loads((S62 / "verdict-s62q-dsl4.json").read_text())
    v.write_text(json.dumps([{**rows[0], "concurrency": 64}]))
    shutil.copy(S62 / "s62q-abab.json.gz", tmp_path / "s62q-abab.json.gz")
    r = _join("--out", str(tmp_path / "v.json"), str(v))
    assert r.returncode == 2 and "c=64, which s62q-abab.json.gz never measured" in r.stderr


@pytest.mark.parametrize("rotate, says", [(True, "rotated"), (False, "same")])
def test_the_prompt_schedule_is_the_runs(tmp_path, rotate, says):
    data = json.loads(gzip.decompress((S62 / "s62q-abab.json.gz").read_bytes()))
    with gzip.open(tmp_path / "s62q-abab.json.gz", "wt") as f:
        json.dump({**data, "rotate_prompts": rotate}, f)
    v = tmp_path / "verdict-s62q-dsl4.json"
    shutil.copy(S62 / "verdict-s62q-dsl4.json", v)
    out = tmp_path / "v.json"
    assert _join("--out", str(out), str(v)).returncode == 0
    assert json.loads(out.read_text())[0]["prompts"] == says


def test_a_row_without_a_ratio_prints_a_dash(tmp_path):
    """A verdict row whose DSL arm did not run at a point (verdict.py writes
    null there) is kept, and its table line says '-' for what is missing."""
    v = tmp_path / "verdict-s62q-dsl4.json"
    rows = json.loads((S62 / "verdict-s62q-dsl4.json").read_text())
    v.write_text(json.dumps([{**rows[0], "ratio_dsl_vs_best_sd": None, "ci95": None}]))
    shutil.copy(S62 / "s62q-abab.json.gz", tmp_path / "s62q-abab.json.gz")
    out = tmp_path / "v.json"
    r = _join("--out", str(out), str(v))
    assert r.returncode == 0, r.stderr
    assert "K=2 - [-, -] noise 1.7% same" in r.stdout
    assert json.loads(out.read_text())[0]["ratio_dsl_vs_best_sd"] is None
