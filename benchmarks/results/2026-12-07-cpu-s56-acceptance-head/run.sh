#!/usr/bin/env bash
# Session 56 (issue 29), on this CPU (2 cores, ~25 min): would a learned
# acceptance head on the drafter's hidden state (SpecDec++) stop drafts
# better than its confidence? The proxies' own draft (the kept 16-layer
# self-distilled draft, assembled and hash-checked by kept_draft.py onto the
# truncation build_models.py makes from the staged GGUF) and target, fp32.
#   DATA=/tmp/ah2 bash run.sh collect   # the two splits' positions (~12 min each)
#   DATA=/tmp/ah2 bash run.sh fit       # the heads and the replays (~2 min)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
py=${PYTHON:-$repo/.venv/bin/python}
data=${DATA:-/tmp/ah2}
root=${GPU_HOST_ROOT:-/tmp/cpuhost}
case "${1:-}" in
  collect)
    mkdir -p "$root/models" "$data"
    cp "${DSL_CACHE:-$HOME/.cache/vllm-dsl}"/offline/model-*.gguf "$root/models/smollm2.gguf"
    GPU_HOST_ROOT=$root DRAFT_LAYERS=16 "$py" "$repo/scripts/gpu-host/build_models.py"
    GPU_HOST_ROOT=$root "$py" "$repo/scripts/gpu-host/kept_draft.py" assemble smollm2-l16-self \
      "${DSL_CACHE:-$HOME/.cache/vllm-dsl}/kept-drafts/smollm2-l16-self"
    for s in tune test; do
      "$py" "$repo/benchmarks/acceptance_head.py" collect --models "$root/models" \
        --target smollm2-135m --draft smollm2-l16-self --prompts "$repo/.gpu-bundles/prompts" \
        --dataset "sharegpt-$s" --num-prompts 192 --max-tokens 192 --max-prompt-tokens 384 \
        --out "$data/$s.pt" --trace "$data/trace-$s.json.gz"
    done ;;
  fit)
    cp "$data"/trace-{tune,test}.json.gz "$here/"
    for v in "hidden" "no-hidden --no-hidden" "pca8 --pca 8" "pca32 --pca 32"; do
      read -r name flags <<< "$v"
      # shellcheck disable=SC2086
      "$py" "$repo/benchmarks/acceptance_head.py" fit --tune "$data/tune.pt" --test "$data/test.pt" \
        --out-dir "$data/fit-$name" $flags 2> /dev/null | tee "$here/fit-$name.txt"
      cp "$data/fit-$name/head.json" "$here/head-$name.json"
    done
    { for costs in 1:6.378/1.280 1:4.69/1.09; do
        for cap in 4 8; do
          echo "== costs $costs, cap $cap: the drafter's confidence (raw, calibrated, online)"
          python3 "$repo/benchmarks/trace_stop_sim.py" --tune "$data/trace-tune.json.gz" \
            --test "$data/trace-test.json.gz" --cap "$cap" --costs "$costs" | sed -n '/^test/,/^tune/p' | sed '$d'
          for name in hidden no-hidden pca8 pca32; do
            echo "-- the rule reading fit-$name's prediction (rule-raw), calibrated again (rule-calibrated)"
            python3 "$repo/benchmarks/trace_stop_sim.py" --tune "$data/fit-$name/head-tune.json.gz" \
              --test "$data/fit-$name/head-test.json.gz" --cap "$cap" --costs "$costs" \
              | sed -n '/^test/,/^tune/p' | grep -E ' (rule|thr)-(raw|calibrated) '
          done
        done
      done; } > "$here/replay.txt" ;;
  *) echo "run.sh: collect | fit (see the comments at the top)" >&2; exit 2 ;;
esac
