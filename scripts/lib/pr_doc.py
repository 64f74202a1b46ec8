"""Build docs/upstream-pr.md from its template, patches/ and the committed results.

Usage: pr_doc.py ROOT [--check]
  --check   fail when docs/upstream-pr.md is not what the sources generate
"""

from __future__ import annotations

import email
import re
import sys
from email import policy
from pathlib import Path


def series_table(root: Path) -> str:
    """One row per patch: number, subject, what it changes (first body paragraph)."""
    series = (root / "patches" / "series").read_text().split()
    rows = ["| # | patch | what and why |", "| --- | --- | --- |"]
    for i, name in enumerate(series, 1):
        msg = email.message_from_bytes(
            (root / "patches" / name).read_bytes(), policy=policy.default
        )
        subject = re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(str(msg["Subject"]).split()))
        body = msg.get_content().split("\n---\n", 1)[0]
        first = " ".join(body.strip().split("\n\n", 1)[0].split())
        rows.append(f"| {i} | {subject} | {first.replace('|', '/')} |")
    return "\n".join(rows)


def stack_table(root: Path) -> str:
    """The PRs the series is grouped into (patches/stack.toml), in merge order."""
    import stack

    patch_dir = root / "patches"
    if not (patch_dir / "stack.toml").is_file():
        return "_The series is not grouped into PRs yet (`patches/stack.toml`)._"
    prs = stack.load(patch_dir)
    errors = stack.validate(stack.series(patch_dir), prs)
    if errors:
        raise ValueError(f"patches/stack.toml does not match patches/series: {errors}")
    return (
        "Merged in order as these PRs (`patches/stack.toml`; patch numbers as in the "
        "table below):\n\n" + stack.table(prs)
    )


def gpu_results(root: Path) -> str:
    """The results table of the newest committed GPU run that has one (the first
    table of its README)."""
    for run in sorted((root / "tests" / "gpu" / "results").glob("*/README.md"),
                      reverse=True):
        table = []
        for line in run.read_text().splitlines():
            if line.startswith("|"):
                table.append(line)
            elif table:
                break
        if table:
            return f"From `{run.relative_to(root)}`:\n\n" + "\n".join(table)
    return "_No GPU run with a results table committed yet._"


def _benchmark_reports(root: Path) -> list[Path]:
    return sorted((root / "benchmarks" / "results").glob("*/report.md"))


def benchmark_status(root: Path) -> str:
    reports = _benchmark_reports(root)
    if not reports:
        return "not answered yet: no benchmark report is committed (`benchmarks/results/`)."
    return f"see `{reports[-1].relative_to(root)}` (summary above)."


def benchmark_summary(root: Path) -> str:
    """The goals, noise floor and test-split TPOT table of the newest report."""
    reports = _benchmark_reports(root)
    if not reports:
        return "_No benchmark report committed yet (`benchmarks/results/`)._"
    goals, noise, table, section = [], [], [], ""
    for line in reports[-1].read_text().splitlines():
        if line.startswith("## "):
            section = line
        elif line.startswith("**Noise"):
            noise.append(line)
        elif section.startswith("## Goals") and line.startswith("- "):
            goals.append(line)
        elif section.startswith("## TPOT") and line.startswith("|"):
            table.append(line)
    head = f"From `{reports[-1].relative_to(root)}` (plots, per-arm statistics, and the limits of this run in the README next to it):"
    blocks = [head] + ["\n".join(b) for b in (goals, noise, table) if b]
    return "\n\n".join(blocks)


def build(root: Path) -> str:
    text = (root / "docs" / "upstream-pr.template.md").read_text()
    doc = (
        text.replace("{{SERIES}}", series_table(root))
        .replace("{{STACK}}", stack_table(root))
        .replace("{{GPU_RESULTS}}", gpu_results(root))
        .replace("{{BENCHMARK_STATUS}}", benchmark_status(root))
        .replace("{{BENCHMARK}}", benchmark_summary(root))
    )
    empty = [m.group(1) for m in re.finditer(r"^(## .+)\n\s*(?=^## |\Z)", doc, re.M)]
    empty += [m.group(0).strip() for m in re.finditer(r"^From `[^`]+`:\s*$\n\s*\n(?=\s*(## |\Z))",
                                                       doc, re.M)]
    if empty:
        raise ValueError(f"empty section(s) in the PR description: {empty}")
    return doc


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = Path(argv[0])
    out = root / "docs" / "upstream-pr.md"
    doc = build(root)
    if "--check" in argv[1:]:
        if not out.exists() or out.read_text() != doc:
            print("docs/upstream-pr.md is stale: run scripts/pr-doc.sh", file=sys.stderr)
            return 1
        return 0
    out.write_text(doc)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
