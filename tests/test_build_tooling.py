"""Tests of the build helpers (lock reader, wheel overlay, junit summary) and CI config."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "scripts" / "lib"
sys.path.insert(0, str(LIB))

import lock  # noqa: E402
import wheel_overlay  # noqa: E402


def test_lock_pins_the_release_and_both_targets():
    data = lock.load()
    assert data["upstream"]["version"] == "0.32.0"
    assert data["upstream"]["describe"] == "v0.32.0-0-g5df63a720"
    assert re.fullmatch(r"[0-9a-f]{64}", data["upstream"]["sdist"]["sha256"])
    for target in ("cpu", "cuda"):
        t = data["targets"][target]
        assert t["version"] == "0.32.0"
        assert re.fullmatch(r"[0-9a-f]{64}", t["sha256"])
    assert "cpu" in data["targets"]["cpu"]["dist_version"]


def test_lock_pins_the_rebase_targets():
    """Issue #20: the nightly rebase's release (0.33.0) is sha256-pinned, and a
    release that is not pinned is reported as such (exit 3)."""
    data = lock.load()
    for version in ("0.32.0", "0.33.0"):
        assert re.fullmatch(r"[0-9a-f]{64}", lock.sdist_sha256(data, version) or "")
    assert data["releases"]["0.33.0"]["sdist"]["filename"] == "vllm-0.33.0.tar.gz"
    cuda = data["releases"]["0.33.0"]["targets"]["cuda"]
    assert re.fullmatch(r"[0-9a-f]{64}", cuda["sha256"]) and cuda["filename"].endswith(".whl")
    proc = subprocess.run([sys.executable, str(LIB / "lock.py"), "sdist-sha256", "9.9.9"],
                          capture_output=True, text=True)
    assert proc.returncode == 3 and "not pinned" in proc.stderr


def test_lock_shell_rejects_unknown_target():
    proc = subprocess.run(
        [sys.executable, str(LIB / "lock.py"), "shell", "rocm"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "unknown target 'rocm'" in proc.stderr and "cpu" in proc.stderr


def make_wheel(path: Path, files: dict[str, bytes]) -> Path:
    meta = (
        "Metadata-Version: 2.1\nName: vllm-x\nVersion: 1.0\n"
        "Requires-Dist: torch==2.13.0\n"
        "Requires-Dist: numpy\n"
        'Requires-Dist: pytest; extra == "test"\n'
        'Requires-Dist: pywin32; sys_platform == "win32"\n'
        "Requires-Dist: triton @ https://example.invalid/t.whl\n"
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("vllm_x-1.0.dist-info/METADATA", meta)
        zf.writestr("vllm_x-1.0.dist-info/entry_points.txt", "[console_scripts]\n")
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def test_requirements_drop_extras_markers_urls_and_skipped(tmp_path):
    wheel = make_wheel(tmp_path / "w.whl", {})
    assert wheel_overlay.requirements(str(wheel), ["torch"]) == ["numpy"]


def test_diff_flags_unknown_python_differences(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "vllm").mkdir(parents=True)
    (tree / "vllm" / "a.py").write_text("same\n")
    (tree / "vllm" / "b.py").write_text("tree\n")
    wheel = make_wheel(
        tmp_path / "w.whl", {"vllm/a.py": b"same\n", "vllm/b.py": b"wheel\n"}
    )
    assert wheel_overlay.diff(str(wheel), str(tree), []) == 1
    assert "UNKNOWN diff: vllm/b.py" in capsys.readouterr().out
    assert wheel_overlay.diff(str(wheel), str(tree), ["vllm/b.py"]) == 0


def _vendor_case(tmp_path: Path, extra: dict[str, bytes]) -> tuple[Path, Path]:
    tree = tmp_path / "tree"
    (tree / "vllm" / "ext").mkdir(parents=True, exist_ok=True)
    (tree / "vllm" / "a.py").write_text("same\n")
    (tree / "vllm" / "ext" / "__init__.py").write_text("tracked\n")
    files = {"vllm/a.py": b"same\n", "vllm/ext/__init__.py": b"tracked\n",
             "vllm/ext/cute/k.py": b"vendored\n", "vllm/ext/one.py": b"vendored\n", **extra}
    return make_wheel(tmp_path / "w.whl", files), tree


def test_wheel_check_allows_only_the_vendored_trees_of_the_lock(tmp_path, capsys):
    """Issue #31: python files only in the wheel pass when they lie in a vendored_trees
    entry (a directory, or one file); a stray one beside them still fails, and the
    report file lists every file."""
    vendored = ["vllm/ext/cute/", "vllm/ext/one.py"]
    wheel, tree = _vendor_case(tmp_path, {})
    report = tmp_path / "check.txt"
    assert wheel_overlay.diff(str(wheel), str(tree), [], vendored, str(report)) == 0
    assert "vendored (vllm/ext/cute/): vllm/ext/cute/k.py" in report.read_text()
    wheel, tree = _vendor_case(tmp_path, {"vllm/ext/stray.py": b"x\n"})
    assert wheel_overlay.diff(str(wheel), str(tree), [], vendored, str(report)) == 1
    out = capsys.readouterr()
    assert "UNKNOWN only in wheel: vllm/ext/stray.py" in out.out
    assert str(report) in out.out and "vendored_trees" in out.out
    assert "UNKNOWN only in wheel: vllm/ext/stray.py" in report.read_text()
    # An entry without the trailing "/" is one file, not the directory's files.
    wheel, tree = _vendor_case(tmp_path, {})
    assert wheel_overlay.diff(str(wheel), str(tree), [], ["vllm/ext/cute", "vllm/ext/one.py"]) == 1
    assert "UNKNOWN only in wheel: vllm/ext/cute/k.py" in capsys.readouterr().out


def test_wheel_check_fails_on_a_stale_entry_and_a_diff_inside_a_vendored_tree(tmp_path, capsys):
    """A vendored_trees entry that matches no wheel file is stale (fails), as is a
    known_python_diffs entry that is identical; a file the tree has is compared
    even inside a vendored tree."""
    wheel, tree = _vendor_case(tmp_path, {})
    vendored = ["vllm/ext/cute/", "vllm/ext/one.py"]
    assert wheel_overlay.diff(str(wheel), str(tree), [], [*vendored, "vllm/gone/"]) == 1
    assert "STALE vendored_trees entry: vllm/gone/" in capsys.readouterr().out
    assert wheel_overlay.diff(str(wheel), str(tree), ["vllm/a.py"], vendored) == 1
    assert "STALE known_python_diffs entry: vllm/a.py" in capsys.readouterr().out
    (tree / "vllm" / "ext" / "cute").mkdir()
    (tree / "vllm" / "ext" / "cute" / "k.py").write_text("edited\n")
    assert wheel_overlay.diff(str(wheel), str(tree), [], vendored) == 1
    assert "UNKNOWN diff: vllm/ext/cute/k.py" in capsys.readouterr().out


def test_wheel_check_cli_takes_the_lock_lists(tmp_path):
    wheel, tree = _vendor_case(tmp_path, {"vllm/ext/stray.py": b"x\n"})
    cmd = [sys.executable, str(LIB / "wheel_overlay.py"), "diff", str(wheel), str(tree),
           "--vendored", "vllm/ext/cute/", "--vendored", "vllm/ext/one.py", "--where", "targets.cuda"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 1 and "targets.cuda.vendored_trees" in proc.stdout
    proc = subprocess.run([*cmd, "--vendored", "vllm/ext/stray.py"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("entry, field", [
    ({"path": "vllm/x/"}, "targets.cuda.vendored_trees[0].reason"),
    ({"path": "vllm/x/", "reason": " "}, "targets.cuda.vendored_trees[0].reason"),
    ({"path": "third_party/x/", "reason": "r"}, "targets.cuda.vendored_trees[0].path"),
    ({"path": "vllm/x/", "reason": "r", "why": "w"}, "targets.cuda.vendored_trees[0] has unknown field"),
    ("vllm/x/", "targets.cuda.vendored_trees[0] must be a table"),
])
def test_lock_vendored_trees_need_a_path_and_a_reason(entry, field):
    data = {"targets": {"cuda": {"vendored_trees": [entry]}}}
    with pytest.raises(ValueError, match=re.escape(field)):
        lock.vendored_trees(data, "cuda")


def test_lock_vendored_trees_are_what_upstream_builds_outside_git():
    """Every vendored tree of the lock is a path the pinned tree's .gitignore ignores
    (vLLM's build copies it in from other repositories) and no tracked file lies in it."""
    vllm_dir = ROOT / "vllm"
    data = lock.load()
    assert lock.vendored_trees(data, "cpu") == []
    paths = lock.vendored_trees(data, "cuda")
    assert "vllm/vllm_flash_attn/cute/" in paths
    base = data["upstream"]["base_tag"]
    for path in paths:
        probe = path + "x.py" if path.endswith("/") else path
        ignored = subprocess.run(["git", "-C", str(vllm_dir), "check-ignore", "-q", "--no-index", probe])
        assert ignored.returncode == 0, f"{path} is not git-ignored in vllm/"
        tracked = subprocess.run(["git", "-C", str(vllm_dir), "ls-tree", "-r", "--name-only", base, "--", path],
                                 capture_output=True, text=True, check=True).stdout
        assert tracked == "", f"{path} holds tracked files of {base}: {tracked.split()[:3]}"


def test_extract_replaces_the_files_of_another_wheel(tmp_path, capsys):
    """A --target switch: the files extracted from the other wheel (recorded in the
    manifest) are removed before this wheel's are extracted."""
    tree = tmp_path / "tree"
    (tree / "vllm").mkdir(parents=True)
    (tree / "vllm" / "a.py").write_text("source\n")
    manifest = tmp_path / "manifest"
    cuda = make_wheel(tmp_path / "cuda.whl", {"vllm/a.py": b"x", "vllm/_C.abi3.so": b"cuda",
                                              "vllm/fa/_fa2.so": b"fa", "vllm/fa/cute/k.py": b"k"})
    cpu = make_wheel(tmp_path / "cpu.whl", {"vllm/_C.abi3.so": b"cpu!"})
    wheel_overlay.extract(str(cuda), str(tree), str(manifest))
    assert (tree / "vllm" / "fa" / "cute" / "k.py").exists()
    wheel_overlay.extract(str(cuda), str(tree), str(manifest))  # same wheel: nothing new
    assert capsys.readouterr().out.split() == ["3", "0"]
    wheel_overlay.extract(str(cpu), str(tree), str(manifest))
    assert (tree / "vllm" / "_C.abi3.so").read_bytes() == b"cpu!"
    assert not (tree / "vllm" / "fa").exists()
    assert (tree / "vllm" / "a.py").read_text() == "source\n"
    assert manifest.read_text().splitlines() == ["cpu.whl", "vllm/_C.abi3.so"]


def test_extract_adds_kernels_and_never_overwrites_sources(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "vllm").mkdir(parents=True)
    (tree / "vllm" / "a.py").write_text("patched\n")
    wheel = make_wheel(
        tmp_path / "w.whl",
        {
            "vllm/a.py": b"original\n",
            "vllm/_C.abi3.so": b"\x7fELF",
            "vllm/x/y.json": b"{}",
        },
    )
    wheel_overlay.extract(str(wheel), str(tree))
    assert capsys.readouterr().out.strip() == "2"
    assert (tree / "vllm" / "a.py").read_text() == "patched\n"
    assert (tree / "vllm" / "_C.abi3.so").read_bytes() == b"\x7fELF"
    assert (tree / "vllm" / "x" / "y.json").exists()


def test_install_writes_a_cli_that_survives_the_spawned_engine(tmp_path):
    """`vllm serve` from the build venv (issue #20): the console script runs main()
    as a script, and not when vLLM's spawned engine process re-runs the parent's
    main script as __mp_main__ (unguarded, the child starts a second CLI and dies
    with "An attempt has been made to start a new process before ...")."""
    tree = tmp_path / "tree"
    cli_pkg = tree / "vllm" / "entrypoints" / "cli"
    cli_pkg.mkdir(parents=True)
    for d in (tree / "vllm", tree / "vllm" / "entrypoints", cli_pkg):
        (d / "__init__.py").write_text("")
    (cli_pkg / "main.py").write_text("def main():\n    print('vllm-main')\n    return 0\n")
    wheel = make_wheel(tmp_path / "w.whl", {})
    site, bin_dir = tmp_path / "site", tmp_path / "bin"
    site.mkdir()
    bin_dir.mkdir()
    wheel_overlay.install(str(wheel), str(tree), str(site), "0.0.1+cpu", str(bin_dir))
    cli = bin_dir / "vllm"
    assert (site / "vllm_dsl_overlay.pth").read_text().strip() == str(tree.resolve())
    assert cli.read_text().startswith(f"#!{sys.executable}\n")
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([str(cli)], capture_output=True, text=True, env=env)
    assert (run.returncode, run.stdout) == (0, "vllm-main\n"), run.stderr
    spawned = subprocess.run(
        [sys.executable, "-c", f"import runpy; runpy.run_path({str(cli)!r}, run_name='__mp_main__')"],
        capture_output=True, text=True, env=env)
    assert (spawned.returncode, spawned.stdout) == (0, ""), spawned.stderr


def run_summary(tmp_path: Path, xml: str):
    f = tmp_path / "r.xml"
    f.write_text(xml)
    return subprocess.run(
        [sys.executable, str(LIB / "junit_summary.py"), "t", str(f)],
        capture_output=True,
        text=True,
    )


def test_junit_summary_counts_and_fails_on_no_tests(tmp_path):
    ok = run_summary(
        tmp_path,
        '<testsuites><testsuite tests="5" failures="0" errors="0" skipped="1"/></testsuites>',
    )
    assert ok.returncode == 0 and "4 passed, 0 failed, 0 errors, 1 skipped" in ok.stdout
    bad = run_summary(
        tmp_path, '<testsuite tests="3" failures="1" errors="1" skipped="0"/>'
    )
    assert bad.returncode == 1 and "1 passed, 1 failed, 1 errors" in bad.stdout
    empty = run_summary(
        tmp_path, '<testsuite tests="0" failures="0" errors="0" skipped="0"/>'
    )
    assert empty.returncode == 1


def pipeline_commands(doc) -> list[str]:
    cmds = []
    for step in doc.get("steps", []):
        for key in ("command", "commands"):
            value = step.get(key)
            if isinstance(value, str):
                cmds.append(value)
            elif isinstance(value, list):
                cmds.extend(value)
    return cmds


def test_buildkite_pipeline_loads_and_names_existing_commands():
    doc = yaml.safe_load((ROOT / ".buildkite" / "pipeline.yaml").read_text())
    cmds = pipeline_commands(doc)
    assert cmds, "the pipeline runs nothing"
    built = False  # .venv/ exists once a step has run apply_and_build.sh
    for step in doc["steps"]:
        step_cmds = step.get("commands") or [step.get("command")]
        built = False
        for cmd in step_cmds:
            exe = cmd.split()[0]
            if exe.startswith(".venv/"):
                assert built, f"{cmd!r} runs before scripts/apply_and_build.sh"
            elif exe.startswith((".", "scripts/")):
                assert (ROOT / exe).exists(), (
                    f"{exe} named by the pipeline does not exist"
                )
            built = built or exe == "scripts/apply_and_build.sh"
    for cmd in cmds:
        words = cmd.split()
        # Paths handed to pytest must exist too.
        for word in words[1:]:
            if word.startswith("tests/"):
                assert (ROOT / word).exists(), f"{word} does not exist"
    labels = " ".join(s.get("label", "") for s in doc["steps"])
    assert "fastcheck" in labels and "GPU" in labels and "rebase" in labels


def test_nightly_rebuilds_and_tests_every_maintained_variant():
    """Each patches-variants/<version>/ has a scheduled step that rebases onto it
    with --test and fails the build on a new conflict (no soft_fail)."""
    doc = yaml.safe_load((ROOT / ".buildkite" / "pipeline.yaml").read_text())
    variants = sorted(
        p.name for p in (ROOT / "patches-variants").iterdir() if p.is_dir()
    )
    assert variants, "no maintained variant under patches-variants/"
    for version in variants:
        steps = [
            step
            for step in doc["steps"]
            if f"scripts/rebase.sh --onto {version} --test"
            in (step.get("commands") or [step.get("command")])
        ]
        assert steps, f"no pipeline step runs scripts/rebase.sh --onto {version} --test"
        for step in steps:
            assert step.get("if") == 'build.source == "schedule"', step["key"]
            assert not step.get("soft_fail"), f"{step['key']} must fail on a conflict"
            assert (step.get("commands") or [])[0].startswith(
                "scripts/apply_and_build.sh"
            ), f"{step['key']}: --test needs the build venv and kernels first"


@pytest.mark.skipif(
    shutil.which("check-jsonschema") is None
    and not (Path(sys.executable).parent / "check-jsonschema").exists(),
    reason="check-jsonschema is not installed",
)
def test_buildkite_pipeline_matches_buildkite_schema():
    exe = shutil.which("check-jsonschema") or str(
        Path(sys.executable).parent / "check-jsonschema"
    )
    proc = subprocess.run(
        [
            exe,
            "--builtin-schema",
            "vendor.buildkite",
            str(ROOT / ".buildkite" / "pipeline.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_upstream_test_area_lists_existing_paths():
    doc = yaml.safe_load((ROOT / ".buildkite" / "test_areas" / "dsl.yaml").read_text())
    assert doc["group"] and doc["steps"]
    for step in doc["steps"]:
        assert step["label"] and step["commands"]


def test_upstream_pr_doc_is_generated_and_current():
    import pr_doc

    doc = pr_doc.build(ROOT)
    series = (ROOT / "patches" / "series").read_text().split()
    # One table row per patch, in order.
    rows = [line for line in doc.splitlines() if re.match(r"\| \d+ \| ", line)]
    assert len(rows) == len(series)
    assert "{{" not in doc
    assert (ROOT / "docs" / "upstream-pr.md").read_text() == doc, (
        "docs/upstream-pr.md is stale: run scripts/pr-doc.sh"
    )


def test_each_pr_of_the_stack_has_a_generated_current_description():
    """docs/prs/pr-N.md per PR of patches/stack.toml: its title, one row per
    commit of that PR, nothing left to fill, no reference to this project,
    and the committed file is what the sources generate."""
    import pr_doc
    import stack

    prs = stack.load(ROOT / "patches")
    docs = pr_doc.build_prs(ROOT)
    assert len(docs) == len(prs)
    for i, pr in enumerate(prs, 1):
        path = ROOT / "docs" / "prs" / f"pr-{i}.md"
        doc = docs[path]
        assert doc.startswith(f"# {pr['title']}\n")
        rows = [line for line in doc.splitlines() if re.match(r"\| \d+ \| \[", line)]
        subjects = [pr_doc.patch_message(ROOT, name)[0] for name in pr["patches"]]
        assert [row.split(" | ")[1] for row in rows] == subjects
        assert pr_doc.lint(doc) == []
        assert path.read_text() == doc, f"{path.name} is stale: run scripts/pr-doc.sh"


def test_pr_stack_position_marks_this_pr_and_the_follow_ups():
    import pr_doc

    prs = [{"title": "a"}, {"title": "b"}, {"title": "c", "follow_up": True}]
    assert pr_doc.stack_position(prs, 1).splitlines() == [
        "PR 2 of a stack of 3, merged in this order:", "",
        "1. a", "2. b **(this PR)**", "3. c (a follow-up)"]


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("as issue 7 showed", "issues"),
        ("see issue #11", "issues"),
        ("patch 0037 fixes it", "patch number"),
        ("From `tests/gpu/results/2026-12-01/README.md`:", "path"),
        ("in benchmarks/results/x", "path"),
        ("built by scripts/gpu-host/build_eagle.py", "path"),
        ("listed in patches/series", "path"),
        ("this repository's GPU suite", "this project"),
    ],
)
def test_pr_description_lint_finds_references_to_this_project(line, what):
    import pr_doc

    problems = pr_doc.lint(f"# t\n\n## Purpose\n\n{line}\n")
    assert len(problems) == 1 and what in problems[0], problems
    # The same text inside a provenance comment is not visible upstream.
    assert pr_doc.lint(f"# t\n\n## Purpose\n\nok <!-- {line} -->\n") == []


def test_pr_description_lint_allows_upstream_references():
    import pr_doc

    text = "# t\n\n## Purpose\n\nSupersedes #35301; aligned with RFC #48202 and vllm/config/.\n"
    assert pr_doc.lint(text) == []


def test_measured_numbers_in_template_prose_need_a_committed_source(tmp_path):
    import pr_doc

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.md").write_text("raw\n")
    untraced = "## Design\n\nThe step takes 0.22 ms.\n"
    traced = "## Design\n\nThe step takes 0.22 ms. <!-- from runs/a.md -->\n"
    missing = "## Design\n\n- faster by 1.21×\n  <!-- from runs/b.md -->\n"
    items = "## Design\n\n- 5 µs <!-- from runs/a.md -->\n- and 12%\n"
    assert "0.22 ms" in pr_doc.untraced_numbers(untraced, tmp_path)[0]
    assert pr_doc.untraced_numbers(traced, tmp_path) == []
    assert "runs/b.md" in pr_doc.untraced_numbers(missing, tmp_path)[0]
    # Each list item needs its own source.
    assert ["12%" in p for p in pr_doc.untraced_numbers(items, tmp_path)] == [True]
    assert pr_doc.untraced_numbers("## D\n\nK = 4, 32 requests, 256 tokens\n", tmp_path) == []


def _gpu_runs(tmp_path, *runs: tuple[str, str]) -> Path:
    """GPU run folders under tmp_path's tests/gpu/results, each a README with
    one table row; returns the results folder."""
    results = tmp_path / "tests" / "gpu" / "results"
    for name, table in runs:
        (results / name).mkdir(parents=True)
        (results / name / "README.md").write_text(f"# run\n\n{table}\n")
    return results


def test_gpu_results_skip_a_run_that_is_not_the_series(tmp_path):
    import pr_doc

    runs = _gpu_runs(tmp_path, ("2026-01-01", "| a | ran on the series |"),
                     ("2026-01-02", "| b | ran with a patch since removed |"))
    assert "ran with a patch since removed" in pr_doc.gpu_results(tmp_path)
    newest = runs / "2026-01-02" / "README.md"
    newest.write_text(newest.read_text() + f"\n{pr_doc.NOT_THE_SERIES}\n")
    got = pr_doc.gpu_results(tmp_path)
    assert "ran on the series" in got and "2026-01-01" in got
    assert "since removed" not in got


def test_gpu_results_take_the_newest_session_and_name_its_gpu(tmp_path):
    import pr_doc

    runs = _gpu_runs(tmp_path, ("2026-12-05-h200-s34", "| a | older session |"),
                     ("2026-12-05-h100-s37", "| b | newer session |"),
                     ("2026-12-04-h200-s31", "| c | older day |"))
    got = pr_doc.gpu_results(tmp_path)
    assert "newer session" in got and "Measured on an H100:" in got
    (runs / "2026-12-05-h100-s37" / "README.md").write_text(
        f"# run\n\n| b | x |\n{pr_doc.NOT_THE_SERIES}\n")
    got = pr_doc.gpu_results(tmp_path)
    assert "older session" in got and "Measured on an H200:" in got


def test_gpu_results_quote_the_last_complete_run_after_an_incomplete_one(tmp_path):
    import pr_doc

    runs = _gpu_runs(tmp_path, ("2026-12-06-h100-s44", "| a | all passed |"),
                     ("2026-12-06-h100-s45-cut", "| b | cut at 300 s |"))
    assert "all passed" not in pr_doc.gpu_results(tmp_path)
    cut = runs / "2026-12-06-h100-s45-cut" / "README.md"
    cut.write_text(cut.read_text() + f"\n{pr_doc.INCOMPLETE}\n")
    got = pr_doc.gpu_results(tmp_path)
    assert got.index("cut at 300 s") < got.index("all passed")
    assert "did not reach every test" in got and "newest complete run" in got
    # Only the incomplete run: quoted alone.
    (runs / "2026-12-06-h100-s44" / "README.md").unlink()
    got = pr_doc.gpu_results(tmp_path)
    assert "cut at 300 s" in got and "complete run" not in got


def test_a_pr_without_a_description_template_is_named(tmp_path):
    import pr_doc

    root = _pr_doc_root(tmp_path, "# x\n\n## Purpose\n\ntext\n")
    (root / "patches" / "0001-a.patch").write_text(
        "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] A\n\nBody.\n---\n"
    )
    (root / "patches" / "series").write_text("0001-a.patch\n")
    (root / "patches" / "stack.toml").write_text(
        '[[pr]]\ntitle = "A"\npatches = ["0001-a.patch"]\n'
    )
    with pytest.raises(ValueError, match=r"docs/prs/pr-1\.template\.md"):
        pr_doc.build_prs(root)


def _pr_doc_root(tmp_path, template: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "upstream-pr.template.md").write_text(template)
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "series").write_text("")
    return tmp_path


def test_pr_doc_takes_the_newest_gpu_run_that_has_a_table(tmp_path):
    import pr_doc

    root = _pr_doc_root(tmp_path, "## Tests\n\n{{GPU_RESULTS}}\n")
    for name, text in (("2026-01-01", "# run\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\nafter\n"),
                       ("2026-02-01", "# a newer run, prose only\n")):
        (root / "tests" / "gpu" / "results" / name).mkdir(parents=True)
        (root / "tests" / "gpu" / "results" / name / "README.md").write_text(text)
    doc = pr_doc.build(root)
    assert "<!-- from tests/gpu/results/2026-01-01/README.md -->" in doc
    assert "| 1 | 2 |" in doc and "after" not in doc


@pytest.mark.parametrize("template", [
    "## Purpose\n\n## Design\n\ntext\n",
    "## Tests\n\n<!-- from x/README.md -->\n\n## Benchmark\n\ntext\n",
])
def test_pr_doc_refuses_an_empty_section(tmp_path, template):
    import pr_doc

    with pytest.raises(ValueError, match="empty section"):
        pr_doc.build(_pr_doc_root(tmp_path, template))


def test_mypy_filter_keeps_only_errors_the_series_introduces():
    import upstream_hooks

    out = "\n".join(
        [
            'a.py:10: error: "Tensor" not callable  [operator]',  # pin's, untouched
            'a.py:20: error: "Tensor" not callable  [operator]',  # same message, touched
            "a.py:21: error: Cannot assign to a method  [method-assign]",  # new
            "b.py:5: error: Incompatible types  [assignment]",  # untouched file line
        ]
    )
    added = {"a.py": {20, 21}, "b.py": {6}}
    new, old = upstream_hooks.new_mypy_errors(out, added)
    assert new == ["a.py:21: error: Cannot assign to a method  [method-assign]"]
    assert old == 3


def test_pr_test_files_leave_out_a_test_file_a_later_patch_deletes(tmp_path):
    """A PR whose later patch deletes a test file an earlier one added must not
    name it in its test command (pytest would fail on the missing file)."""
    import pr_doc

    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "0001-a.patch").write_text(
        "Subject: [PATCH] a\n\n---\n"
        "diff --git a/tests/test_old.py b/tests/test_old.py\nnew file mode 100644\n"
        "diff --git a/vllm/x.py b/vllm/x.py\n"
        "diff --git a/tests/test_kept.py b/tests/test_kept.py\nnew file mode 100644\n"
    )
    (patches / "0002-b.patch").write_text(
        "Subject: [PATCH] b\n\n---\n"
        "diff --git a/tests/test_old.py b/tests/test_old.py\n"
        "deleted file mode 100644\n--- a/tests/test_old.py\n+++ /dev/null\n"
        "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
    )
    assert pr_doc.test_files(tmp_path, ["0001-a.patch"]) == [
        "tests/test_old.py", "tests/test_kept.py"]
    assert pr_doc.test_files(tmp_path, ["0001-a.patch", "0002-b.patch"]) == [
        "tests/test_kept.py", "tests/test_new.py"]
