"""Summarize pytest junit-xml files: `junit_summary.py LABEL FILE...`.

Prints one line per label with passed/failed/errors/skipped counts and exits 1
when anything failed or errored, or when no test ran at all (pytest's exit 5).
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


def main(argv: list[str]) -> int:
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
