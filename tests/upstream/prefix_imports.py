"""pytest plugin of scripts/check-series.sh: the per-prefix import check, in the
process that then runs the prefix's tests (one vLLM import per prefix, not two).

Imports ``vllm`` and the modules named in ``DSL_PREFIX_IMPORTS`` (space-separated)
before any test is collected; when one does not import, prints the traceback
and ends pytest with exit status ``IMPORT_FAILED`` (9), which check-series
reports as "does not import" rather than as failing tests.

A prefix with no tests to run gets the same check without pytest:
``python prefix_imports.py MODULE...`` (exit status 1 when one does not import).
"""

import importlib
import os
import sys
import traceback

import pytest

IMPORT_FAILED = 9


def import_modules(names: list[str]) -> None:
    """Import ``vllm``, then each module of ``names``."""
    importlib.import_module("vllm")
    for name in names:
        importlib.import_module(name)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    mods = os.environ.get("DSL_PREFIX_IMPORTS")
    if mods is None:
        return
    try:
        import_modules(mods.split())
    except BaseException:  # noqa: BLE001 - any failure to import is the finding
        traceback.print_exc()
        pytest.exit("import check failed", returncode=IMPORT_FAILED)


if __name__ == "__main__":
    import_modules(sys.argv[1:])
