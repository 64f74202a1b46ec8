# SPDX-License-Identifier: Apache-2.0
"""Slow garbage collections of every Python process of a benchmark, timed.

Put this folder first on ``PYTHONPATH`` and set ``DSL_GC_TRACE_DIR``: every Python
process started with that environment (the benchmark client, each engine core it
spawns, their compile workers) imports this module at start-up (``site`` imports the
first ``sitecustomize`` on the path) and registers a ``gc.callbacks`` hook. Each
collection that takes ``DSL_GC_TRACE_MIN_MS`` (default 1.0) or more appends one
line to ``DIR/gc-<pid>.tsv``::

    <start, CLOCK_MONOTONIC s>\\t<ms>\\t<generation>\\t<collected>

and every collection counts into per-generation totals, appended as a ``#sum`` line
at most every 5 s (and at exit): ``#sum\\t<now>\\t<n0> <n1> <n2>\\t<ms0> <ms1> <ms2>``.
The file's first line names the process (``#proc\\t<pid>\\t<argv>``). Times are
``time.monotonic()``, the clock ``time.perf_counter()`` reads on Linux, so they line
up with a benchmark's step timestamps and across processes.

Why: a closed-loop A/B (``benchmarks/abab.py``) sees a few steps 5-50x the median in
every round of every arm (session 20). vLLM's engine cores freeze their heaps after
start-up but keep collecting what serving allocates; ``VLLM_GC_DEBUG=1`` would log
every collection of one engine (and list the collected generation's objects first,
which perturbs what it measures). This hook costs two clock reads per collection and
writes only the slow ones, so every arm can carry it.

Without ``DSL_GC_TRACE_DIR`` it does nothing. Any other ``sitecustomize`` later on
``sys.path`` (a distribution's) is still imported.
"""

import gc
import os
import sys
import time


def _chain_next_sitecustomize() -> None:
    """Import the ``sitecustomize`` this one shadows, if there is one."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


class _Trace:
    SUM_EVERY_S = 5.0

    def __init__(self, directory: str, min_ms: float):
        self.directory = directory
        self.min_s = min_ms / 1e3
        self.reset()

    def reset(self) -> None:
        """A fresh trace for this process (also in a forked child, which
        inherits the parent's totals and open file otherwise)."""
        self.counts = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self.t0: float | None = None
        self.last_sum = time.monotonic()
        self.file = None

    def _open(self):
        if self.file is None:
            path = os.path.join(self.directory, f"gc-{os.getpid()}.tsv")
            self.file = open(path, "a", buffering=1)  # noqa: SIM115
            argv = " ".join(sys.argv)[:300].replace("\t", " ")
            self.file.write(f"#proc\t{os.getpid()}\t{argv}\n")
        return self.file

    def _write_sum(self, now: float) -> None:
        self.last_sum = now
        self._open().write(
            "#sum\t{:.6f}\t{} {} {}\t{:.3f} {:.3f} {:.3f}\n".format(
                now, *self.counts, *self.ms))

    def callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.t0 = time.monotonic()
            return
        if self.t0 is None:
            return
        now = time.monotonic()
        t0, self.t0 = self.t0, None
        gen = info.get("generation", 0)
        self.counts[gen] += 1
        self.ms[gen] += 1e3 * (now - t0)
        if now - t0 >= self.min_s:
            self._open().write(
                f"{t0:.6f}\t{1e3 * (now - t0):.3f}\t{gen}\t{info.get('collected', 0)}\n")
        if now - self.last_sum >= self.SUM_EVERY_S:
            self._write_sum(now)

    def at_exit(self) -> None:
        if any(self.counts):
            self._write_sum(time.monotonic())


def _install() -> None:
    directory = os.environ.get("DSL_GC_TRACE_DIR")
    if not directory:
        return
    raw = os.environ.get("DSL_GC_TRACE_MIN_MS", "1.0")
    try:
        min_ms = float(raw)
    except ValueError:
        raise SystemExit(
            f"DSL_GC_TRACE_MIN_MS: '{raw}' is not a number of milliseconds") from None
    os.makedirs(directory, exist_ok=True)
    trace = _Trace(directory, min_ms)
    gc.callbacks.append(trace.callback)
    os.register_at_fork(after_in_child=trace.reset)
    import atexit

    atexit.register(trace.at_exit)


_install()
_chain_next_sitecustomize()
