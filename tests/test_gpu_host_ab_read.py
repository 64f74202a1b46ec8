"""scripts/gpu-host/ab-read.sh on CPU: a plan's A/B read into a results
folder. The run is session 56's real A/B (benchmarks/results/2026-12-06-h100-s56,
s56p), packed as ab-collect.sh returns it; the reader's tables must be the
ones committed there (written by that plan's own read.sh), byte for byte, and
bad arguments get one error naming the option."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
S56 = ROOT / "benchmarks" / "results" / "2026-12-06-h100-s56"


def _read(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu-host" / "ab-read.sh"), *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def tarballs(tmp_path):
    plan = tmp_path / "a" / "s56"
    plan.mkdir(parents=True)
    (plan / "host.txt").write_text("GPU: H100\n")
    (plan / "ab-plan.txt").write_text("s56p: sd2+t,sd3+t,dsl4+t\n")
    a = tmp_path / "a.tgz"
    with tarfile.open(a, "w:gz") as t:
        t.add(plan, arcname="s56")
    ab = tmp_path / "s56p.tgz"
    with tarfile.open(ab, "w:gz") as t:
        for name in ("abab.json", "abab.log"):
            src = tmp_path / name
            src.write_bytes(gzip.decompress((S56 / f"s56p-{name}.gz").read_bytes()))
            t.add(src, arcname=f"./{name}")
        t.add(S56 / "s56p-rc", arcname="./rc")
    return a, ab


def _full_steps_now() -> str:
    """``full_steps.py --base sd2+t`` on session 56's run, as it reads now."""
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "full_steps.py"),
                        "--base", "sd2+t", str(S56 / "s56p-abab.json.gz")],
                       capture_output=True, text=True, check=True)
    assert "c=32  dsl4+t" in r.stdout
    return r.stdout


def test_session_56s_run_reads_into_its_committed_tables(tarballs, tmp_path):
    a, ab = tarballs
    dest = tmp_path / "out"
    r = _read(str(dest), str(a), str(ab), "--run", "s56p", "--dsl", "dsl4")
    assert r.returncode == 0, r.stderr
    assert (dest / "host.txt").read_text() == "GPU: H100\n"
    assert (dest / "s56p-rc").exists()
    for name in ("served-widths.txt", "verdict-s56p-dsl4.json"):
        assert (dest / name).read_bytes() == (S56 / name).read_bytes(), name
    # full_steps.py reads steps placed at the width since session 66 (the
    # committed table counted steps placed wider whose loop stopped there).
    assert (dest / "full-steps.txt").read_text() == _full_steps_now()
    # At one request DSL at cap 4 placed 4 slots and its loop stopped short.
    mix = (dest / "full-steps-mix.txt").read_text()
    (line,) = [x for x in mix.splitlines() if x.startswith("c=1   dsl4+t ")]
    assert "width 4 drafted 2.00: 24% 8.810 ms" in line, mix
    # The plan's reader compared sd2+t and sd3+t with dsl4+t; this one BASE only.
    assert (dest / "host-timer.txt").read_text() in (S56 / "host-timer.txt").read_text()
    assert "1.062" in (dest / "verdict-s56p-dsl4.txt").read_text()


def test_an_arm_that_never_ran_leaves_the_others_read(tarballs, tmp_path):
    a, ab = tarballs
    dest = tmp_path / "out"
    r = _read(str(dest), "-", str(ab), "--run", "s56p", "--dsl", "dsl8,dsl4")
    assert r.returncode == 0, r.stderr
    assert not (dest / "host.txt").exists()
    assert (dest / "verdict-s56p-dsl4.json").read_bytes() == (
        S56 / "verdict-s56p-dsl4.json").read_bytes()
    assert "dsl8" in (dest / "verdict-s56p-dsl8.txt").read_text()


def test_a_second_run_read_into_the_folder_leaves_the_firsts_files(tarballs, tmp_path):
    a, ab = tarballs
    dest = tmp_path / "out"
    assert _read(str(dest), str(a), str(ab), "--run", "s56p").returncode == 0
    first = {p.name: p.read_bytes() for p in dest.iterdir()}
    # Reading the same run again keeps the plain names.
    assert _read(str(dest), str(a), str(ab), "--run", "s56p").returncode == 0
    assert sorted(p.name for p in dest.iterdir()) == sorted(first)
    r = _read(str(dest), str(a), str(ab), "--run", "s56q", "--plan", "s56")
    assert r.returncode == 0, r.stderr
    for name, data in first.items():
        assert (dest / name).read_bytes() == data, name
    for name in ("full-steps-s56q.txt", "full-steps-mix-s56q.txt", "served-widths-s56q.txt",
                 "host-timer-s56q.txt",
                 "host-s56q.txt", "ab-plan-s56q.txt", "verdict-s56q-dsl4.json"):
        assert (dest / name).stat().st_size > 0, name
    assert (dest / "full-steps-s56q.txt").read_text() == _full_steps_now()


def test_a_dsl_arm_named_with_its_label_is_read_as_it_is(tarballs, tmp_path):
    """--dsl dslN+L (a variant such as dsl4+u) is read under its own name
    against --label's SD arms; here dsl4+t, so it must read as dsl4 does."""
    a, ab = tarballs
    dest = tmp_path / "out"
    r = _read(str(dest), str(a), str(ab), "--run", "s56p", "--dsl", "dsl4,dsl4+t")
    assert r.returncode == 0, r.stderr
    plain = json.loads((dest / "verdict-s56p-dsl4.json").read_text())
    named = json.loads((dest / "verdict-s56p-dsl4-t.json").read_text())
    assert [x["ratio_dsl_vs_best_sd"] for x in named] == [
        x["ratio_dsl_vs_best_sd"] for x in plain]
    assert {x["dsl_arm"] for x in named} == {"dsl4+t"}
    widths = (dest / "served-widths.txt").read_text()
    half = len(widths) // 2
    assert widths[:half] == widths[half:] and "%" in widths


def test_the_pair_names_the_verdict_rows(tarballs, tmp_path):
    """--pair names the model pair in the verdict's rows (the small pair's
    runs are read with the same reader); the ratios are the run's."""
    a, ab = tarballs
    dest = tmp_path / "out"
    r = _read(str(dest), str(a), str(ab), "--run", "s56p", "--pair", "small")
    assert r.returncode == 0, r.stderr
    rows = json.loads((dest / "verdict-s56p-dsl4.json").read_text())
    committed = json.loads((S56 / "verdict-s56p-dsl4.json").read_text())
    assert {x["pair"] for x in rows} == {"small"}
    assert {x["pair"] for x in committed} == {"proxies"}
    assert [x["ratio_dsl_vs_best_sd"] for x in rows] == [
        x["ratio_dsl_vs_best_sd"] for x in committed]


def test_without_the_run_only_the_plan_files_are_copied(tarballs, tmp_path):
    a, _ = tarballs
    dest = tmp_path / "out"
    r = _read(str(dest), str(a), "-", "--run", "s56p", "--copy", "host.txt,nothing.txt")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["host.txt"]
    assert "nothing.txt is not in" in r.stderr


@pytest.mark.parametrize("args, says", [
    (["--dsl", "dsl4"], "--run NAME is needed"),
    (["--run", "s56p", "--dsl", "eagle"], "--dsl arm 'eagle' must be dslN"),
    (["--run", "s56p", "--dsl", "dsl4+"], "--dsl arm 'dsl4+' must be dslN"),
    (["--run", "s56p", "--base"], "--base needs a value"),
    (["--run", "s56p", "--rounds", "3"], "unknown option --rounds"),
    (["--run", "s5 6"], "must be letters, digits"),
    (["--run", "s56p", "--pair", "a=b"], "--pair must be a name"),
])
def test_bad_options_are_named(tarballs, tmp_path, args, says):
    a, ab = tarballs
    r = _read(str(tmp_path / "out"), str(a), str(ab), *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_a_missing_tarball_says_to_pass_a_dash(tmp_path):
    r = _read(str(tmp_path / "out"), str(tmp_path / "a.tgz"), "-", "--run", "s56p")
    assert r.returncode == 2 and "pass - when it did not come back" in r.stderr


def test_help_and_usage():
    r = _read("--help")
    assert r.returncode == 0 and "Usage: bash scripts/gpu-host/ab-read.sh" in r.stdout
    r = _read()
    assert r.returncode == 2
    r = _read("d", "a")
    assert r.returncode == 2 and "DEST, A_TGZ and RUN_TGZ are needed" in r.stderr
