#!/usr/bin/env bash
# Session 46: bench.py on the series before this change (0041's tip, a worktree
# at BEFORE) and after it (the vllm/ checkout), alternating processes, ROUNDS
# rounds of --reps 5 each -> before.jsonl, after.jsonl; then table.py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PY:-/work/main/.venv/bin/python}
before=${BEFORE:?BEFORE: a worktree of the series before the change}
after=${AFTER:-$here/../../../vllm}
rm -f "$here/before.jsonl" "$here/after.jsonl"
for _ in $(seq "${ROUNDS:-6}"); do
  (cd /tmp && PYTHONPATH=$before "$py" "$here/bench.py" --reps 5 2>/dev/null | tail -n 1) >> "$here/before.jsonl"
  (cd /tmp && PYTHONPATH=$after "$py" "$here/bench.py" --reps 5 2>/dev/null | tail -n 1) >> "$here/after.jsonl"
done
"$py" "$here/table.py" | tee "$here/table.txt"
