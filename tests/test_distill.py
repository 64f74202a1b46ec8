"""Tests of scripts/gpu-host/distill.py on CPU with a tiny random target and tokenizer:
every DATA mode trains and writes the draft with its measured acceptance, the target's
continuations are generated once and reused, and bad settings fail with the name of
the setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-host" / "distill.py"
WORDS = "<pad> <unk> <s> </s> user assistant : hello sea blue wide the is a poem write".split()
TEMPLATE = ("{% for m in messages %}<s> {{ m['role'] }} : {{ m['content'] }} </s> "
            "{% endfor %}{% if add_generation_prompt %}<s> assistant : {% endif %}")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """models/smollm2-135m (a random 4-layer Llama over a 16-word vocabulary, with a
    word-level tokenizer and chat template), models/smollm2-l2, train.json, and a
    prompt file as the fixtures write it."""
    root = tmp_path_factory.mktemp("gpuhost")
    models = root / "models"
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(
        {w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
        eos_token="</s>")
    fast.chat_template = TEMPLATE
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=len(WORDS), hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        tie_word_embeddings=True, pad_token_id=0, bos_token_id=2, eos_token_id=3)
    target = transformers.LlamaForCausalLM(cfg).eval()
    target.save_pretrained(str(models / "smollm2-135m"))
    fast.save_pretrained(str(models / "smollm2-135m"))
    target.model.layers = target.model.layers[:2]
    target.config.num_hidden_layers = 2
    target.save_pretrained(str(models / "smollm2-l2"))
    convs = [[{"role": "user", "content": "write a poem"},
              {"role": "assistant", "content": "the sea is wide " * 20},
              {"role": "user", "content": "hello"},
              {"role": "assistant", "content": "the sea is blue " * 20}]] * 4
    (models / "train.json").write_text(json.dumps(convs))
    ids = fast.apply_chat_template([{"role": "user", "content": "hello sea"}],
                                   tokenize=True, add_generation_prompt=True)
    ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
    (root / "tune.jsonl").write_text(
        "".join(json.dumps({"prompt_token_ids": ids[: len(ids) - i]}) + "\n"
                for i in range(3)))
    return root


def distill(root: Path, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "GPU_HOST_ROOT": str(root), "NL": "2", "STEPS": "2",
            "EVAL_PROMPTS": str(root / "tune.jsonl"), "CUDA_VISIBLE_DEVICES": "",
            "HF_HUB_OFFLINE": "1", **env}
    return subprocess.run([sys.executable, str(SCRIPT)], env=full, capture_output=True,
                          text=True, timeout=600)


def test_self_rows_are_generated_once_and_reused(root):
    first = distill(root, DATA="self", ONLY_ROWS="1", SELF_PROMPTS="3")
    assert first.returncode == 0, first.stderr
    (cache,) = (root / "models").glob("self-rows-*.pt")
    rows = torch.load(cache)
    assert rows.shape[1] == 64 and rows.shape[0] >= 1
    stamp = cache.stat().st_mtime_ns
    res = distill(root, DATA="self", SELF_PROMPTS="3")
    assert res.returncode == 0, res.stderr
    assert cache.stat().st_mtime_ns == stamp
    info = json.loads((root / "models" / "smollm2-l2-self" / "distill.json").read_text())
    assert info["data"] == "self" and info["rows"] == rows.shape[0]
    assert info["self_prompts"] == 3


def test_mix_trains_on_text_and_self_rows_and_measures_acceptance(root):
    res = distill(root, DATA="mix", SELF_PROMPTS="3")
    assert res.returncode == 0, res.stderr
    out = root / "models" / "smollm2-l2-mix"
    info = json.loads((out / "distill.json").read_text())
    (cache,) = (root / "models").glob("self-rows-*.pt")
    assert info["rows"] > torch.load(cache).shape[0]  # the text rows come on top
    # The target reproduces its own greedy continuations teacher-forced (up to ties).
    assert info["target_self_agreement"] >= 0.9
    acc = info["first_position_acceptance"]
    assert 0 <= acc["before"] <= 1 and 0 <= acc["after"] <= 1
    assert info["eval_tokens"] == 3 * 8
    draft = transformers.AutoModelForCausalLM.from_pretrained(str(out))
    assert draft.config.num_hidden_layers == 2
    assert "first-position acceptance after" in res.stdout
    assert info["deterministic_algorithms"] is True
    # SDPA's cuDNN backward is not deterministic on the H200 (sessions 30, 31).
    assert info["draft_attention"] == "eager"
    assert info["nondeterministic_ops"] == []
    assert f"draft weights sha256 {info['weights_sha256']}" in res.stdout


def test_the_same_inputs_give_the_same_draft_and_say_so(root):
    digests = []
    for _ in range(2):
        res = distill(root, DATA="self", SELF_PROMPTS="3")
        assert res.returncode == 0, res.stderr
        info = json.loads((root / "models" / "smollm2-l2-self" / "distill.json").read_text())
        digests.append(info["weights_sha256"])
    assert len(digests[0]) == 64 and digests[0] == digests[1]
    res = distill(root, DATA="self", SELF_PROMPTS="3", STEPS="3")
    info = json.loads((root / "models" / "smollm2-l2-self" / "distill.json").read_text())
    assert info["weights_sha256"] != digests[0]


@pytest.mark.parametrize("env,msg", [
    ({"DATA": "synthetic"}, "DATA: 'synthetic' is not one of text, self, mix"),
    ({"EVAL_PROMPTS": "/nonexistent.jsonl"}, "EVAL_PROMPTS: /nonexistent.jsonl does not"),
])
def test_bad_settings_name_the_setting(root, env, msg):
    res = distill(root, **env)
    assert res.returncode != 0 and msg in res.stderr
