"""Offline install bundles: scripts/pack-offline.sh, scripts/install-offline.sh and
scripts/lib/offline_bundle.py on small synthetic inputs (no network, no GPU).

The inputs are a tiny wheel, a fake vLLM source tree (a git repo with a vllm/ package
and an incompressible blob, so bundles really split), a fake "CUDA wheel" holding two
kernels, and a fake GGUF; the cap is a few hundred kB so that every bundle spans
several chunks and several files span chunk boundaries.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "lib"
sys.path.insert(0, str(LIB))
import offline_bundle as ob  # noqa: E402

PY = sys.executable
PYVER = f"{sys.version_info[0]}.{sys.version_info[1]}"
CAP = 150_000
KERNELS = [
    "vllm/_C_stable_libtorch.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so",
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(*cmd, env=None, check=True) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, PYTHON=PY, **(env or {}))
    r = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, env=full_env, cwd=ROOT
    )
    if check and r.returncode != 0:
        raise AssertionError(f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def make_wheel(path: Path, dist: str, version: str, module_src: str) -> Path:
    whl = path / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}/__init__.py": module_src,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(whl, "w") as zf:
        for n, text in files.items():
            zf.writestr(n, text)
    return whl


def make_tree(path: Path, version_text: str = "original") -> Path:
    pkg = path / "vllm"
    (pkg / "entrypoints" / "cli").mkdir(parents=True)
    (pkg / "vllm_flash_attn").mkdir()
    (pkg / "__init__.py").write_text("__version__ = '0.32.0'\n")
    (pkg / "marker.py").write_text(f"WHICH = {version_text!r}\n")
    (pkg / "entrypoints" / "__init__.py").write_text("")
    (pkg / "entrypoints" / "cli" / "__init__.py").write_text("")
    (pkg / "entrypoints" / "cli" / "main.py").write_text(
        "def main():\n    print('vllm-main')\n    return 0\n"
    )
    (pkg / "vllm_flash_attn" / "__init__.py").write_text("")
    (pkg / "blob.bin").write_bytes(noise(200_000, 1))  # incompressible: forces splits
    (pkg / "script.sh").write_text("#!/bin/sh\n")
    (pkg / "script.sh").chmod(0o755)
    # build outputs that must not be shipped
    (pkg / "_C.abi3.so").write_bytes(b"cpu kernel")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "marker.cpython.pyc").write_bytes(b"pyc")
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("inputs")
    wheels = d / "wheels"
    wheels.mkdir()
    w1 = make_wheel(wheels, "tinypkg", "1.0", "VALUE = 42\n")
    w2 = make_wheel(wheels, "otherpkg", "2.0", "VALUE = 'other'\n")
    reqs = d / "requirements.txt"
    reqs.write_text(
        f"# pinned\ntinypkg==1.0 \\\n    --hash=sha256:{sha(w1)}\notherpkg==2.0\n"
    )
    tree = make_tree(d / "src")
    cuda = d / "cuda.whl"
    kernels = {KERNELS[0]: noise(180_000, 2), KERNELS[1]: b"fa3" * 30_000}
    with zipfile.ZipFile(cuda, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in kernels.items():
            zf.writestr(n, data)
        zf.writestr(
            "vllm-0.32.0.dist-info/entry_points.txt",
            "[console_scripts]\nvllm = vllm.entrypoints.cli.main:main\n",
        )
    gguf = d / "model.gguf"
    gguf.write_bytes(noise(400_000, 3))  # larger than a chunk
    train = d / "train.json"
    train.write_text(json.dumps([[{"role": "user", "content": "hi"}]] * 200))
    dl = make_wheel(d, "fixturedata", "0.1", "# registry file for cache/dl\n")
    return dict(
        dir=d,
        wheels=[w1, w2],
        wheel_dir=wheels,
        reqs=reqs,
        tree=tree,
        cuda=cuda,
        kernels=kernels,
        gguf=gguf,
        train=train,
        dl=dl,
    )


def pack_full(
    inputs: dict, out: Path, cap: int = CAP, extra=()
) -> subprocess.CompletedProcess:
    cmd = [
        PY,
        LIB / "offline_bundle.py",
        "pack",
        "--out",
        out,
        "--cap",
        str(cap),
        "--python",
        PYVER,
        "--vllm-src",
        inputs["tree"],
        "--requirements",
        inputs["reqs"],
        "--wheel-dir",
        inputs["wheel_dir"],
        "--kernel-wheel",
        inputs["cuda"],
        "--kernel-wheel-sha256",
        sha(inputs["cuda"]),
        "--cache",
        inputs["dir"] / "cache",
        "--gguf",
        inputs["gguf"],
        "--train-json",
        inputs["train"],
        "--dl",
        inputs["dl"],
    ]
    for k in KERNELS:
        cmd += ["--kernel", k]
    return run(*cmd, *extra)


@pytest.fixture(scope="module")
def full(inputs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundles")
    pack_full(inputs, out)
    return out


def chunks(out: Path, prefix: str = "b") -> list[Path]:
    found = [
        p
        for p in out.iterdir()
        if p.name[len(prefix) :].isdigit() and p.name.startswith(prefix)
    ]
    return sorted(found, key=lambda p: int(p.name[len(prefix) :]))


def manifest(chunk: Path) -> dict:
    return json.loads((chunk / "MANIFEST.json").read_text())


def install(root: Path, *args, check=True) -> subprocess.CompletedProcess:
    return run(
        "bash",
        ROOT / "scripts" / "install-offline.sh",
        "--root",
        root,
        *args,
        check=check,
    )


def folder_bytes(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


# ---------------------------------------------------------------------------


def test_layout_fits_budget_and_covers_every_byte():
    rng = random.Random(0)
    for _ in range(300):
        budget = rng.randint(10, 1000)
        sizes = [
            rng.choice([0, rng.randint(1, 50), rng.randint(1, 3000)])
            for _ in range(rng.randint(1, 12))
        ]
        groups = [rng.randint(0, 1) for _ in sizes]
        bins = ob.layout(sizes, budget, groups)
        assert all(sum(s for _, _, s in b) <= budget for b in bins)
        assert len(bins) <= max(1, -(-sum(sizes) // budget))  # never more than needed
        for i, size in enumerate(sizes):
            pieces = sorted((off, s) for b in bins for j, off, s in b if j == i)
            assert pieces, f"file {i} lost"
            pos = 0
            for off, s in pieces:
                assert off == pos
                pos += s
            assert pos == size


def test_size_parsing():
    assert ob.parse_size("60MB") == 60_000_000
    assert ob.parse_size("64MiB") == 64 * 2**20
    assert ob.parse_size("1000") == 1000
    with pytest.raises(ob.BundleError):
        ob.parse_size("sixty")


def test_chunks_never_exceed_cap(full):
    cs = chunks(full)
    assert len(cs) >= 4
    for c in cs:
        assert folder_bytes(c) <= CAP, c
    m = manifest(cs[0])
    assert any(len(f["parts"]) > 1 for f in m["files"]), "expected split files"
    # the GGUF is bigger than a chunk: it must be split
    gguf = next(f for f in m["files"] if f["kind"] == "model")
    assert len(gguf["parts"]) >= 3


def test_manifest_round_trip_and_reassembly(full, inputs):
    cs = chunks(full)
    ms = [manifest(c) for c in cs]
    assert all(m == ms[0] for m in ms), "every chunk carries the same manifest"
    m = ms[0]
    assert m["format"] == ob.FORMAT and m["cap"] == CAP and m["kind"] == "full"
    assert [c["name"] for c in m["chunks"]] == [c.name for c in cs]
    assert json.loads(json.dumps(m)) == m
    kinds = sorted({f["kind"] for f in m["files"]})
    assert kinds == ["data", "dl", "kernel", "model", "vllm-src", "wheel"]
    # the core (wheels, package, kernels) is complete before the last chunks
    core_chunks = {
        int(p["chunk"][1:])
        for f in m["files"]
        if f["kind"] in ob.CORE_KINDS
        for p in f["parts"]
    }
    assert max(core_chunks) < len(cs)
    by_name = {c.name: c for c in cs}
    for f in m["files"]:
        data = b"".join(
            (by_name[p["chunk"]] / p["path"]).read_bytes()
            for p in sorted(f["parts"], key=lambda p: p["offset"])
        )
        assert len(data) == f["size"]
        assert hashlib.sha256(data).hexdigest() == f["sha256"]
    gguf = next(f for f in m["files"] if f["kind"] == "model")
    assert gguf["sha256"] == sha(inputs["gguf"])
    # per-chunk checksums are in sha256sum's format
    for c in cs:
        r = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=c)
        assert r.returncode == 0
    # the vllm package holds sources, not build outputs
    src = next(f for f in m["files"] if f["kind"] == "vllm-src")
    assert src["codec"] == "gz"


def test_pack_is_deterministic(full, inputs, tmp_path):
    pack_full(inputs, tmp_path)
    a = {f["name"]: f["sha256"] for f in manifest(chunks(full)[0])["files"]}
    b = {f["name"]: f["sha256"] for f in manifest(chunks(tmp_path)[0])["files"]}
    assert a == b
    assert (
        manifest(chunks(full)[0])["bundle_id"]
        == manifest(chunks(tmp_path)[0])["bundle_id"]
    )


def check_installed(root: Path, inputs: dict, marker: str = "original") -> None:
    tree = inputs["tree"] / "vllm"
    vllm = root / "vsrc" / "vllm"
    assert (vllm / "marker.py").read_text() == f"WHICH = {marker!r}\n"
    assert (vllm / "blob.bin").read_bytes() == (tree / "blob.bin").read_bytes()
    assert os.access(vllm / "script.sh", os.X_OK)
    assert not (vllm / "_C.abi3.so").exists() and not (vllm / "__pycache__").exists()
    for k, data in inputs["kernels"].items():
        assert (root / "kernels" / k).read_bytes() == data
        assert (root / "vsrc" / k).read_bytes() == data
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{root}/vsrc:{root}/site"
    # No __pycache__ from this import: the next check of the same install looks for one.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [
            PY,
            "-c",
            "import importlib.metadata as m, tinypkg, otherpkg, vllm.marker;"
            "print(m.version('vllm'), tinypkg.VALUE, otherpkg.VALUE, vllm.marker.WHICH,"
            " [e.name for e in m.entry_points(group='console_scripts') if e.name == 'vllm'])",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=True,
    ).stdout.split()
    assert out == ["0.32.0", "42", "other", marker, "['vllm']"]


def test_stage_in_any_order(full, inputs, tmp_path):
    root = tmp_path / "host"
    cs = chunks(full)
    order = cs[::-1]
    order[0], order[1] = order[1], order[0]
    for c in order[:-1]:
        r = install(root, c)
        assert "waiting for" in r.stdout
    assert f"waiting for {order[-1].name}" in install(root, "status").stdout
    r = install(root, order[-1])
    assert "complete" in r.stdout, r.stdout
    check_installed(root, inputs)
    assert (root / "models" / "smollm2.gguf").read_bytes() == inputs[
        "gguf"
    ].read_bytes()
    assert (root / "models" / "train.json").read_bytes() == inputs["train"].read_bytes()
    dl = root / "cache" / "dl" / inputs["dl"].name
    assert dl.read_bytes() == inputs["dl"].read_bytes()
    assert not any((root / "parts").iterdir()), "parts are dropped once reassembled"
    env = (root / "env.sh").read_text()
    assert f'PYTHONPATH="{root}/vsrc:{root}/site' in env
    assert "VLLM_USE_FLASHINFER_SAMPLER=0" in env and "HF_HUB_OFFLINE=1" in env
    assert f"DSL_CACHE={root}/cache" in env and f"VENV_DIR={root}/venv" in env
    shim = root / "venv" / "bin" / "python"
    assert (
        subprocess.run([shim, "-c", "print(1)"], capture_output=True).stdout == b"1\n"
    )
    assert install(root, "env").stdout == env
    # The CLI runs main() as a script, and not when vLLM's spawned engine
    # process re-runs the parent's main script (as __mp_main__).
    cli = str(root / "bin" / "vllm")
    pyenv = {**os.environ, "PYTHONPATH": str(root / "vsrc")}
    run = subprocess.run([sys.executable, cli], capture_output=True, text=True,
                         env=pyenv)
    assert (run.returncode, run.stdout) == (0, "vllm-main\n")
    spawned = subprocess.run(
        [sys.executable, "-c",
         f"import runpy; runpy.run_path({cli!r}, run_name='__mp_main__')"],
        capture_output=True, text=True, env=pyenv)
    assert (spawned.returncode, spawned.stdout) == (0, "")


def test_stage_all_at_once_and_idempotent(full, inputs, tmp_path):
    root = tmp_path / "host"
    install(root, *chunks(full))
    check_installed(root, inputs)
    site_inode = (root / "site" / "tinypkg" / "__init__.py").stat().st_ino
    r = install(root, *chunks(full))
    assert "installed" not in r.stdout and "unpacked" not in r.stdout, r.stdout
    assert (root / "site" / "tinypkg" / "__init__.py").stat().st_ino == site_inode
    check_installed(root, inputs)


def corrupt_copy(chunk: Path, dest: Path) -> Path:
    shutil.copytree(chunk, dest)
    part = sorted((dest / "parts").iterdir())[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    return part


def test_corrupt_chunk_is_detected(full, inputs, tmp_path):
    root = tmp_path / "host"
    c = chunks(full)[0]
    bad = tmp_path / c.name
    part = corrupt_copy(c, bad)
    r = install(root, bad, check=False)
    assert r.returncode != 0
    assert f"chunk {c.name}" in r.stderr and "corrupt" in r.stderr
    assert part.name in r.stderr and "send b1 again" in r.stderr
    assert not (root / "parts").exists() or not any((root / "parts").rglob("*-*"))
    # the intact copy then stages fine, and the rest completes the bundle
    install(root, c)
    install(root, *chunks(full)[1:])
    check_installed(root, inputs)


def test_missing_part_and_missing_chunk(full, tmp_path):
    root = tmp_path / "host"
    c = chunks(full)[1]
    bad = tmp_path / c.name
    shutil.copytree(c, bad)
    victim = sorted((bad / "parts").iterdir())[-1]
    victim.unlink()
    r = install(root, bad, check=False)
    assert r.returncode != 0 and f"{victim.name} is missing" in r.stderr
    r = install(root, tmp_path / "b99", check=False)
    assert r.returncode != 0 and "not found" in r.stderr
    (bad / "MANIFEST.json").write_text("{}")
    r = install(root, bad, check=False)
    assert r.returncode != 0 and "MANIFEST.json is corrupt" in r.stderr


def test_cap_too_small_is_an_error(inputs, tmp_path):
    r = run(
        PY,
        LIB / "offline_bundle.py",
        "pack",
        "--out",
        tmp_path,
        "--cap",
        "2000",
        "--gguf",
        inputs["gguf"],
        check=False,
    )
    assert r.returncode != 0 and "larger --cap" in r.stderr


def git_tree(tmp_path: Path, marker: str) -> Path:
    tree = make_tree(tmp_path / "vllm-repo", marker)
    (tree / ".gitignore").write_text("*.so\n__pycache__/\n")
    env = dict(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"]):
        subprocess.run(
            ["git", "-C", str(tree), *cmd], check=True, env=dict(os.environ, **env)
        )
    return tree


def pack_code(tree: Path, out: Path, tmp_path: Path, cap: int | str = CAP,
              check: bool = True, **env):
    return run(
        "bash",
        ROOT / "scripts" / "pack-offline.sh",
        "--code-only",
        "--cap",
        str(cap),
        "--out",
        out,
        # No kept rows unless a test keeps some (not the repository's).
        env={"VLLM_DIR": str(tree), "DSL_CACHE": str(tmp_path / "cache"),
             "ROWS_DIR": str(tmp_path / "no-rows"), **env},
        check=check,
    )


def test_code_only_bundle_keeps_wheels_and_kernels(full, inputs, tmp_path):
    root = tmp_path / "host"
    install(root, *chunks(full))
    check_installed(root, inputs)
    tree = git_tree(tmp_path, "patched")
    (tree / "vllm" / "untracked_new.py").write_text(
        "NEW = 1\n"
    )  # untracked, not ignored
    out = tmp_path / "bundles"
    r = pack_code(tree, out, tmp_path)
    assert "scripts/install-offline.sh" in r.stdout
    cs = chunks(out, "c")
    assert cs and all(folder_bytes(c) <= CAP for c in cs)
    m = manifest(cs[0])
    assert m["kind"] == "code" and [f["kind"] for f in m["files"]] == ["vllm-src"]
    assert m["vllm"]["git_head"] and m["vllm"]["git_describe"]
    for c in cs:
        r = install(root, c)
    assert "unpacked the vllm package" in r.stdout and "installed" not in r.stdout
    check_installed(root, inputs, marker="patched")
    assert (root / "vsrc" / "vllm" / "untracked_new.py").exists()
    # re-staging the full bundle does not revert the code ...
    install(root, *chunks(full))
    check_installed(root, inputs, marker="patched")
    # ... unless asked to
    install(root, *chunks(full), "--reapply")
    check_installed(root, inputs, marker="original")


def test_cap_fit_packs_what_fits_beside_the_tree(tmp_path):
    """--cap fit: a device call's limit less this checkout's tree as sent
    (call-size.sh's count), less CALL_MARGIN_BYTES; with no room, one error."""
    counted = run("bash", ROOT / "scripts" / "gpu-host" / "call-size.sh").stdout
    tree_sent = int(re.search(r"\(([\d,]+) as sent\)", counted).group(1).replace(",", ""))
    tree = git_tree(tmp_path, "fit")
    (tree / "vllm" / "big.bin").write_bytes(os.urandom(2_500_000))
    out = tmp_path / "bundles"
    r = pack_code(tree, out, tmp_path, cap="fit",
                  CALL_LIMIT_BYTES=str(tree_sent + 4096 + 2_000_000),
                  CALL_MARGIN_BYTES="4096")
    assert "--cap fit: 2000000 bytes a chunk" in r.stdout + r.stderr
    # The committed results travel unless slim-tree.sh left them out.
    slim = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "core.sparseCheckout"],
                          capture_output=True, text=True).stdout.strip() == "true"
    assert ("scripts/gpu-host/slim-tree.sh' first" in r.stderr) == (not slim)
    cs = chunks(out, "c")
    assert len(cs) == 2 and all(folder_bytes(c) <= 2_000_000 for c in cs)
    r = pack_code(tree, tmp_path / "none", tmp_path, cap="fit", check=False,
                  CALL_LIMIT_BYTES=str(tree_sent + 4096), CALL_MARGIN_BYTES="4096")
    assert r.returncode == 1 and "leaves no room for a chunk" in r.stderr
    assert not (tmp_path / "none").exists()
    r = pack_code(tree, tmp_path / "none", tmp_path, cap="fit", check=False,
                  CALL_MARGIN_BYTES="1MiB")
    assert r.returncode == 1
    assert "CALL_MARGIN_BYTES '1MiB' is not a number of bytes" in r.stderr


def test_code_only_bundle_alone_imports(tmp_path):
    tree = git_tree(tmp_path, "solo")
    out = tmp_path / "bundles"
    pack_code(tree, out, tmp_path, cap=ob.parse_size("60MB"))
    cs = chunks(out, "c")
    assert len(cs) == 1
    root = tmp_path / "host"
    install(root, cs[0])
    r = install(root, "check")
    assert "vllm 0.32.0 from" in r.stdout, r.stdout
    assert install(root, "status").returncode == 0


def test_train_json_leaves_evaluation_prompts_out(tmp_path, monkeypatch):
    monkeypatch.setattr(ob, "TRAIN_FIRST_ITEM", 2)
    items = [
        {
            "id": f"c{i}",
            "conversations": [
                {"from": "human", "value": f"question {i}"},
                {"from": "gpt", "value": "answer"},
            ],
        }
        for i in range(10)
    ]
    raw = json.dumps(items)[:-40]  # truncated like the packaged file
    whl = tmp_path / "sharegpt.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("data/sg.json", raw)
    evals = tmp_path / "sharegpt-test.jsonl"
    evals.write_text(
        json.dumps({"id": "c4", "text": "x"})
        + "\n"
        + json.dumps({"id": "other", "text": "question 6"})
        + "\n"
    )
    out = tmp_path / "train.json"
    msg = ob.make_train_json(whl, "data/sg.json", out, [evals])
    got = [c[0]["content"] for c in json.loads(out.read_text())]
    assert got == [f"question {i}" for i in (2, 3, 5, 7, 8)], got
    assert "2 left out" in msg


def test_requirements_hash_mismatch(inputs, tmp_path):
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("tinypkg==1.0 --hash=sha256:" + "0" * 64 + "\n")
    r = run(
        PY, LIB / "offline_bundle.py", "wheels", reqs, inputs["wheel_dir"], check=False
    )
    assert r.returncode != 0 and "tinypkg==1.0: no wheel" in r.stderr


def test_project_requirements_are_pinned_with_hashes():
    reqs = ob.read_requirements(ROOT / "requirements-offline-cuda.txt")
    assert len(reqs) > 50
    assert all(len(h) == 1 and len(h[0]) == 64 for _, _, h in reqs)


def test_help():
    for script in ("pack-offline.sh", "install-offline.sh", "keep-rows.sh"):
        r = run("bash", ROOT / "scripts" / script, "--help")
        assert r.stdout.startswith("Usage: scripts/" + script)


def test_pack_places_the_prompts_beside_the_chunks_and_no_rows(tmp_path):
    tree = git_tree(tmp_path, "extras")
    cache = tmp_path / "cache"
    (cache / "fixtures" / "prompts").mkdir(parents=True)
    (cache / "fixtures" / "prompts" / "sharegpt-test.jsonl").write_text("{}\n")
    out = tmp_path / "bundles"
    (out / "rows").mkdir(parents=True)  # an older pack's carried rows
    (out / "rows" / "self-rows-0123456789ab.pt").write_bytes(b"old")
    env = {"FIXTURES_DIR": str(cache / "fixtures")}
    pack_code(tree, out, tmp_path, **env)
    assert (out / "prompts" / "sharegpt-test.jsonl").read_text() == "{}\n"
    # The kept rows travel in the tree and are unpacked on the host
    # (stage-rows): an older pack's copy is gone, so nobody carries it.
    assert not (out / "rows").exists()


def test_stage_rows_unpacks_the_kept_rows_and_names_a_bad_one(tmp_path):
    data = b"0123456789" * 7
    _split_rows(tmp_path / "sent", "self-rows-0123456789ab.pt", data)
    kept = tmp_path / "gpu-rows"
    run("bash", ROOT / "scripts" / "keep-rows.sh", tmp_path / "sent",
        env={"ROWS_DIR": str(kept)})
    models = tmp_path / "root" / "models"
    assert ob.stage_rows(kept, models) == ["self-rows-0123456789ab.pt"]
    assert (models / "self-rows-0123456789ab.pt").read_bytes() == data
    # Staged again: the file there has its sha256 and is kept as it is.
    mtime = (models / "self-rows-0123456789ab.pt").stat().st_mtime_ns
    assert ob.stage_rows(kept, models) == ["self-rows-0123456789ab.pt"]
    assert (models / "self-rows-0123456789ab.pt").stat().st_mtime_ns == mtime
    # A file not listed, and one that does not unpack to its sha256: one
    # error naming each; the good one is still staged.
    (kept / "self-rows-unlisted.pt.xz").write_bytes(lzma.compress(b"x"))
    (kept / "self-rows-bad.pt.xz").write_bytes(lzma.compress(b"y"))
    with (kept / "SHA256SUMS").open("a") as f:
        f.write("0" * 64 + "  self-rows-bad.pt\n")
    (models / "self-rows-0123456789ab.pt").unlink()
    with pytest.raises(ob.BundleError) as e:
        ob.stage_rows(kept, models)
    msg = str(e.value)
    assert "self-rows-unlisted.pt.xz is not in" in msg and "keep-rows.sh" in msg
    assert "self-rows-bad.pt.xz unpacks to sha256" in msg and "restore it from git" in msg
    assert "staged: self-rows-0123456789ab.pt" in msg
    assert (models / "self-rows-0123456789ab.pt").read_bytes() == data
    assert not (models / "self-rows-bad.pt").exists()
    assert not list(models.glob("*.tmp"))


def _split_rows(folder: Path, name: str, data: bytes, sums: str | None = None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.aa").write_bytes(data[:5])
    (folder / f"{name}.ab").write_bytes(data[5:])
    digest = hashlib.sha256(data).hexdigest()
    (folder / "rows.sha256").write_text(f"{sums or digest}  {name}\n")


def test_keep_rows_joins_checks_and_keeps_them_compressed(tmp_path):
    data = b"0123456789" * 7
    sent = tmp_path / "files_at"
    _split_rows(sent / "d1", "self-rows-0123456789ab.pt", data)
    # The parts are where split wrote them; the list one folder below.
    for part in (sent / "d1").glob("self-rows-*"):
        part.rename(sent / part.name)
    kept = tmp_path / "gpu-rows"
    kept.mkdir()
    (kept / "SHA256SUMS").write_text("1" * 64 + "  self-rows-0123456789ab.pt\n"
                                     + "2" * 64 + "  self-rows-other.pt\n")
    r = run("bash", ROOT / "scripts" / "keep-rows.sh", sent, env={"ROWS_DIR": str(kept)})
    assert "kept" in r.stdout and "commit it" in r.stdout
    assert lzma.decompress((kept / "self-rows-0123456789ab.pt.xz").read_bytes()) == data
    # The file's line is replaced, the others stay.
    assert sorted((kept / "SHA256SUMS").read_text().splitlines()) == sorted(
        [hashlib.sha256(data).hexdigest() + "  self-rows-0123456789ab.pt",
         "2" * 64 + "  self-rows-other.pt"])


def test_keep_rows_refuses_a_corrupt_or_unlisted_file(tmp_path):
    sent = tmp_path / "files_at"
    _split_rows(sent, "self-rows-0123456789ab.pt", b"0123456789" * 7, sums="0" * 64)
    env = dict(os.environ, ROWS_DIR=str(tmp_path / "gpu-rows"))
    script = str(ROOT / "scripts" / "keep-rows.sh")
    bad = subprocess.run(["bash", script, str(sent)], env=env, capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "expected " + "0" * 64 in bad.stderr
    assert not list((tmp_path / "gpu-rows").iterdir())
    (sent / "rows.sha256").write_text("")
    bad = subprocess.run(["bash", script, str(sent)], env=env, capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "not in the sha256 list" in bad.stderr
    bad = subprocess.run(["bash", script, str(tmp_path / "none")], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "files_at folder" in bad.stderr
