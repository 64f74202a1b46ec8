#!/usr/bin/env bash
# Session 43, the traces alone on a short device budget (no vLLM staged):
# after b6-b9 were staged one call each (bash scripts/install-offline.sh
# .gpu-bundles/bN: the GGUF's parts) and the rows call, this call carries
# .gpu-bundles/b5 (the GGUF's last part, train.json, the gguf wheel) and
# .gpu-bundles/prompts. On the host's own torch and transformers: the target
# and its 4-layer truncation (build_models.py), the small pair's draft
# distilled on the target's continuations (distill.py DATA=self NL=4, 600
# steps, the kept rows), then the drafter's traces on both ShareGPT splits
# (calibration.py --trace, 128 prompts x 256 tokens). Back: traces.tgz,
# whatever was written by the deadline (DEADLINE_S, default 540).
set -uo pipefail
T0=$(date +%s); DL=${DEADLINE_S:-540}
R=/tmp/s43t; mkdir -p "$R"
export GPU_HOST_ROOT=/tmp/gpuhost HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
M=$GPU_HOST_ROOT/models
pack() { tar czf "$OUT/traces.tgz" -C /tmp s43t; echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( DL - ($(date +%s) - T0) )); }
bash scripts/install-offline.sh .gpu-bundles/b5 > "$R/stage-b5.log" 2>&1
ls -la "$M" > "$R/models.txt" 2>&1
[[ -f $M/smollm2.gguf && -f $M/train.json && -n $(ls "$M"/self-rows-*.pt 2>/dev/null) ]] \
  || { tail -5 "$R/stage-b5.log"; pack "GGUF, train.json or rows missing"; exit 1; }
python3 -c "import gguf" 2>/dev/null || {
  python3 -m pip install -q --no-deps --no-index --target /tmp/gg .gpu-bundles/b5/parts/014-gguf-*.whl \
    > "$R/gguf.log" 2>&1; export PYTHONPATH=/tmp/gg; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)"; } > "$R/host.txt" 2>&1
DRAFT_LAYERS=4 timeout "$(left)" python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 \
  || { tail -5 "$R/build_models.log"; pack "build_models failed"; exit 1; }
echo "built $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
DATA=self NL=4 timeout "$(left)" python3 scripts/gpu-host/distill.py > "$R/distill-l4-self.log" 2>&1 \
  || { tail -5 "$R/distill-l4-self.log"; pack "distill failed"; exit 1; }
cp "$M/smollm2-l4-self/distill.json" "$R/distill-l4-self.json" 2>/dev/null
echo "distilled $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
for split in test tune; do
  timeout "$(left)" python3 benchmarks/calibration.py --target "$M/smollm2-135m" --draft "$M/smollm2-l4-self" \
    --prompts .gpu-bundles/prompts --dataset sharegpt-$split --num-prompts 128 --max-tokens 256 \
    --out "$R/calibration-l4-self-$split.json" --trace "$R/trace-l4-self-$split.json.gz" \
    > "$R/calibration-$split.log" 2>&1
  echo "$split rc=$? $(( $(date +%s) - T0 ))s" >> "$R/times.txt"
done
pack "$(tr '\n' ' ' < "$R/times.txt")"
