"""Read vllm.lock.toml and print values for the shell scripts.

Usage:
  lock.py get KEY.PATH          print one value (lists: one item per line)
  lock.py shell [TARGET]        print `export LOCK_*=...` lines for common.sh
  lock.py sdist-sha256 VERSION  the pinned sha256 of vllm VERSION's sdist (the pin's
                                or a [releases] entry); exit 3 when it is not pinned
  lock.py vendored TARGET       the paths of targets.TARGET.vendored_trees, one a line
                                (each entry checked: a `path` under vllm/ and a `reason`)
"""

from __future__ import annotations

import shlex
import sys
import tomllib
from pathlib import Path

LOCK = Path(__file__).resolve().parents[2] / "vllm.lock.toml"


def load(path: Path = LOCK) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def get(data: dict, dotted: str):
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"{dotted!r} is not set in {LOCK.name}")
        node = node[part]
    return node


def sdist_sha256(data: dict, version: str) -> str | None:
    """The pinned sha256 of vllm VERSION's registry sdist, or None."""
    if data["upstream"]["version"] == version:
        return data["upstream"]["sdist"]["sha256"]
    release = data.get("releases", {}).get(version, {})
    return release.get("sdist", {}).get("sha256")


def vendored_trees(data: dict, target: str) -> list[str]:
    """The paths of targets.TARGET.vendored_trees: python trees the target's wheel
    carries that the source tree does not. Each entry needs a `path` under vllm/
    (a directory ends in "/") and a non-empty `reason`; a bad entry raises a
    ValueError that names its field."""
    key = f"targets.{target}.vendored_trees"
    entries = get(data, key)
    if not isinstance(entries, list):
        raise ValueError(f"{key} must be a list of {{ path = ..., reason = ... }} tables")
    paths = []
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be a table {{ path = ..., reason = ... }}, got {entry!r}")
        unknown = sorted(set(entry) - {"path", "reason"})
        if unknown:
            raise ValueError(f"{where} has unknown field(s) {', '.join(unknown)} (allowed: path, reason)")
        path = entry.get("path")
        if not isinstance(path, str) or not path.startswith("vllm/") or ".." in path.split("/"):
            raise ValueError(f"{where}.path must be a path under vllm/ (a directory ends in '/'), got {path!r}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{where}.reason is missing or empty: say why the wheel carries {path}")
        if path in paths:
            raise ValueError(f"{where}.path {path!r} is listed twice")
        paths.append(path)
    return paths


def shell(data: dict, target: str | None) -> str:
    up = data["upstream"]
    env = {
        "LOCK_VERSION": up["version"],
        "LOCK_DESCRIBE": up["describe"],
        "LOCK_COMMIT_ABBREV": up["commit_abbrev"],
        "LOCK_GIT_URL": up["git_url"],
        "LOCK_GIT_REF": up["git_ref"],
        "LOCK_BASE_TAG": up["base_tag"],
        "LOCK_BRANCH": up["branch"],
        "LOCK_SDIST_PACKAGE": up["sdist"]["package"],
        "LOCK_SDIST_FILE": up["sdist"]["filename"],
        "LOCK_SDIST_SHA256": up["sdist"]["sha256"],
    }
    if target is not None:
        targets = data.get("targets", {})
        if target not in targets:
            raise KeyError(
                f"unknown target {target!r}; {LOCK.name} defines: "
                + ", ".join(sorted(targets))
            )
        t = targets[target]
        env.update(
            LOCK_WHEEL_PACKAGE=t["package"],
            LOCK_WHEEL_VERSION=t["version"],
            LOCK_WHEEL_FILE=t["filename"],
            LOCK_WHEEL_SHA256=t["sha256"],
            LOCK_PYTHON=t["python"],
            LOCK_TORCH=t["torch"],
            LOCK_DIST_VERSION=t["dist_version"],
            LOCK_SKIP_REQS=" ".join(t.get("skip_requirements", [])),
        )
    return "\n".join(f"export {k}={shlex.quote(str(v))}" for k, v in env.items())


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    try:
        data = load()
        if argv[0] == "get" and len(argv) == 2:
            value = get(data, argv[1])
            print("\n".join(map(str, value)) if isinstance(value, list) else value)
        elif argv[0] == "sdist-sha256" and len(argv) == 2:
            sha = sdist_sha256(data, argv[1])
            if sha is None:
                print(f"lock.py: vllm {argv[1]} is not pinned in {LOCK.name}",
                      file=sys.stderr)
                return 3
            print(sha)
        elif argv[0] == "vendored" and len(argv) == 2:
            for path in vendored_trees(data, argv[1]):
                print(path)
        elif argv[0] == "shell" and len(argv) <= 2:
            print(shell(data, argv[1] if len(argv) == 2 else None))
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except (KeyError, ValueError, tomllib.TOMLDecodeError, OSError) as e:
        print(f"lock.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
