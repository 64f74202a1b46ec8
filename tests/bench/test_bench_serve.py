"""benchmarks/bench_serve.py: its ``vllm serve`` and ``vllm bench serve`` command
lines parse with vLLM's own argument parsers into the settings the harness uses,
and the comparison with an ``abab.py`` result is computed per arm and
concurrency."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import bench_serve  # noqa: E402
from profile_step import parse_arm  # noqa: E402


def test_serve_command_parses_with_the_engine_settings():
    pytest.importorskip("vllm")
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    cmd = bench_serve.serve_cmd("/m/t", "/m/d", parse_arm("dsl8t0.5"), 8201,
                                {"kv_cache_memory_bytes": 4 << 30})
    assert cmd[:3] == ["vllm", "serve", "/m/t"]
    args = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd[3:])
    assert args.port == 8201 and args.enable_prefix_caching is False
    assert args.kv_cache_memory_bytes == 4 << 30 and args.max_num_seqs == 64
    spec = args.speculative_config
    spec = json.loads(spec) if isinstance(spec, str) else spec
    assert spec == {"method": "draft_model", "model": "/m/d",
                    "num_speculative_tokens": 8, "draft_confidence_threshold": 0.5}
    target = bench_serve.serve_cmd("/m/t", "/m/d", parse_arm("target"), 8201, {})
    assert "--speculative-config" not in target


def test_bench_command_parses_as_a_closed_loop_of_the_prompt_file(tmp_path):
    pytest.importorskip("vllm")
    from vllm.benchmarks.serve import add_cli_args
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser()
    add_cli_args(parser)
    cmd = bench_serve.bench_cmd("/m/t", Path("/p/sharegpt-test.jsonl"), 8201, 16, 32,
                                256, tmp_path, "sd3-c16")
    assert cmd[:3] == ["vllm", "bench", "serve"]
    args = parser.parse_args(cmd[3:])
    assert (args.dataset_name, args.dataset_path) == ("custom", "/p/sharegpt-test.jsonl")
    assert args.max_concurrency == 16 and args.num_prompts == 32
    assert args.request_rate == float("inf") and args.ignore_eos
    assert args.custom_output_len == 256 and args.temperature == 0
    assert args.skip_chat_template and args.disable_shuffle
    assert args.result_filename == "sd3-c16.json"


def test_compare_with_the_harness():
    points = {"target": {1: 4.4, 16: 5.0}, "dsl8t0.5": {1: 4.2, 16: 6.0}}
    harness = {"points": [{"concurrency": 1, "tpot_ms": {
        "target": [4.30, 4.40, 4.35], "dsl8t0.5": [4.20, 4.00, 4.10]}}]}
    out = bench_serve.compare(points, harness)
    assert out["1"]["vs_first_arm"] == {"dsl8t0.5": pytest.approx(4.2 / 4.4)}
    assert out["1"]["harness_tpot_ms"] == {"target": 4.35, "dsl8t0.5": 4.10}
    assert out["1"]["over_harness"]["target"] == pytest.approx(4.4 / 4.35)
    assert out["1"]["harness_vs_first_arm"]["dsl8t0.5"] == pytest.approx(4.10 / 4.35)
    # No harness point at c=16: only bench serve's own numbers.
    assert "over_harness" not in out["16"]
    assert out["16"]["vs_first_arm"]["dsl8t0.5"] == pytest.approx(1.2)


def test_a_batch_size_schedule_arm_reaches_vllms_schedule_lookup():
    pytest.importorskip("vllm")
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup

    arm = parse_arm("dsl8t0.5@1-7:8/8-31:3/32-32:0")
    assert arm["schedule"] == [[1, 7, 8], [8, 31, 3], [32, 32, 0]]
    cmd = bench_serve.serve_cmd("/m/t", "/m/d", arm, 8201, {})
    args = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd[3:])
    spec = args.speculative_config
    spec = json.loads(spec) if isinstance(spec, str) else spec
    assert spec["num_speculative_tokens_per_batch_size"] == arm["schedule"]
    # What the scheduler looks up per batch size: the last band is open-ended.
    lookup = build_dynamic_sd_schedule_lookup(spec["num_speculative_tokens_per_batch_size"],
                                              64, spec["num_speculative_tokens"])
    assert lookup[1:8] == [8] * 7 and lookup[8:32] == [3] * 24
    assert lookup[32:] == [0] * 33


@pytest.mark.parametrize("name", ["target@1-2:3", "sd3@1-2", "sd3@1-2:3/", "dsl8t0.5@"])
def test_a_malformed_arm_is_one_clear_error(name):
    with pytest.raises(SystemExit, match=f"unknown arm {name!r}"):
        parse_arm(name)
