"""A distilled draft kept between sessions: what leaves the GPU host, and the draft
rebuilt from it on the next host, instead of distilling again (~5 minutes a session).

    python3 scripts/gpu-host/kept_draft.py export NAME DIR     # on the host, after distill.py
    python3 scripts/gpu-host/kept_draft.py assemble NAME KEPT   # on the next host

``export`` reads the distilled draft $GPU_HOST_ROOT/models/NAME (distill.py's output,
bf16) and writes into DIR what the distillation changed: ``NAME.safetensors`` (every
tensor but the token embedding, which distill.py freezes: the truncation's, ~57 MB
less), ``NAME.meta.tar.gz`` (config, tokenizer and distill.json) and ``SHA256SUMS``
of both. scripts/gpu-host/send-draft.sh sends them back in parts; scripts/keep-draft.sh
keeps them on the machine that packs the bundles, which stages them as data.

``assemble`` rebuilds $GPU_HOST_ROOT/models/NAME from the kept files in KEPT and the
truncation it was distilled from (models/smollm2-l<N>, ``draft_layers`` in the kept
distill.json, whose embedding distill.py never changed): the meta files, then the
weights, loaded as distill.py saved them, and checks that they hash to the kept
distill.json's ``weights_sha256`` (kd.weights_sha256). On any mismatch it exits 1
naming what differs and leaves no NAME folder, so the chain distills instead.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from offline_bundle import sha256_file  # noqa: E402

EMBED = "model.embed_tokens.weight"
META = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
        "special_tokens_map.json", "chat_template.jinja", "distill.json")


def models_dir() -> Path:
    return Path(os.environ.get("GPU_HOST_ROOT", "/tmp/gpuhost")) / "models"


def export(name: str, out: Path) -> None:
    from safetensors.torch import load_file, save_file

    src = models_dir() / name
    if not (src / "distill.json").is_file():
        raise SystemExit(f"export: {src} has no distill.json: run distill.py first "
                         "(the draft to keep is its output)")
    tensors = load_file(str(src / "model.safetensors"))
    if EMBED not in tensors:
        raise SystemExit(f"export: {src}/model.safetensors has no {EMBED}")
    kept = {k: v for k, v in tensors.items() if k != EMBED}
    out.mkdir(parents=True, exist_ok=True)
    save_file(kept, str(out / f"{name}.safetensors"), metadata={"format": "pt"})
    with tarfile.open(out / f"{name}.meta.tar.gz", "w:gz") as tar:
        for meta in META:
            if (src / meta).is_file():
                tar.add(src / meta, arcname=meta)
    files = [f"{name}.safetensors", f"{name}.meta.tar.gz"]
    (out / "SHA256SUMS").write_text(
        "".join(f"{sha256_file(out / f)}  {f}\n" for f in files))
    print(f"export: {name}: {len(kept)} tensors, "
          f"{(out / files[0]).stat().st_size} bytes without the embedding")


def assemble(name: str, kept: Path) -> None:
    import torch
    from kd import weights_sha256
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM

    layers = kept / f"{name}.safetensors"
    meta_tar = kept / f"{name}.meta.tar.gz"
    for f in (layers, meta_tar):
        if not f.is_file():
            raise SystemExit(f"assemble: no {f} (stage the kept draft's bundle data)")
    with tarfile.open(meta_tar) as tar:
        metas = {m.name: tar.extractfile(m).read() for m in tar.getmembers()
                 if m.isfile() and m.name in META}
    if "distill.json" not in metas:
        raise SystemExit(f"assemble: {meta_tar} has no distill.json")
    info = json.loads(metas["distill.json"])
    want = info["weights_sha256"]
    truncation = models_dir() / f"smollm2-l{info['draft_layers']}"
    if not (truncation / "model.safetensors").is_file():
        raise SystemExit(f"assemble: no {truncation}/model.safetensors (build_models.py "
                         "builds the truncation the draft was distilled from)")
    tensors = load_file(str(layers))
    # distill.py loads the truncation in float32 and saves the draft in bf16.
    embed = load_file(str(truncation / "model.safetensors"))[EMBED]
    tensors[EMBED] = embed.float().to(torch.bfloat16)
    dest = models_dir() / name
    tmp = dest.with_name(f".{name}.assembling")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for meta, data in metas.items():
        (tmp / meta).write_bytes(data)
    save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    model = AutoModelForCausalLM.from_pretrained(tmp, torch_dtype=torch.bfloat16)
    got = weights_sha256(model)
    if got != want:
        shutil.rmtree(tmp)
        raise SystemExit(f"assemble: {name} rebuilt from {kept} hashes to {got}, its "
                         f"distill.json says {want}: not used (the chain distills instead)")
    info["kept"] = {"from": str(kept), "layers_sha256": sha256_file(layers)}
    (tmp / "distill.json").write_text(json.dumps(info, indent=1))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    print(f"assemble: {dest} from the kept draft (weights sha256 {got[:16]}..., "
          f"first-position acceptance {info['first_position_acceptance']['after']:.3f} "
          "when distilled)")


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) != 3 or argv[0] not in ("export", "assemble"):
        print("kept_draft.py: export NAME DIR | assemble NAME KEPT (see --help)",
              file=sys.stderr)
        return 2
    verb, name, path = argv
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    (export if verb == "export" else assemble)(name, Path(path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
