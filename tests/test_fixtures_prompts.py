"""Tests of the prompt fixtures: truncated-JSON parsing, splits, records."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

from fixtures import prompts  # noqa: E402

ITEMS = [
    {"id": "a_0", "conversations": [{"from": "human", "value": "Héllo wörld — ünïcode ✓ 🙂"},
                                    {"from": "gpt", "value": "ok"}]},
    {"id": "b_0", "conversations": [{"from": "human", "value": 'quote " and ] and } and \\'}]},
    {"id": "c_0", "conversations": [{"from": "gpt", "value": "a bot opens this one"}]},
    {"id": "d_0", "conversations": [], "nested": [[1, 2.5, None, True], {"k": []}]},
    {"id": "e_0", "conversations": [{"from": "human", "value": "x" * 300}]},
]


def _parse(data: bytes, **kw) -> tuple[list, prompts.JsonArrayItems]:
    reader = prompts.JsonArrayItems(io.BytesIO(data), **kw)
    return list(reader), reader


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_complete_array_round_trips_at_any_chunk_size(chunk):
    data = json.dumps(ITEMS, indent=2, ensure_ascii=False).encode()
    items, reader = _parse(data, chunk_size=chunk)
    assert items == ITEMS
    assert reader.complete and reader.truncated_chars == 0 and reader.count == len(ITEMS)


def test_truncation_anywhere_in_the_last_item_keeps_the_others():
    full = json.dumps(ITEMS, indent=1, ensure_ascii=False).encode()
    last = full.rindex(b'{\n  "id": "e_0"')
    end_of_last = full.rindex(b"}") + 1  # the last item's closing brace
    for cut in range(last, end_of_last, 13):
        items, reader = _parse(full[:cut], chunk_size=5)
        assert items == ITEMS[:-1], cut
        assert not reader.complete
        assert reader.truncated_chars == len(full[last:cut].decode("utf-8", "ignore"))


def test_truncation_inside_a_multibyte_character():
    full = json.dumps(ITEMS, ensure_ascii=False).encode()
    # Cut inside the 4-byte emoji of the first item: nothing complete remains.
    cut = full.index("🙂".encode()) + 2
    items, reader = _parse(full[:cut], chunk_size=3)
    assert items == [] and reader.truncated_chars > 0 and not reader.complete


@pytest.mark.parametrize("chunk", [1, 2, 3, 5])
def test_scalars_split_across_chunks_are_not_cut_short(chunk):
    data = b"[12345, 678,-9.5e3 ,1.25E+10,\"s\", true, null, 0]"
    items, reader = _parse(data, chunk_size=chunk)
    assert items == [12345, 678, -9.5e3, 1.25e10, "s", True, None, 0] and reader.complete


def test_malformed_json_is_an_error_not_a_truncation():
    good = json.dumps(ITEMS).encode()
    broken = good.replace(b'"b_0"', b'"b_0" oops', 1)
    with pytest.raises(ValueError, match="cannot be parsed"):
        _parse(broken, max_tail=100)
    with pytest.raises(ValueError, match="expected ','"):
        _parse(b'[{"a": 1} {"b": 2}]')
    with pytest.raises(ValueError, match="not a JSON array"):
        _parse(b'{"a": 1}')
    with pytest.raises(ValueError, match="empty"):
        _parse(b"  ")


def test_sharegpt_first_turns_filters_and_dedupes():
    items = ITEMS + [
        {"id": "a_0", "conversations": [{"from": "human", "value": "same id, other text!"}]},
        {"id": "f_0", "conversations": [{"from": "human", "value": "x" * 300}]},
        {"id": "g_0", "conversations": [{"from": "human", "value": "  too short  "}]},
        "not a dict",
    ]
    got = list(prompts.sharegpt_first_turns(items, min_chars=16))
    assert [cid for cid, _ in got] == ["a_0", "b_0", "e_0"]
    assert got[0][1] == ITEMS[0]["conversations"][0]["value"]


def test_hash_fraction_is_the_documented_sha256_rule():
    digest = hashlib.sha256(b"7:QWJhYvA_0").digest()
    assert prompts.hash_fraction(7, "QWJhYvA_0") == int.from_bytes(digest[:8], "big") / 2**64
    keys = [f"k{i}" for i in range(4000)]
    tune = [k for k in keys if prompts.split_of(0, k, 0.5) == "tune"]
    assert 0.45 < len(tune) / len(keys) < 0.55
    other_seed = [k for k in keys if prompts.split_of(1, k, 0.5) == "tune"]
    assert tune != other_seed
    assert all(prompts.split_of(0, k, 0.0) == "test" for k in keys[:100])


def _build(pairs, **spec):
    return prompts.build_prompt_set(
        "src", pairs, prompts.SplitSpec(**spec),
        render=lambda t: f"<u>{t}</u>", tokenize=lambda p: [ord(c) for c in p])


def test_splits_do_not_depend_on_input_order_and_are_disjoint():
    pairs = [(f"id{i}", f"text number {i}") for i in range(300)]
    shuffled = pairs[:]
    random.Random(3).shuffle(shuffled)
    a = _build(pairs, seed=5, per_split=40)
    b = _build(shuffled, seed=5, per_split=40)
    assert a.splits == b.splits
    assert len(a.splits["tune"]) == len(a.splits["test"]) == 40
    tune_ids = {r["id"] for r in a.splits["tune"]}
    assert not tune_ids & {r["id"] for r in a.splits["test"]}
    assert all(prompts.split_of(5, r["id"], 0.5) == r["split"]
               for s in a.splits.values() for r in s)
    # A different seed is a different selection.
    assert _build(pairs, seed=6, per_split=40).splits != a.splits


def test_adding_items_never_moves_existing_ones():
    pairs = [(f"id{i}", f"text {i}") for i in range(100)]
    small = _build(pairs)
    big = _build(pairs + [(f"new{i}", f"new text {i}") for i in range(50)])
    for split in prompts.SPLITS:
        old_ids = [r["id"] for r in small.splits[split]]
        kept = [r["id"] for r in big.splits[split] if not r["id"].startswith("new")]
        assert kept == old_ids


def test_records_and_length_filter():
    pairs = [("short", "ab"), ("long", "y" * 100)]
    out = _build(pairs, tune_fraction=1.0, max_prompt_tokens=20)
    assert out.splits["test"] == []
    assert [r["id"] for r in out.splits["tune"]] == ["short"]
    assert out.skipped_too_long == 1
    rec = out.splits["tune"][0]
    assert rec["prompt"] == "<u>ab</u>" and rec["text"] == "ab"
    assert rec["prompt_token_ids"] == [ord(c) for c in "<u>ab</u>"]
    assert rec["num_prompt_tokens"] == 9 and rec["split"] == "tune" and rec["source"] == "src"


def test_humaneval_reader_and_jsonl_round_trip(tmp_path):
    buf = io.BytesIO()
    with gzip.open(buf, "wt") as f:
        f.write(json.dumps({"task_id": "HumanEval/0", "prompt": "def f():\n"}) + "\n\n")
        f.write(json.dumps({"task_id": "HumanEval/1", "prompt": "def g():\n"}) + "\n")
    buf.seek(0)
    pairs = list(prompts.humaneval_prompts(buf))
    assert pairs == [("HumanEval/0", "def f():\n"), ("HumanEval/1", "def g():\n")]
    recs = [{"id": "ü", "n": 1}, {"id": "b", "n": 2}]
    assert prompts.write_jsonl(recs, tmp_path / "x.jsonl") == 2
    assert prompts.read_jsonl(tmp_path / "x.jsonl") == recs


def test_built_prompt_fixtures_follow_the_split_rule():
    """On the built fixtures (skipped when scripts/fixtures.sh has not run)."""
    import os

    cache = Path(os.environ.get("DSL_CACHE") or Path.home() / ".cache" / "vllm-dsl")
    root = Path(os.environ.get("FIXTURES_DIR") or cache / "fixtures")
    if not (root / "manifest.json").is_file():
        pytest.skip(f"no fixtures in {root} (scripts/fixtures.sh)")
    spec = json.loads((root / "prompts" / "splits.json").read_text())
    seen: dict[str, str] = {}
    for source in ("sharegpt", "humaneval"):
        for split in prompts.SPLITS:
            recs = prompts.read_jsonl(root / "prompts" / f"{source}-{split}.jsonl")
            assert recs, (source, split)
            fracs = [prompts.hash_fraction(spec["seed"], r["id"]) for r in recs]
            assert fracs == sorted(fracs), "records are in seeded-hash order"
            for r in recs:
                assert prompts.split_of(spec["seed"], r["id"], spec["tune_fraction"]) == split
                assert r["num_prompt_tokens"] == len(r["prompt_token_ids"])
                assert r["num_prompt_tokens"] <= spec["max_prompt_tokens"]
                assert seen.setdefault(f"{source}:{r['id']}", split) == split
        if source == "sharegpt":
            assert recs[0]["prompt"].startswith("<|im_start|>system")
            assert recs[0]["prompt"].endswith("<|im_start|>assistant\n")


def test_retokenize_with_the_fixture_tokenizer_reproduces_the_prompt_files(tmp_path):
    """Issue #31: scripts/lib/fixtures/retokenize.py rebuilds rows for another
    tokenizer the way fixtures.sh built them; with SmolLM2's own tokenizer it must
    give back the files byte for byte (skipped when scripts/fixtures.sh has not run)."""
    import os
    import subprocess

    cache = Path(os.environ.get("DSL_CACHE") or Path.home() / ".cache" / "vllm-dsl")
    root = Path(os.environ.get("FIXTURES_DIR") or cache / "fixtures")
    if not (root / "manifest.json").is_file():
        pytest.skip(f"no fixtures in {root} (scripts/fixtures.sh)")
    src = root / "prompts"
    out = tmp_path / "prompts"
    tool = ROOT / "scripts" / "lib" / "fixtures" / "retokenize.py"
    proc = subprocess.run([sys.executable, str(tool), str(src), str(out), str(root / "models" / "smollm2-135m")],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = sorted(p.name for p in src.glob("*-*.jsonl"))
    assert names and names == sorted(p.name for p in out.glob("*.jsonl"))
    for name in names:
        assert (out / name).read_bytes() == (src / name).read_bytes(), name


def test_retokenize_rebuilds_each_source_and_refuses_what_it_cannot():
    sys.path.insert(0, str(ROOT / "scripts" / "lib" / "fixtures"))
    import retokenize

    class Tok:
        chat_template = "x"

        def apply_chat_template(self, msgs, tokenize, add_generation_prompt):
            assert not tokenize and add_generation_prompt
            return f"<u>{msgs[0]['content']}</u><a>"

        def __call__(self, text, add_special_tokens=True):
            return type("E", (), {"input_ids": ([0] if add_special_tokens else []) + [len(w) for w in text.split()]})

    rows = [{"id": "1", "source": "sharegpt", "text": "hi there", "prompt_token_ids": [9]},
            {"id": "2", "source": "humaneval", "text": "def f", "prompt_token_ids": [9]}]
    a, b = retokenize.retokenize_rows(rows, Tok())
    assert (a["prompt"], a["prompt_token_ids"], a["num_prompt_tokens"]) == ("<u>hi there</u><a>", [5, 12], 2)
    assert (b["prompt"], b["prompt_token_ids"]) == ("def f", [0, 3, 1])
    Tok.chat_template = None
    with pytest.raises(SystemExit, match="no chat template"):
        retokenize.retokenize_rows(rows[:1], Tok())
    with pytest.raises(SystemExit, match="unknown source"):
        retokenize.retokenize_rows([{"id": "3", "source": "x", "text": ""}], Tok())
