"""A scratch checkout for the GPU-host chain scripts' tests (small-start.sh,
proxies-start.sh, suite.sh): the real script runs from it, with stand-ins for
the Python build scripts it starts, and a staged root whose env.sh is one
line (a marker variable, or a PATH with a stand-in interpreter first)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def scratch_checkout(tmp_path: Path, stand_ins: dict[str, str],
                     env_line: str) -> tuple[Path, Path, Path]:
    """``checkout`` (scripts/gpu-host/ with ``stand_ins``, name -> text, and
    .gpu-bundles/prompts), the staged ``root`` (its env.sh is ``env_line``)
    and an empty ``record`` folder for the stand-ins to write to."""
    checkout = tmp_path / "checkout"
    gpu_host = checkout / "scripts" / "gpu-host"
    gpu_host.mkdir(parents=True)
    for name, text in stand_ins.items():
        (gpu_host / name).write_text(text)
    (checkout / ".gpu-bundles" / "prompts").mkdir(parents=True)
    root = tmp_path / "gpuhost"
    root.mkdir()
    (root / "env.sh").write_text(env_line)
    record = tmp_path / "record"
    record.mkdir()
    return checkout, root, record


def start(script: Path, checkout: Path, env: dict, *args: str):
    """Run ``script`` from ``checkout`` (30 s at most), its output captured."""
    return subprocess.run(["bash", str(script), *args], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=30)
