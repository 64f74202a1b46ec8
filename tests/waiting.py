"""Waiting in the GPU-host script tests for what a script started in its own
process session writes once it has ended (a go file, a done marker)."""

from __future__ import annotations

import time
from pathlib import Path


def wait_for(path: Path, seconds: float = 20) -> bool:
    """True once ``path`` exists; False if it does not within ``seconds``."""
    end = time.time() + seconds
    while time.time() < end:
        if path.exists():
            return True
        time.sleep(0.05)
    return False


def wait_for_text(path: Path, seconds: float = 15) -> str:
    """``path``'s text, stripped, once it has any; fails the test if it has
    none within ``seconds``."""
    end = time.time() + seconds
    while time.time() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")
