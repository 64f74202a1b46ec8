"""Seed an offline Hugging Face cache with the vendored config-only repos.

Upstream unit tests (the scheduler's, for one) build model configs for hub ids
such as facebook/opt-125m; only config.json is read. Usage:
    HF_HOME=DIR python seed_hf_cache.py
"""

import os
import shutil
from pathlib import Path

REVISION = "0" * 40
CONFIGS = Path(__file__).resolve().parent / "hf-configs"


def seed(hf_home: Path) -> list[Path]:
    seeded = []
    for repo_dir in sorted(p for p in CONFIGS.iterdir() if p.is_dir()):
        base = hf_home / "hub" / f"models--{repo_dir.name}"
        snapshot = base / "snapshots" / REVISION
        snapshot.mkdir(parents=True, exist_ok=True)
        (base / "refs").mkdir(exist_ok=True)
        (base / "refs" / "main").write_text(REVISION)
        for f in repo_dir.iterdir():
            shutil.copy(f, snapshot / f.name)
        seeded.append(snapshot)
    return seeded


if __name__ == "__main__":
    for path in seed(Path(os.environ["HF_HOME"])):
        print("seeded", path)
