"""scripts/lib/series_refs.py: the lines a patch series adds to vLLM name no
path or name of this project; its message, removed lines and context may."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "lib" / "series_refs.py"

CLEAN = """From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: A <a@b>
Subject: [PATCH] [Spec Decode] Clean (measured in benchmarks/results/x)

Signed-off-by: A <a@b>
---
diff --git a/vllm/a.py b/vllm/a.py
index 1..2 100644
--- a/vllm/a.py
+++ b/vllm/a.py
@@ -1,3 +1,3 @@
 # context naming benchmarks/results/old is not added
-# removed: benchmarks/results/gone
+# added: measured on an H200
 x = 1
--
2.43.0
"""

DIRTY = """From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001
From: A <a@b>
Subject: [PATCH] [Spec Decode] Dirty

Signed-off-by: A <a@b>
---
diff --git a/vllm/b.py b/vllm/b.py
new file mode 100644
index 0..3
--- /dev/null
+++ b/vllm/b.py
@@ -0,0 +1,3 @@
+\"\"\"Measured on an H200 (``benchmarks/results/2026-12-04-h200-s23``).\"\"\"
+# see scripts/gpu-host/suite.sh
+y = 2
diff --git a/docs/c.md b/docs/c.md
index 4..5 100644
--- a/docs/c.md
+++ b/docs/c.md
@@ -1 +1,2 @@
 title
+Built by vllm-dsl.
--
2.43.0
"""


def _series(tmp_path, patches):
    d = tmp_path / "patches"
    d.mkdir()
    for name, text in patches.items():
        (d / name).write_text(text)
    (d / "series").write_text("".join(f"{name}\n" for name in patches))
    return d


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_a_clean_series_passes(tmp_path):
    r = _run(str(_series(tmp_path, {"0001-clean.patch": CLEAN})))
    assert r.returncode == 0 and r.stdout == "", r.stdout


def test_each_added_line_that_names_the_project_is_reported(tmp_path):
    d = _series(tmp_path, {"0001-clean.patch": CLEAN, "0002-dirty.patch": DIRTY})
    r = _run(str(d))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 3, lines
    assert lines[0].startswith("0002-dirty.patch: vllm/b.py: a path of this project: ")
    assert "h200-s23" in lines[0]
    assert lines[1].startswith("0002-dirty.patch: vllm/b.py: a path of this project: # see")
    assert lines[2] == "0002-dirty.patch: docs/c.md: this project: Built by vllm-dsl."


def test_the_committed_series_is_clean():
    r = _run(str(ROOT / "patches"))
    assert r.returncode == 0, r.stdout


def test_usage():
    assert _run("--help").returncode == 0
    r = _run()
    assert r.returncode == 2 and "PATCH_DIR" in r.stderr
