"""Summarize pytest junit-xml files: `junit_summary.py LABEL FILE...`.

Prints one line per label with passed/failed/errors/skipped counts and exits 1
when anything failed or errored, or when no test ran at all (pytest's exit 5).

`junit_summary.py --by-file FILE...` prints a markdown table of the same counts
per test file instead (exit status as above).
"""

import sys
import xml.etree.ElementTree as ET


def counts(path: str) -> dict[str, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in total:
            total[key] += int(suite.get(key, 0))
    return total


def by_file(files: list[str]) -> int:
    rows: dict[str, list[int]] = {}
    for f in files:
        for case in ET.parse(f).getroot().iter("testcase"):
            path = case.get("classname", "?").replace(".", "/")
            # classname is module[.Class]: keep the test module's path.
            parts = path.split("/")
            while parts and not parts[-1].startswith("test_"):
                parts.pop()
            name = "/".join(parts) + ".py" if parts else path
            row = rows.setdefault(name, [0, 0, 0])
            if case.find("skipped") is not None:
                row[2] += 1
            elif case.find("failure") is not None or case.find("error") is not None:
                row[1] += 1
            else:
                row[0] += 1
    print("| test file | passed | failed | skipped |")
    print("| --- | ---: | ---: | ---: |")
    for name, (ok, bad, skip) in rows.items():
        print(f"| `{name}` | {ok} | {bad} | {skip} |")
    passed = sum(r[0] for r in rows.values())
    return 1 if any(r[1] for r in rows.values()) or passed == 0 else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--by-file"]:
        return by_file(argv[1:])
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    label, files = argv[0], argv[1:]
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for f in files:
        try:
            for k, v in counts(f).items():
                total[k] += v
        except (OSError, ET.ParseError) as e:
            print(f"{label}: no results ({e})")
            return 1
    failed = total["failures"] + total["errors"]
    passed = total["tests"] - failed - total["skipped"]
    print(
        f"{label}: {passed} passed, {total['failures']} failed, "
        f"{total['errors']} errors, {total['skipped']} skipped"
    )
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
