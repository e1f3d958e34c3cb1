"""One honest Bonferroni family: by default every (pair, readout) verdict the outputs show.

Seeded null boards with three readouts (plus the composite): a reader of every verdict sees
at most alpha (plus Monte-Carlo slack) false certifications under the default family, and
more than that under the family narrowed to one readout's pairs (the old default).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.certify.design import DEFAULT_MULTIPLICITY, parse_design
from kit.certify.engine import certify_board, pair_verdicts, prepare_board
from kit.certify.simulate import simulate_board
from kit.cli import cli
from kit.core.errors import ConfigError
from kit.core.schema import read_table

NULL = dict.fromkeys("ABCDE", 0.0)
READOUTS = ("r1", "r2", "r3")


def _null_fwer(n_boards: int, seed: int) -> dict[str, float]:
    """Share of null boards with ANY certified (pair, readout) row, per multiplicity."""
    designs = {
        m: parse_design({"alpha": 0.05, "min_common_tasks": 2, "multiplicity": m})
        for m in ("pairs_x_readouts", "pairs")
    }
    hits = dict.fromkeys(designs, 0)
    for i in range(n_boards):
        frame = simulate_board(
            np.random.default_rng([seed, i]), NULL, n_tasks=50, n_clusters=23, readouts=READOUTS
        )
        board = prepare_board(frame, designs["pairs"])
        for name, design in designs.items():
            hits[name] += bool((pair_verdicts(board, design).verdict == "certified").any())
    return {k: v / n_boards for k, v in hits.items()}


def _slack(n: int, alpha: float = 0.05) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)


def _check(n_boards: int, seed: int) -> None:
    rate = _null_fwer(n_boards, seed)
    assert rate["pairs_x_readouts"] <= _slack(n_boards), rate
    assert rate["pairs"] > _slack(n_boards), rate  # the per-readout family is not honest


def test_default_family_holds_alpha_over_every_shown_verdict() -> None:
    _check(200, seed=3)


@pytest.mark.slow
def test_default_family_holds_alpha_over_every_shown_verdict_slow() -> None:
    _check(1500, seed=4)


def test_default_is_every_pair_and_readout_and_outputs_name_it() -> None:
    assert DEFAULT_MULTIPLICITY == "pairs_x_readouts"
    frame = simulate_board(np.random.default_rng(1), NULL, readouts=READOUTS)
    res = certify_board(frame, parse_design({}))
    assert res.m == 10 * 4  # 10 pairs x (3 readouts + composite)
    assert set(res.pairs["family"]) == {"pairs_x_readouts"}
    assert set(res.pairs["family_m"]) == {40}
    assert "every (pair, readout) shown" in res.family
    narrowed = certify_board(frame, parse_design({"multiplicity": "pairs"}))
    assert narrowed.m == 10 and set(narrowed.pairs["family_m"]) == {10}
    assert "each of the 4 readouts is its own family" in narrowed.family


def test_narrowed_family_gives_a_smaller_radius() -> None:
    frame = simulate_board(np.random.default_rng(2), NULL, readouts=READOUTS)
    wide = certify_board(frame, parse_design({})).pairs
    narrow = certify_board(frame, parse_design({"multiplicity": "pairs"})).pairs
    assert (narrow["q"] < wide["q"]).all()
    pd.testing.assert_series_equal(narrow["gap"], wide["gap"])


def test_unknown_multiplicity_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="multiplicity"):
        parse_design({"multiplicity": "readouts"}, "d.yaml")


def test_cli_line_and_pairs_csv_name_the_family(tmp_path: Path) -> None:
    scores = tmp_path / "s.csv"
    frame = simulate_board(np.random.default_rng(5), NULL, readouts=READOUTS)
    frame.to_csv(scores, index=False)
    design = tmp_path / "d.yaml"
    design.write_text("alpha: 0.05\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli, ["certify", str(scores), "--design", str(design), "--out", str(out), "--no-figure"]
    )
    assert res.exit_code == 0, res.output
    assert "Bonferroni family: every (pair, readout) shown" in res.output
    assert "m = 40" in res.output
    pairs = read_table(out / "pairs.csv", "certify_pairs")
    assert set(pairs["family_m"]) == {40}
    page = CliRunner().invoke(cli, ["report", "board", str(out)])
    assert page.exit_code == 0, page.output
    html = (out / "board.html").read_text()
    assert "Bonferroni family" in html and "m = 40" in html
