"""scripts/lib/common.sh's unpack_ab_run on CPU: an A/B run's tarball (as
ab-collect.sh returns it) laid into a results folder: the run's files
gzipped or copied under the run's name, its graphs (dot/*.dot) gzipped, and
the files a run may lack left out without an error."""

from __future__ import annotations

import gzip
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tarball(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "run"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    tgz = tmp_path / "run.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        for name in files:
            t.add(src / name, arcname=f"./{name}")
    return tgz


def _unpack(tgz: Path, dest: Path) -> subprocess.CompletedProcess:
    dest.mkdir()
    return subprocess.run(
        ["bash", "-c", f'source "{ROOT}/scripts/lib/common.sh"; unpack_ab_run "$@"', "_",
         str(tgz), str(dest), "s9p"], capture_output=True, text=True, timeout=60)


def test_a_whole_run_is_laid_out_under_its_name(tmp_path):
    tgz = _tarball(tmp_path, {"abab.json": "{}", "abab.log": "log", "gpu.csv": "g",
                              "top.log": "t", "args": "--x", "rc": "0",
                              "dot/draft-loop-64.dot": "digraph {}"})
    dest = tmp_path / "dest"
    r = _unpack(tgz, dest)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in dest.iterdir()) == [
        "draft-loop-64.dot.gz", "s9p-abab.json.gz", "s9p-abab.log.gz", "s9p-args",
        "s9p-gpu.csv.gz", "s9p-rc", "s9p-top.log.gz"]
    assert gzip.decompress((dest / "s9p-abab.json.gz").read_bytes()) == b"{}"
    assert gzip.decompress((dest / "draft-loop-64.dot.gz").read_bytes()) == b"digraph {}"
    assert (dest / "s9p-args").read_text() == "--x"


def test_a_run_still_going_has_only_its_results_so_far(tmp_path):
    tgz = _tarball(tmp_path, {"abab.json": "{}", "abab.log": "log"})
    dest = tmp_path / "dest"
    r = _unpack(tgz, dest)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["s9p-abab.json.gz", "s9p-abab.log.gz"]
