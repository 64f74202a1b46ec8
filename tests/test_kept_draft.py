"""scripts/gpu-host/kept_draft.py on CPU with a tiny random Llama: a distilled draft
exported without its embedding and assembled again from the truncation hashes to the
distill.json's weights_sha256, and a kept file or truncation that differs is refused
with no draft left behind (so the proxies' chain distills instead)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "kept_draft.py"
sys.path.insert(0, str(ROOT / "scripts" / "gpu-host"))
from kd import weights_sha256  # noqa: E402


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, env={**os.environ, "GPU_HOST_ROOT": str(root)})


@pytest.fixture
def host(tmp_path):
    """models/smollm2-l2 (a random 2-layer Llama with tied embeddings, float32, as
    build_models.py leaves a truncation) and models/smollm2-l2-self distilled from it
    as distill.py leaves a draft: every tensor but the embedding changed, saved in
    bf16, distill.json with the in-memory model's weights_sha256."""
    models = tmp_path / "models"
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, tie_word_embeddings=True)
    torch.manual_seed(0)
    trunc = transformers.LlamaForCausalLM(cfg)
    trunc.save_pretrained(models / "smollm2-l2")
    draft = transformers.LlamaForCausalLM.from_pretrained(models / "smollm2-l2",
                                                          torch_dtype=torch.float32)
    with torch.no_grad():
        for name, p in draft.named_parameters():
            if name != "model.embed_tokens.weight":
                p.add_(0.01 * torch.randn_like(p))
    draft = draft.to(torch.bfloat16).eval()
    out = models / "smollm2-l2-self"
    draft.save_pretrained(out)
    sha = weights_sha256(draft)
    (out / "distill.json").write_text(json.dumps({
        "draft_layers": 2, "weights_sha256": sha,
        "first_position_acceptance": {"before": 0.1, "after": 0.5}}))
    return tmp_path, sha


def test_exported_draft_assembles_to_the_same_weights(host):
    root, sha = host
    out = _run(root, "export", "smollm2-l2-self", str(root / "sent"))
    assert out.returncode == 0, out.stderr
    sent = root / "sent"
    assert sorted(p.name for p in sent.iterdir()) == [
        "SHA256SUMS", "smollm2-l2-self.meta.tar.gz", "smollm2-l2-self.safetensors"]
    from safetensors.torch import load_file
    assert "model.embed_tokens.weight" not in load_file(
        str(sent / "smollm2-l2-self.safetensors"))
    shutil.rmtree(root / "models" / "smollm2-l2-self")

    out = _run(root, "assemble", "smollm2-l2-self", str(sent))
    assert out.returncode == 0, out.stderr
    assert f"weights sha256 {sha[:16]}" in out.stdout
    rebuilt = root / "models" / "smollm2-l2-self"
    model = transformers.AutoModelForCausalLM.from_pretrained(rebuilt,
                                                              torch_dtype=torch.bfloat16)
    assert weights_sha256(model) == sha
    info = json.loads((rebuilt / "distill.json").read_text())
    assert info["weights_sha256"] == sha and info["kept"]["from"] == str(sent)


def test_a_kept_file_or_truncation_that_differs_is_refused(host):
    root, sha = host
    assert _run(root, "export", "smollm2-l2-self", str(root / "sent")).returncode == 0
    from safetensors.torch import load_file, save_file
    shutil.rmtree(root / "models" / "smollm2-l2-self")
    layers = root / "sent" / "smollm2-l2-self.safetensors"
    tensors = load_file(str(layers))
    good = {k: v.clone() for k, v in tensors.items()}
    tensors["model.norm.weight"] += 1
    save_file(tensors, str(layers), metadata={"format": "pt"})
    out = _run(root, "assemble", "smollm2-l2-self", str(root / "sent"))
    assert out.returncode == 1 and "hashes to" in out.stderr and sha in out.stderr
    assert not (root / "models" / "smollm2-l2-self").exists()
    assert not list((root / "models").glob(".smollm2-l2-self*"))

    # The right layers over another truncation's embedding: refused too.
    save_file(good, str(layers), metadata={"format": "pt"})
    trunc = root / "models" / "smollm2-l2" / "model.safetensors"
    t = load_file(str(trunc))
    t["model.embed_tokens.weight"] = t["model.embed_tokens.weight"] * 2
    save_file(t, str(trunc), metadata={"format": "pt"})
    out = _run(root, "assemble", "smollm2-l2-self", str(root / "sent"))
    assert out.returncode == 1 and "hashes to" in out.stderr


def test_bad_input_names_what_to_do(host):
    root, _ = host
    out = _run(root, "export", "smollm2-l9-self", str(root / "sent"))
    assert out.returncode == 1 and "has no distill.json: run distill.py first" in out.stderr
    out = _run(root, "assemble", "smollm2-l2-self", str(root / "nothing"))
    assert out.returncode == 1 and "stage the kept draft" in out.stderr
    assert _run(root, "keep").returncode == 2
    assert _run(root, "--help").returncode == 0


def _send_all(root: Path, tmp: Path) -> list[Path]:
    """scripts/gpu-host/send-draft.sh 1, 2, ... until it says all were sent,
    each into its own OUT (as each device call's files_at)."""
    (root / "env.sh").write_text(f"export PATH={Path(sys.executable).parent}:$PATH\n")
    env = {**os.environ, "GPU_HOST_ROOT": str(root), "SEND_DIR": str(tmp / "send"),
           "SEND_PART": "4K"}
    outs = []
    for n in range(1, 20):
        out = tmp / f"files_at{n}"
        out.mkdir()
        r = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-host" / "send-draft.sh"),
                            str(n), "smollm2-l2-self"], cwd=ROOT, capture_output=True,
                           text=True, env={**env, "OUT": str(out)})
        assert r.returncode == 0, r.stderr
        outs.append(out)
        if "all sent" in r.stdout:
            return outs
        assert f"next: bash scripts/gpu-host/send-draft.sh {n + 1} smollm2-l2-self" in r.stdout
    raise AssertionError("send-draft.sh never said all were sent")


def test_a_draft_sent_kept_packed_and_staged_assembles_on_the_next_host(host, tmp_path):
    root, sha = host
    outs = _send_all(root, tmp_path)
    # 3 parts a call (a call brings back at most 64 MiB in 16 MiB files).
    assert len(outs) >= 2 and len(list(outs[0].glob("*.safetensors.??"))) == 3
    assert (outs[0] / "SHA256SUMS").is_file() and not (outs[1] / "SHA256SUMS").exists()
    env = {**os.environ, "KEPT_DRAFTS": str(tmp_path / "store"),
           "DRAFT_RECORDS": str(tmp_path / "records")}
    keep = [str(ROOT / "scripts" / "keep-draft.sh")]
    # A missing group is one error, nothing kept.
    r = subprocess.run(["bash", *keep, str(outs[0])], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "a part is missing or corrupt" in r.stderr
    assert not (tmp_path / "records").exists()
    r = subprocess.run(["bash", *keep, *map(str, reversed(outs))], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "commit the record" in r.stdout
    record = json.loads((tmp_path / "records" / "smollm2-l2-self.json").read_text())
    assert record["weights_sha256"] == sha
    assert sorted(record["files"]) == ["smollm2-l2-self.meta.tar.gz",
                                       "smollm2-l2-self.safetensors"]

    sys.path.insert(0, str(ROOT / "scripts" / "lib"))
    import offline_bundle as ob
    args, missing = ob.kept_drafts(tmp_path / "records", tmp_path / "store")
    assert missing == [] and len(args) == 2
    assert args[0].endswith("=models/kept/smollm2-l2-self/smollm2-l2-self.meta.tar.gz")
    lib = str(ROOT / "scripts" / "lib" / "offline_bundle.py")
    r = subprocess.run([sys.executable, lib, "pack", "--out", str(tmp_path / "chunks"),
                        "--cap", "60KB", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    host2 = tmp_path / "host2"
    shutil.copytree(root / "models" / "smollm2-l2", host2 / "models" / "smollm2-l2")
    r = subprocess.run([sys.executable, lib, "stage", str(host2),
                        *map(str, sorted((tmp_path / "chunks").glob("b*")))],
                       capture_output=True, text=True)
    kept = host2 / "models" / "kept" / "smollm2-l2-self"
    assert (kept / "smollm2-l2-self.safetensors").is_file(), r.stdout + r.stderr
    out = _run(host2, "assemble", "smollm2-l2-self", str(kept))
    assert out.returncode == 0, out.stderr
    model = transformers.AutoModelForCausalLM.from_pretrained(
        host2 / "models" / "smollm2-l2-self", torch_dtype=torch.bfloat16)
    assert weights_sha256(model) == sha

    # A kept file that changed here is not packed: one line naming what to do.
    (tmp_path / "store" / "smollm2-l2-self" / "smollm2-l2-self.meta.tar.gz").write_bytes(b"x")
    args, missing = ob.kept_drafts(tmp_path / "records", tmp_path / "store")
    assert args == [] and len(missing) == 1
    assert "smollm2-l2-self.meta.tar.gz not in" in missing[0]
    assert "send-draft.sh" in missing[0] and "keep-draft.sh" in missing[0]
    bad = subprocess.run([sys.executable, lib, "pack", "--out", str(tmp_path / "c2"),
                          "--data", "nofile=models/x"], capture_output=True, text=True)
    assert bad.returncode == 1 and "--data 'nofile=models/x': no file nofile" in bad.stderr
    bad = subprocess.run([sys.executable, lib, "pack", "--out", str(tmp_path / "c2"),
                          "--data", f"{lib}=../x"], capture_output=True, text=True)
    assert bad.returncode == 1 and "expected SRC=DEST" in bad.stderr
