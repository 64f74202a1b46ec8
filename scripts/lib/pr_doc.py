"""Build the upstream PR descriptions from their templates, patches/ and the
committed results: docs/upstream-pr.md (the whole series) and one description
per PR of patches/stack.toml, docs/prs/pr-N.md from docs/prs/pr-N.template.md.

Usage: pr_doc.py ROOT [--check]
  --check   fail when a description is not what the sources generate

Every description is checked before it is written (`lint`): no empty section,
no unfilled placeholder, no reference to this project (its issues, patch
numbers, paths: what an upstream reader cannot open; provenance goes into
`<!-- from PATH -->` comments), and every measured number in a template's prose
(ms, µs, %, ×) sits in a paragraph or list item whose `<!-- from PATH -->`
comment names a committed file.
"""

from __future__ import annotations

import email
import re
import sys
from email import policy
from pathlib import Path


# Visible text that points into this project rather than upstream vLLM.
PRIVATE_REFERENCES = [
    (r"\bissues? #?\d+\b", "one of this project's issues"),
    (r"\b00\d\d\b", "a patch number of this series"),
    (
        r"tests/gpu/results|benchmarks/results|patches-(?:wip|variants)|"
        r"rebase-resolutions|scripts/gpu-host|\.gpu-bundles|(?<![\w/])patches/",
        "a path of this project",
    ),
    (r"\bthis (?:repository|project)\b|\bvllm-dsl\b", "this project"),
]
# A measured quantity in prose: 0.22 ms, 5 µs, +17%, 1.21×.
MEASURED = re.compile(r"\d(?:[\d.]*\d)?\s?(?:ms|µs|us|%|×)(?!\w)")
PROVENANCE = re.compile(r"<!--\s*from\s+(\S+?)\s*-->")


def _visible(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def patch_message(root: Path, name: str) -> tuple[str, str]:
    """(subject, first body paragraph) of patches/NAME."""
    msg = email.message_from_bytes(
        (root / "patches" / name).read_bytes(), policy=policy.default
    )
    subject = re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(str(msg["Subject"]).split()))
    body = msg.get_content().split("\n---\n", 1)[0]
    first = " ".join(body.strip().split("\n\n", 1)[0].split())
    return subject, first


def changes_table(root: Path, names: list[str]) -> str:
    """One row per patch: number, subject, what it changes (first body paragraph)."""
    rows = ["| # | commit | what and why |", "| --- | --- | --- |"]
    for i, name in enumerate(names, 1):
        subject, first = patch_message(root, name)
        rows.append(f"| {i} | {subject} | {first.replace('|', '/')} |")
    return "\n".join(rows)


def series_table(root: Path) -> str:
    import stack

    return changes_table(root, stack.series(root / "patches"))


def test_files(root: Path, names: list[str]) -> list[str]:
    """The test files the patches NAMES add or change, in order of first touch,
    less those a later one of them deletes (the PR's test command must run on
    its own tree)."""
    files: list[str] = []
    for name in names:
        text = (root / "patches" / name).read_text(errors="replace")
        for block in re.split(r"^(?=diff --git )", text, flags=re.M):
            m = re.match(r"diff --git a/(\S+) b/", block)
            if not m:
                continue
            path = m.group(1)
            if not (path.startswith("tests/") and path.endswith(".py")):
                continue
            if re.search(r"^deleted file mode ", block, re.M):
                if path in files:
                    files.remove(path)
            elif path not in files:
                files.append(path)
    return files


def tests_list(root: Path, names: list[str]) -> str:
    files = test_files(root, names)
    if not files:
        return "_These commits add or change no test file._"
    lines = [f"- `{f}`" for f in files]
    runnable = [f for f in files if "/test_" in f]
    if runnable:
        lines += ["", "```bash", "pytest " + " \\\n  ".join(runnable), "```"]
    return "\n".join(lines)


def stack_table(root: Path) -> str:
    """The PRs the series is grouped into (patches/stack.toml), in merge order."""
    import stack

    if not (root / "patches" / "stack.toml").is_file():
        return "_The series is not grouped into PRs yet._"
    return (
        "Merged in order as these PRs (commit numbers as in the table below):\n\n"
        + stack.table(_stack(root), notes=False)
    )


def _stack(root: Path) -> list[dict]:
    import stack

    patch_dir = root / "patches"
    prs = stack.load(patch_dir)
    errors = stack.validate(stack.series(patch_dir), prs)
    if errors:
        raise ValueError(f"patches/stack.toml does not match patches/series: {errors}")
    return prs


def stack_position(prs: list[dict], index: int) -> str:
    """The stack's PRs in merge order, this one marked."""
    lines = [f"PR {index + 1} of a stack of {len(prs)}, merged in this order:", ""]
    for i, pr in enumerate(prs):
        mark = " **(this PR)**" if i == index else ""
        follow = " (a follow-up)" if pr.get("follow_up") else ""
        lines.append(f"{i + 1}. {pr['title']}{follow}{mark}")
    return "\n".join(lines)


# A GPU run's README carries this when the code it ran is not the series' (a patch
# it tested has since left): its results are not quoted as the series'.
NOT_THE_SERIES = "<!-- pr-doc: not the series -->"
# A GPU run's README carries this when the run did not reach every test (a time
# limit cut it): it is quoted, and so is the newest complete run before it.
INCOMPLETE = "<!-- pr-doc: incomplete run -->"


_RUN_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-(h100|h200))?(?:-s(\d+))?")
_GPU_NAMES = {"h100": "an H100", "h200": "an H200"}


def _run_fields(readme: Path) -> tuple[str, int, str | None]:
    """A run folder's date, session number and GPU (``h100``, ``h200`` or
    None), from its name."""
    m = _RUN_NAME.match(readme.parent.name)
    return (m.group(1), int(m.group(3) or 0), m.group(2)) if m else ("", 0, None)


def _run_order(readme: Path) -> tuple[str, int, str]:
    """Date, then session number: ``2026-12-05-h100-s37`` is newer than
    ``2026-12-05-h200-s34`` whatever GPU either ran on."""
    date, session, _ = _run_fields(readme)
    return date, session, readme.parent.name


def gpu_results(root: Path) -> str:
    """The results table of the newest committed GPU run that has one (the first
    table of its README), skipping runs marked ``NOT_THE_SERIES``, with the GPU
    its folder names (``-h100-``, ``-h200-``). Where that run is marked
    ``INCOMPLETE``, the newest complete run before it follows."""
    quoted = []
    for run in sorted((root / "tests" / "gpu" / "results").glob("*/README.md"),
                      key=_run_order, reverse=True):
        text = run.read_text()
        if NOT_THE_SERIES in text:
            continue
        table = []
        for line in text.splitlines():
            if line.startswith("|"):
                table.append(line)
            elif table:
                break
        if not table:
            continue
        gpu = _GPU_NAMES.get(_run_fields(run)[2], "one GPU")
        incomplete = INCOMPLETE in text
        if incomplete:
            note = ", a run that did not reach every test"
        else:
            note = " (the newest complete run)" if quoted else ""
        quoted.append(
            f"<!-- from {run.relative_to(root)} -->\nMeasured on {gpu}{note}:\n\n"
            + "\n".join(table)
        )
        if not incomplete:
            break
    if not quoted:
        return "_No GPU run with a results table committed yet._"
    return "\n\n".join(quoted)


def _benchmark_reports(root: Path) -> list[Path]:
    return sorted((root / "benchmarks" / "results").glob("*/report.md"))


def benchmark_status(root: Path) -> str:
    reports = _benchmark_reports(root)
    if not reports:
        return "not answered yet: no benchmark report is committed."
    return f"see the Benchmark section. <!-- from {reports[-1].relative_to(root)} -->"


def benchmark_summary(root: Path) -> str:
    """The goals, noise floor and test-split TPOT table of the newest report."""
    reports = _benchmark_reports(root)
    if not reports:
        return "_No benchmark report committed yet._"
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
    head = (
        f"<!-- from {reports[-1].relative_to(root)} -->\n"
        "Measured on an H200 (per-arm statistics, plots and the limits of the run are "
        "in the raw data that comes with it):"
    )
    blocks = [head] + ["\n".join(b) for b in (goals, noise, table) if b]
    return "\n\n".join(blocks)


def lint(doc: str) -> list[str]:
    """What keeps ``doc`` from going upstream as it is."""
    problems = [
        f"empty section {m.group(1)!r}"
        for m in re.finditer(r"^(## .+)\n\s*(?=^## |\Z)", _visible(doc), re.M)
    ]
    problems += [f"unfilled placeholder {p}" for p in re.findall(r"\{\{\w+\}\}", doc)]
    for line in _visible(doc).splitlines():
        for pattern, what in PRIVATE_REFERENCES:
            m = re.search(pattern, line, re.I)
            if m:
                problems.append(f"{what} ({m.group(0)!r}): {line.strip()[:100]}")
    return problems


def untraced_numbers(template: str, root: Path) -> list[str]:
    """Paragraphs and list items of a template's prose that state a measured
    number without a ``<!-- from PATH -->`` comment naming a committed file."""
    problems = []
    for block in re.split(r"\n\s*\n", template):
        for item in re.split(r"\n(?=- |\| )", block):
            numbers = MEASURED.findall(_visible(item))
            if not numbers:
                continue
            sources = PROVENANCE.findall(item)
            if not sources:
                problems.append(f"{numbers[0]!r} has no <!-- from PATH -->: {item.strip()[:80]}")
            problems += [f"{src} (named by a from-comment) is not a file" for src in sources
                         if not (root / src).is_file()]
    return problems


def _render(root: Path, template_path: Path, fields: dict[str, str]) -> str:
    template = template_path.read_text()
    doc = template
    for key, value in fields.items():
        doc = doc.replace("{{" + key + "}}", value)
    problems = untraced_numbers(template, root) + lint(doc)
    if problems:
        raise ValueError(
            f"{template_path.relative_to(root)}: " + "; ".join(problems)
        )
    return doc


def _shared_fields(root: Path) -> dict[str, str]:
    return {
        "GPU_RESULTS": gpu_results(root),
        "BENCHMARK_STATUS": benchmark_status(root),
        "BENCHMARK": benchmark_summary(root),
    }


def build(root: Path, shared: dict[str, str] | None = None) -> str:
    """docs/upstream-pr.md: the whole series in one description. ``shared``:
    the result fields (``_shared_fields``), when the caller has read them."""
    return _render(
        root,
        root / "docs" / "upstream-pr.template.md",
        {
            "SERIES": series_table(root),
            "STACK": stack_table(root),
            **(shared or _shared_fields(root)),
        },
    )


def build_prs(root: Path, shared: dict[str, str] | None = None) -> dict[Path, str]:
    """docs/prs/pr-N.md for each PR of patches/stack.toml, from its template."""
    prs = _stack(root)
    shared = shared or _shared_fields(root)
    docs: dict[Path, str] = {}
    for i, pr in enumerate(prs):
        template = root / "docs" / "prs" / f"pr-{i + 1}.template.md"
        if not template.is_file():
            raise ValueError(
                f"PR {i + 1} ({pr['title']}) has no description template: write "
                f"{template.relative_to(root)}"
            )
        names = pr["patches"]
        fields = {
            "TITLE": pr["title"],
            "STACK_POSITION": stack_position(prs, i),
            "CHANGES": changes_table(root, names),
            "TESTS": tests_list(root, names),
            **shared,
        }
        docs[root / "docs" / "prs" / f"pr-{i + 1}.md"] = _render(root, template, fields)
    return docs


def build_all(root: Path) -> dict[Path, str]:
    shared = _shared_fields(root)  # read the committed results once
    return {
        root / "docs" / "upstream-pr.md": build(root, shared),
        **build_prs(root, shared),
    }


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = Path(argv[0])
    try:
        docs = build_all(root)
    except ValueError as e:
        print(f"pr-doc: {e}", file=sys.stderr)
        return 1
    if "--check" in argv[1:]:
        stale = [p for p, doc in docs.items() if not p.exists() or p.read_text() != doc]
        for p in stale:
            print(f"{p.relative_to(root)} is stale: run scripts/pr-doc.sh", file=sys.stderr)
        return 1 if stale else 0
    for p, doc in docs.items():
        p.write_text(doc)
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
