"""benchmarks/sim_served_width.py: the served-width simulation's own
arithmetic, on stand-in controllers that place one width always, and the
real controller of the fastcheck tree run through it."""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import sim_served_width  # noqa: E402

_FIXED = '''
class ServedWidthController:
    def __init__(self, sizes, max_rows, cap, clock):
        self.observed = 0

    def width(self, num_reqs):
        return {width}

    def observe_step(self, num_reqs, decode_only, tokens, forwards, all_accepted):
        self.observed += 1

    def _move(self, *args):
        pass

    def _forget(self, *args):
        pass
'''


@pytest.mark.parametrize("width,loss", [(4, "+0.00%"), (3, "-3.23%")])
def test_a_fixed_width_costs_its_expected_tokens(tmp_path, width, loss):
    """Every request accepts a draft with 0.5: a step gives 1.9375 tokens
    expected at the cap of 4 and 1.875 at 3, so 3 drafts always cost 3.23%."""
    module = tmp_path / "served_width.py"
    module.write_text(_FIXED.format(width=width))
    text = sim_served_width.main(["--module", str(module), "--seeds", "2",
                                  "--p-lo", "0.5", "--p-hi", "0.5",
                                  "--requests-1", "3", "--requests-8", "16"])
    below = "100.0%" if width < 4 else "0.0%"
    for phase in ("c=1", "c=8"):
        line = next(x for x in text.splitlines() if x.strip().startswith(phase))
        assert f"mean width {width}.000" in line
        assert f"steps below the cap {below}" in line
        assert f"against the cap's {loss} (worst seed {loss})" in line
    assert "moves (batch size, from, to, test): none" in text


def test_runs_the_real_controller():
    """The fastcheck tree's controller: it starts at the cap, explores the
    width below it (so some steps are below the cap), and a width below the
    cap never gives more expected tokens than the cap would."""
    import re

    from vllm.v1.spec_decode.dynamic import served_width

    text = sim_served_width.main(["--module", served_width.__file__, "--seeds", "2",
                                  "--requests-1", "8", "--requests-8", "48"])
    for phase in ("c=1", "c=8"):
        line = next(x for x in text.splitlines() if x.strip().startswith(phase))
        width, below, loss = map(float, re.search(
            r"mean width ([\d.]+), steps below the cap ([\d.]+)%.*cap's ([-+][\d.]+)%",
            line).groups())
        assert 1 <= width < 4 and 0 < below < 100, line
        assert loss <= 0, line


def test_bad_arguments_name_the_flag(tmp_path):
    with pytest.raises(SystemExit, match="--module"):
        sim_served_width.main(["--module", str(tmp_path / "none.py")])
    module = tmp_path / "served_width.py"
    module.write_text(_FIXED.format(width=4))
    with pytest.raises(SystemExit, match="--p-lo"):
        sim_served_width.main(["--module", str(module), "--p-lo", "0.7",
                               "--p-hi", "0.6"])
