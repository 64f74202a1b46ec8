"""Run vLLM's own pre-commit hooks (from the pinned tree) on the series' files.

pre-commit itself clones hook repositories from the network; this runner reads
the tree's `.pre-commit-config.yaml` instead and runs, on the files the series
adds or changes, every hook that works offline: the ruff and typos hooks with
the pinned tool versions installed in the venv (requirements-lint.txt), and the
`local` python hooks (SPDX, config docstrings, test tethering, forbidden imports,
torch.cuda calls, lazy imports, boolean context managers, mypy).

Usage: upstream_hooks.py TREE BASE_REF [HOOK_ID ...]
Prints one PASS/FAIL/SKIP line per hook; exits 1 if any hook failed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import regex as re
import yaml

# Hooks that edit files or need tools this runner does not install.
UNSUPPORTED = {
    "clang-format": "C++ only",
    "markdownlint-cli2": "needs node",
    "actionlint": "GitHub workflows only",
    "shellcheck": "no shell files in the series",
    "pip-compile": "requirements only",
    "format-torch-nightly-test": "requirements only",
    "update-dockerfile-graph": "docker only",
    "test-nonroot-entrypoint": "docker only",
    "validate-docker-versions": "docker only",
    "png-lint": "images only",
    "signoff-commit": "commit-msg stage (check-series checks Signed-off-by)",
    "suggestion": "message only",
}
# `types` that the remote hook repositories declare for their hooks.
REMOTE_HOOK_TYPES = {
    "ruff-check": ["python", "pyi"],
    "ruff-format": ["python", "pyi"],
    "typos": ["text"],
}


def changed_files(tree: Path, base: str) -> list[str]:
    out = subprocess.run(
        [
            "git",
            "-C",
            str(tree),
            "diff",
            "--name-only",
            "--diff-filter=AMR",
            base,
            "HEAD",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [f for f in out.splitlines() if f]


def added_lines(tree: Path, base: str) -> dict[str, set[int]]:
    """Line numbers (at HEAD) that the series adds or changes, per file."""
    out = subprocess.run(
        ["git", "-C", str(tree), "diff", "-U0", base, "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines: dict[str, set[int]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and current:
            m = re.search(r"\+(\d+)(?:,(\d+))?", line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            lines.setdefault(current, set()).update(range(start, start + count))
    return lines


def new_mypy_errors(out: str, added: dict[str, set[int]]) -> tuple[list[str], int]:
    """mypy errors the series introduces, and the count of the pin's own.

    Upstream's mypy hook checks whole files. An error on a line the series did
    not touch is the pin's (it depends on the installed third-party stubs).
    An error on a touched line whose exact message the pin also reports on an
    untouched line of the same file is the same environment artefact (e.g.
    `self.model.compute_logits` typed through `nn.Module`). Everything else
    is the series' to fix.
    """
    errors = []
    for line in out.splitlines():
        m = re.match(r"([^:]+):(\d+): error: (.*)", line)
        if m:
            errors.append((m.group(1), int(m.group(2)), m.group(3), line))
    pin_messages = {
        (path, msg)
        for path, lineno, msg, _ in errors
        if lineno not in added.get(path, set())
    }
    new = [
        line
        for path, lineno, msg, line in errors
        if lineno in added.get(path, set()) and (path, msg) not in pin_messages
    ]
    return new, len(errors) - len(new)


def file_types(path: str) -> set[str]:
    if path.endswith(".py"):
        return {"python", "file", "text"}
    if path.endswith(".pyi"):
        return {"pyi", "file", "text"}
    if path.endswith(".rs"):
        return {"rust", "file", "text"}
    if path.endswith(".png"):
        return {"png", "file", "binary"}
    return {"file", "text"}


def select(hook: dict, files: list[str], global_exclude: str | None) -> list[str]:
    picked = []
    for f in files:
        if global_exclude and re.search(global_exclude, f):
            continue
        if "files" in hook and not re.search(hook["files"], f):
            continue
        if "exclude" in hook and re.search(hook["exclude"], f):
            continue
        types = file_types(f)
        if "types" in hook and not set(hook["types"]) <= types:
            continue
        if "types_or" in hook and not set(hook["types_or"]) & types:
            continue
        picked.append(f)
    return picked


def command(repo: str, hook: dict) -> list[str] | None:
    hid = hook["id"]
    bindir = Path(sys.executable).parent
    if hid == "ruff-check":
        return [str(bindir / "ruff"), "check", "--no-fix", "--output-format", "concise"]
    if hid == "ruff-format":
        return [str(bindir / "ruff"), "format", "--check", "--diff"]
    if hid == "typos":
        return [str(bindir / "typos"), "--force-exclude"]
    if hid == "check-json":
        return [sys.executable, "-m", "json.tool"]
    if repo != "local":
        return None
    entry = shlex.split(hook["entry"]) + list(hook.get("args", []))
    if entry[0] == "python":
        entry[0] = sys.executable
    return entry


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    tree, base, only = Path(argv[0]).resolve(), argv[1], set(argv[2:])
    config = yaml.safe_load((tree / ".pre-commit-config.yaml").read_text())
    files = changed_files(tree, base)
    bindir = str(Path(sys.executable).parent)
    env = dict(
        os.environ,
        PYTHONPATH=str(tree),
        PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
    )
    failed = 0
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            hid = hook["id"]
            if only and hid not in only:
                continue
            stages = hook.get("stages", config.get("default_stages", []))
            if "manual" not in stages and "pre-commit" not in stages:
                continue
            if hid in UNSUPPORTED:
                continue
            cmd = command(repo["repo"], hook)
            if cmd is None:
                print(f"SKIP  {hid}: no offline runner")
                continue
            if hid in REMOTE_HOOK_TYPES and "types" not in hook:
                hook = {**hook, "types_or": REMOTE_HOOK_TYPES[hid]}
            targets = select(hook, files, config.get("exclude"))
            if hook.get("always_run") is not True and not targets:
                continue
            if hid == "check-json":
                results = [
                    subprocess.run(
                        cmd + [t], cwd=tree, env=env, capture_output=True, text=True
                    )
                    for t in targets
                ]
                rc = max((r.returncode for r in results), default=0)
                out = "".join(r.stdout + r.stderr for r in results)
            else:
                args = [] if hook.get("pass_filenames") is False else targets
                proc = subprocess.run(
                    cmd + args, cwd=tree, env=env, capture_output=True, text=True
                )
                rc, out = proc.returncode, proc.stdout + proc.stderr
                if hid == "mypy" and rc != 0:
                    new, old = new_mypy_errors(out, added_lines(tree, base))
                    if not new and "error:" in out:
                        print(
                            f"PASS  mypy ({len(targets)} files; {old} errors "
                            "of the pin on untouched lines)"
                        )
                        continue
                    out = "\n".join(new) or out
            if rc == 0:
                print(f"PASS  {hid} ({len(targets)} files)")
            else:
                failed += 1
                print(f"FAIL  {hid}")
                print(
                    "\n".join(
                        "      " + line for line in out.strip().splitlines()[-40:]
                    )
                )
    print(f"upstream hooks: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
