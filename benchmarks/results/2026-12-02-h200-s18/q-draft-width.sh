#!/usr/bin/env bash
# Session 18 (2026-12-02), command Q, issued at once after P on the same warm host (the
# proxies built by P): the draft width per batch size (patches-wip/dsl-draft-width,
# vllm branch wip-draft-width at d084c6ae; its ten changed files of the vllm package,
# carried as .gpu-bundles/wip/draft-width.tgz, laid over a copy of the staged series
# package) against SD K = 3 and 2 and target-only. Every arm runs the wip's code (SD
# and target-only do not reach its paths); compare with P (the series) through the
# common arms. Arms fixed in advance: dsl4 (base), sd3, sd2, target; c = 64, 32, 8, 1;
# 3 ABBA rounds; otherwise as P. Run as one command line (recorded here as it ran).
set -uo pipefail; source /tmp/gpuhost/env.sh; rm -rf /tmp/vsrc-w && cp -a /tmp/gpuhost/vsrc /tmp/vsrc-w && tar xzf .gpu-bundles/wip/draft-width.tgz -C /tmp/vsrc-w && export PYTHONPATH=/tmp/vsrc-w:/tmp/gpuhost/site && python3 -c "import vllm.v1.spec_decode.dynamic.verify_width as v; print(v.__file__)" | tee $OUT/q.log; E='{"kv_cache_memory_bytes": 6442450944, "gpu_memory_utilization": 0.155, "max_num_seqs": 64}'; T0=$(date +%s); PYTHONUNBUFFERED=1 timeout 580 python3 benchmarks/abab.py --models /tmp/gpuhost/models --target smollm2-135m-x8b --draft smollm2-l16-self-x1b --prompts .gpu-bundles/prompts --max-tokens 256 --base-requests 8 --engine "$E" --out "$OUT/abab-w.json" --arms dsl4,sd3,sd2,target --dsl-starts-alone --concurrency 64,32,8,1 --rounds 3 > "$OUT/abab-w.log" 2>&1; echo "abab rc=$? $(( $(date +%s) - T0 ))s" | tee -a $OUT/q.log; grep -h "prices each draft step\|width\|TPOT\|engine step median" "$OUT/abab-w.log" | tail -30
