#!/usr/bin/env bash
# Session 60 (CPU): patch 0050's ceiling in session 47's simulation of
# 64-request waves (../2026-12-06-cpu-s47-served-width-start/sim.py, 40 seeds,
# both loop models): 0050's served_width.py without a ceiling
# (as 0049), with the H100 engine's start-up table of session 47 (s47r: cap 4
# times 64 rows at 2.201 ms; cap 8 times up to 56 rows), and with a ceiling at
# the simulation's own draft step (the tightest case: start-up = served).
# Output: sim.txt.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=benchmarks/results/2026-12-07-cpu-s60-draft-step-ceiling
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 0050 on vllm/'s dsl branch, found by its subject (its hash changes with every apply).
rev=$(git -C vllm log --format=%H -1 --grep='DSL served width: price a draft step at most as start-up timed it' dsl)
[[ -n "$rev" ]] || { echo "sim.sh: no patch 0050 on vllm/'s dsl branch: run scripts/apply.sh" >&2; exit 1; }
git -C vllm show "$rev:vllm/v1/spec_decode/dynamic/served_width.py" > "$tmp/sw_0050.py"
# ms by rows, session 47's H100 (s47r-abab.log.gz, "prices each draft step").
cap4='{1: 1.286, 2: 1.296, 3: 1.315, 4: 1.323, 5: 1.341, 8: 1.383, 10: 1.476, 12: 1.486, 16: 1.487, 20: 1.644, 24: 1.633, 32: 1.712, 40: 1.878, 48: 1.972, 56: 2.123, 64: 2.201}'
cap8='{1: 1.280, 2: 1.299, 3: 1.319, 4: 1.327, 5: 1.343, 6: 1.363, 7: 1.371, 8: 1.384, 9: 1.471, 10: 1.479, 12: 1.488, 14: 1.469, 16: 1.486, 18: 1.620, 20: 1.643, 24: 1.635, 28: 1.687, 32: 1.737, 36: 1.894, 40: 1.903, 48: 1.954, 56: 2.114}'
wrap() {  # wrap NAME TABLE_EXPR: 0050 whose controllers take TABLE_EXPR(cap) (ms by rows) at start
  cp "$tmp/sw_0050.py" "$tmp/sw_$1.py"
  cat >> "$tmp/sw_$1.py" <<PY


_Served = ServedWidthController


class ServedWidthController(_Served):  # type: ignore[no-redef]
    def __init__(self, sizes, max_num_reqs, num_spec_tokens, *args, **kwargs):
        super().__init__(sizes, max_num_reqs, num_spec_tokens, *args, **kwargs)
        table = $2
        self.set_draft_step_ceilings({rows: ms / 1e3 for rows, ms in table.items()})
PY
}
wrap 0050_s47_table "($cap4 if num_spec_tokens == 4 else $cap8)"
# The simulation's draft step, D(B) = 1.22 + 0.58 B / 64 ms (sim.py's step_ms).
wrap 0050_at_served "{b: 1.22 + 0.58 * b / 64 for b in sizes}"
for loop in rule measured; do
  python3 benchmarks/results/2026-12-06-cpu-s47-served-width-start/sim.py --loop "$loop" --seeds 40 \
    --module "$tmp/sw_0050.py" --module "$tmp/sw_0050_s47_table.py" --module "$tmp/sw_0050_at_served.py"
done > "$here/sim.txt"
