"""benchmarks/abab.py --waves-at: more waves per round at chosen concurrencies (the
point whose rounds spread most), and one clear error for a bad value; --repeats-at
reads its C:N list with the same parser and is refused the same way."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import abab  # noqa: E402


def test_waves_at_reads_each_concurrency():
    assert abab.parse_waves_at("64:2") == {64: 2}
    assert abab.parse_waves_at("32:2,64:3") == {32: 2, 64: 3}


@pytest.mark.parametrize("parse", [abab.parse_waves_at, abab.parse_repeats_at])
@pytest.mark.parametrize("text", ["64", "64:0", "0:2", "a:2", "64:2,8"])
def test_a_bad_item_is_named(parse, text):
    with pytest.raises(argparse.ArgumentTypeError, match="is not C:N"):
        parse(text)


@pytest.mark.parametrize("flag", ["--waves-at", "--repeats-at"])
def test_a_concurrency_not_measured_is_refused(capsys, tmp_path, flag):
    with pytest.raises(SystemExit) as exc:
        abab.main(["--models", str(tmp_path), "--prompts", str(tmp_path),
                   "--out", str(tmp_path / "o.json"), "--concurrency", "1,8",
                   flag, "64:2"])
    assert exc.value.code == 2
    assert f"{flag}: concurrency [64] is not in --concurrency 1,8" in capsys.readouterr().err
