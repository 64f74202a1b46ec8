"""scripts/gpu-host/stage-last.sh on CPU: the last chunk of a bundle staged and
checked, the host described, and the root to run on printed: the staged one,
or a wip root over a copy of it with the models linked in. The bundle is a
code-only one of test_offline_bundle's synthetic vllm tree, packed in several
chunks (with no kernels, `install-offline.sh check` can pass on CPU); the
script under test, pack-offline.sh, install-offline.sh and wip-root.sh are the
real ones (nvidia-smi and torch may be missing here: host.txt then says so)."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from test_offline_bundle import chunks, git_tree, install, pack_code

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu-host" / "stage-last.sh"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("code")
    out = tmp / "bundles"
    pack_code(git_tree(tmp, "original"), out, tmp)
    assert len(chunks(out, "c")) > 1
    return out


def _all_but_last(bundle: Path, root: Path) -> Path:
    """Stages every chunk but the last (as the one-chunk calls do); returns it."""
    cs = chunks(bundle, "c")
    for c in cs[:-1]:
        assert "waiting for" in install(root, c).stdout
    return cs[-1]


def _run(root: Path, cwd: Path, *args: str | Path):
    env = {**os.environ, "GPU_HOST_ROOT": str(root)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _wip(path: Path) -> Path:
    data = b"WHICH = 'wip'\n"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("vllm/marker.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_stages_the_last_chunk_and_prints_the_staged_root(bundle, tmp_path):
    root = tmp_path / "host"
    last = _all_but_last(bundle, root)
    logs = tmp_path / "logs"
    r = _run(root, tmp_path, logs, last)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(root)]
    assert (root / "env.sh").is_file() and (root / "vsrc" / "vllm" / "marker.py").is_file()
    assert "waiting for" not in (logs / f"stage-{last.name}.log").read_text()
    assert (logs / "host.txt").read_text().strip()


def test_with_a_wip_prints_a_root_that_imports_it_and_shares_the_models(bundle, tmp_path):
    root = tmp_path / "host"
    last = _all_but_last(bundle, root)
    r = _run(root, tmp_path, tmp_path / "logs", last, _wip(tmp_path / "w.tgz"))
    assert r.returncode == 0, r.stderr
    wip = Path(r.stdout.splitlines()[-1])
    assert wip == tmp_path / "host-wip"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    which = subprocess.run(
        ["bash", "-c", f". {wip}/env.sh && cd / && python3 -c "
         "'import vllm.marker; print(vllm.marker.WHICH)'"],
        env=env, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert which == "wip"
    assert (root / "vsrc" / "vllm" / "marker.py").read_text() == "WHICH = 'original'\n"
    assert (wip / "models").resolve() == (root / "models").resolve()


def test_a_chunk_that_does_not_complete_the_bundle_fails_with_its_log(bundle, tmp_path):
    """Staged without the chunks before it, the check cannot pass: exit 1 with
    the log's tail and where the log is, and no root printed."""
    root = tmp_path / "host"
    last = chunks(bundle, "c")[-1]
    r = _run(root, tmp_path, tmp_path / "logs", last)
    assert r.returncode == 1 and r.stdout == ""
    assert f"staging {last} failed (log: {tmp_path / 'logs'}/stage-{last.name}.log)" in r.stderr


def test_bad_input_is_one_clear_error(tmp_path):
    r = _run(tmp_path / "host", tmp_path, tmp_path / "logs")
    assert r.returncode == 2 and "LOG_DIR and CHUNK_DIR are needed" in r.stderr
    r = _run(tmp_path / "host", tmp_path, tmp_path / "logs", tmp_path / "b9")
    assert r.returncode == 2 and f"no chunk folder {tmp_path / 'b9'}: carry it" in r.stderr
    r = _run(tmp_path / "host", tmp_path)
    assert r.returncode == 2 and "Usage:" in r.stdout
    r = _run(tmp_path / "host", tmp_path, "--help")
    assert r.returncode == 0 and "Usage:" in r.stdout
