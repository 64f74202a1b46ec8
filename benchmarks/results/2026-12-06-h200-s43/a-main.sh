#!/usr/bin/env bash
# Session 43 (issue 29), command A, after b1-b8 and the rows were staged one
# call each (docs/gpu-host.md; the bundle packed this session from vllm dsl
# 448b56d, the 40-patch series: MANIFEST git_head). Carry .gpu-bundles/b9 and
# .gpu-bundles/prompts (66.6 of 67.1 MB with the tree). Returns in ~60 s; the
# long work runs in its own process sessions:
#   1. b9, check, host.txt (stage-last.sh);
#   2. the proxies chain in the background (proxies-start.sh --foreground
#      under setsid: it builds the target and the 16-layer truncation itself,
#      no suite runs: no GPU code changed since session 42's suite, which ran
#      this tree);
#   3. once the proxies' draft is distilled (before its scaling ends): the
#      drafter's per-position traces on both ShareGPT splits, 128 prompts x
#      256 tokens each (benchmarks/calibration.py --trace; for
#      benchmarks/trace_stop_sim.py: whether a stop rule that sees more than
#      a calibration table can reach issue 29's 1.10x at one request);
#   4. the verdict A/B s43p on the series as it is now (last measured on the
#      proxies in sessions 31 and 34, on older code): arms fixed in advance,
#      sd2,sd3,sd4,target,dsl4 (dsl4 = DSL's default config, cap 4), c = 16,
#      8, 4, 2, 1 (one request last, as in session 34), one wave of 256-token
#      requests a round (4 requests at c < 4), 1 warm + 8 ABBA rounds, test
#      split, prefix caching off, the DSL engine started alone; it starts once
#      the proxies are built, the traces written and the GPU quiet ($R/go).
# TRACE_NL=4 (with CONC=none): the small pair's 4-layer draft traced instead
# (distilled in ~2-3 min, where the proxies' takes ~5-6). CONC (default
# 16,8,4,2,1; none: the traces alone) and ROUNDS (default 8) shorten the A/B where the
# session's device time is short. Then collect.sh (this folder) until it says
# s43p ended.
#   python3 benchmarks/verdict.py --dsl-arm dsl4 --out verdict.json proxies=abab.json.gz
set -uo pipefail
R=/tmp/s43p; mkdir -p "$R"
root=$(GPU_HOST_ROOT=/tmp/gpuhost bash scripts/gpu-host/stage-last.sh "$R" .gpu-bundles/b9) || exit 1
source "$root/env.sh"
M=$root/models
ls "$M"/self-rows-*.pt > /dev/null || { echo "no rows in $M: stage them first (the rows call)"; exit 1; }
NL=${TRACE_NL:-16}
export R M NL
if [[ $NL == 16 ]]; then
  setsid bash -c 'bash scripts/gpu-host/proxies-start.sh --foreground > "$R/proxies.out" 2>&1' \
    < /dev/null > /dev/null 2>&1 &
  done_line="^distill-l16-self rc="
else  # TRACE_NL=4, the traces alone: the small pair's draft, no proxies
  [[ ${CONC:-} == none ]] || { echo "TRACE_NL=$NL needs CONC=none (no proxies are built)"; exit 2; }
  setsid bash -c 'mkdir -p /tmp/proxies; t0=$(date +%s)
    DRAFT_LAYERS=$NL python3 scripts/gpu-host/build_models.py > "$R/build_models.log" 2>&1 &&
    DATA=self NL=$NL python3 scripts/gpu-host/distill.py > "$R/distill-l$NL-self.log" 2>&1
    echo "distill-l$NL-self rc=$? $(( $(date +%s) - t0 ))s" >> /tmp/proxies/chain.log
    echo 0 > /tmp/proxies/done' < /dev/null > /dev/null 2>&1 &
  done_line="^distill-l$NL-self rc="
fi
export done_line
setsid bash -c 'end=$(( $(date +%s) + 900 ))
  until grep -q "$done_line" /tmp/proxies/chain.log 2>/dev/null || (( $(date +%s) > end )); do sleep 2; done
  rc=0
  for split in tune test; do
    timeout 240 python3 benchmarks/calibration.py --target "$M/smollm2-135m" --draft "$M/smollm2-l$NL-self" \
      --prompts .gpu-bundles/prompts --dataset sharegpt-$split --num-prompts 128 --max-tokens 256 \
      --out "$R/calibration-l$NL-self-$split.json" --trace "$R/trace-l$NL-self-$split.json.gz" \
      > "$R/calibration-$split.log" 2>&1 || rc=$?
  done
  echo $rc > "$R/traces.rc"
  until [[ -f /tmp/proxies/done ]] || (( $(date +%s) > end )); do sleep 2; done
  cp /tmp/proxies/*.log "$R/" 2>/dev/null
  grep -h "sha256" /tmp/proxies/distill-l16-self.log "$R"/distill-l*-self.log > "$R/draft-sha.txt" 2>/dev/null
  for _ in $(seq 60); do
    [[ -z $(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null) ]] && break
    sleep 1
  done
  touch "$R/go"' < /dev/null > /dev/null 2>&1 &
if [[ ${CONC:-} == none ]]; then  # the traces alone
  sleep 5; tar czf "$OUT/a.tgz" -C /tmp s43p; echo "no A/B (CONC=none)"; exit 0
fi
E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64, "jit_monitor_verbose": true, "cudagraph_metrics": true}'
GPU_HOST_ROOT=$root AB_TIMEOUT_S=1500 AB_WAIT_FILE=$R/go AB_WAIT_S=1000 \
  bash scripts/gpu-host/ab-start.sh s43p -- --models "$M" \
  --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --concurrency "${CONC:-16,8,4,2,1}" \
  --prompts .gpu-bundles/prompts --max-tokens 256 --waves 1 --base-requests 4 \
  --engine "$E" --out abab.json --arms 'sd2,sd3,sd4,target,dsl4' \
  --rounds "${ROUNDS:-8}" --warm-rounds 1 --dsl-starts-alone \
  > "$R/ab-start.log" 2>&1 || { cat "$R/ab-start.log"; exit 1; }
sleep 45
tar czf "$OUT/a.tgz" -C /tmp s43p
echo "proxies: $(tr '\n' ' ' < /tmp/proxies/chain.log 2>/dev/null); $(tail -n 2 "$R/proxies.out" 2>/dev/null | tr '\n' ' ')"
