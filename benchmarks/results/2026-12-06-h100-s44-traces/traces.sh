#!/usr/bin/env bash
# Session 44 (issue 29): the drafters' per-position traces on one H100, without
# vLLM (the H200 could not be started; the proxies' A/B needs its memory).
# After b6-b9 and the rows were staged one call each (bash
# scripts/install-offline.sh .gpu-bundles/bN), this call carries
# .gpu-bundles/b5 and .gpu-bundles/prompts. Session 43's lean-traces.sh with
# the draft's depth a list: for each NL in TRACE_NLS (default "16 4"): the
# truncation (build_models.py DRAFT_LAYERS=NL), its distillation on the
# target's continuations (distill.py DATA=self NL=NL, STEPS as the proxies'
# chain: 900 for 16, distill.py's default for 4), then calibration.py --trace
# on both ShareGPT splits (128 prompts x 256 tokens). NL=16 is the proxies'
# draft before its scaling (top-1 agreement with the scaled one: scaled.json);
# NL=4 the small pair's. Back: traces.tgz, what was written by DEADLINE_S
# (default 560).
set -uo pipefail
T0=$(date +%s); DL=${DEADLINE_S:-560}
R=/tmp/s44t; mkdir -p "$R"
export GPU_HOST_ROOT=/tmp/gpuhost HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
M=$GPU_HOST_ROOT/models
pack() { tar czf "$OUT/traces.tgz" -C /tmp s44t; echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( DL - ($(date +%s) - T0) )); }
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1
ls -la "$M" > "$R/models.txt" 2>&1
[[ -f $M/smollm2.gguf && -f $M/train.json ]] \
  || { tail -5 "$R/stage-b5.log"; pack "GGUF or train.json missing"; exit 1; }
# without the kept rows (their call was refused as over 64 MiB) distill.py
# generates the target's continuations itself (~2-3 min more)
python3 -c "import gguf" 2>/dev/null || {
  w=$(ls .gpu-bundles/b5/parts/*-gguf-*.whl); cp "$w" "/tmp/${w##*/[0-9][0-9][0-9]-}"  # pip wants the wheel's own name
  python3 -m pip install -q --no-deps --no-index --target /tmp/gg "/tmp/${w##*/[0-9][0-9][0-9]-}" \
    > "$R/gguf.log" 2>&1; export PYTHONPATH=/tmp/gg; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)"; } > "$R/host.txt" 2>&1
for NL in ${TRACE_NLS:-16 4}; do
  steps=600; [[ $NL == 16 ]] && steps=900
  DRAFT_LAYERS=$NL timeout "$(left)" python3 scripts/gpu-host/build_models.py > "$R/build_models-l$NL.log" 2>&1 \
    || { tail -5 "$R/build_models-l$NL.log"; pack "build_models l$NL failed"; exit 1; }
  echo "l$NL built $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
  DATA=self NL=$NL STEPS=$steps timeout "$(left)" python3 scripts/gpu-host/distill.py > "$R/distill-l$NL-self.log" 2>&1 \
    || { tail -5 "$R/distill-l$NL-self.log"; pack "distill l$NL failed"; exit 1; }
  cp "$M/smollm2-l$NL-self/distill.json" "$R/distill-l$NL-self.json" 2>/dev/null
  echo "l$NL distilled $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
  for split in test tune; do
    timeout "$(left)" python3 benchmarks/calibration.py --target "$M/smollm2-135m" --draft "$M/smollm2-l$NL-self" \
      --prompts .gpu-bundles/prompts --dataset sharegpt-$split --num-prompts 128 --max-tokens 256 \
      --out "$R/calibration-l$NL-self-$split.json" --trace "$R/trace-l$NL-self-$split.json.gz" \
      > "$R/calibration-l$NL-$split.log" 2>&1
    echo "l$NL $split rc=$? $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
    pack "$(tr '\n' ' ' < "$R/times.txt")" > /dev/null
  done
done
pack "$(tr '\n' ' ' < "$R/times.txt")"
