"""scripts/gpu-host/engine_cpus.py on CPU, on fake sysfs topologies: the
engines get one CPU on each of the highest cores, the client every CPU of the
others (as session 41's host: 16 CPUs each its own core, engines on 14 and 15)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "gpu-host"))
import engine_cpus  # noqa: E402


def _sysfs(tmp_path: Path, core_of: dict[int, int]) -> Path:
    for cpu, core in core_of.items():
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text("0\n")
        (topo / "core_id").write_text(f"{core}\n")
    return tmp_path


def _run(sysfs: Path, cpus: range | list[int], *args: str) -> str:
    return engine_cpus.main(["--sysfs", str(sysfs), "--cpus",
                             ",".join(map(str, cpus)), *args])


def test_each_cpu_its_own_core(tmp_path):
    sysfs = _sysfs(tmp_path, {c: c for c in range(16)})
    assert _run(sysfs, range(16)) == "14,15 " + ",".join(map(str, range(14)))


def test_siblings_of_the_engines_cores_go_to_neither(tmp_path):
    # CPUs c and c + 8 share core c: the engines take 14 and 15 (cores 6, 7);
    # their siblings 6 and 7 are left idle, the client gets cores 0-5.
    sysfs = _sysfs(tmp_path, {c: c % 8 for c in range(16)})
    engines, client = _run(sysfs, range(16)).split()
    assert engines == "14,15"
    assert client == "0,8,1,9,2,10,3,11,4,12,5,13"


def test_only_the_cpus_given_count_and_an_unreadable_topology_is_a_core(tmp_path):
    sysfs = _sysfs(tmp_path, {0: 0, 1: 0, 2: 1, 3: 1})  # cpu4 has no topology
    assert _run(sysfs, [0, 1, 2, 3, 4], "--cores", "1") == "4 0,1,2,3"
    assert _run(sysfs, [0, 2, 4], "--cores", "2") == "2,4 0"


def test_with_no_core_left_the_client_list_is_empty(tmp_path):
    sysfs = _sysfs(tmp_path, {0: 0, 1: 1})
    assert _run(sysfs, [0, 1], "--cores", "2") == "0,1 "
    with pytest.raises(SystemExit, match=re.escape("--cores 0 must be at least 1")):
        _run(sysfs, [0, 1], "--cores", "0")


def test_it_runs_as_a_script():
    r = subprocess.run([sys.executable, str(ROOT / "scripts/gpu-host/engine_cpus.py"),
                        "--help"], capture_output=True, text=True, check=True)
    assert "--cores" in r.stdout
