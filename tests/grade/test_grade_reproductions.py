"""OpenBioRQ published rates recomputed with Wilson CIs, and the board's order."""

from __future__ import annotations

from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from kit.reproductions.grade import openbiorq_rates


@pytest.fixture(scope="module")
def tables(registry_raw: Path) -> dict:
    return openbiorq_rates(registry_raw)


def test_printed_counts(tables: dict) -> None:
    r = tables["openbiorq_rates"].set_index("quantity")
    for q, k, n, paper in (
        ("wrong_paper_nct", 47, 231, 20.3),
        ("wrong_paper_pmid", 593, 4545, 13.0),
    ):
        row = r.loc[q]
        assert (row.k, row.n) == (k, n)
        lo, hi = proportion_confint(k, n, method="wilson")
        assert row.kit_value == pytest.approx(100 * k / n)
        assert (row.ci_lo, row.ci_hi) == pytest.approx((100 * lo, 100 * hi), abs=1e-8)
        assert round(row.kit_value, 1) == paper
    assert r.loc["wrong_paper_headline", "k"] == 739
    # figures without counts are listed, not invented
    for q in ("existence_GLM-5.1", "wrong_paper_Qwen3.6", "judge_kappa_wrong_paper"):
        assert r.loc[q].kit_value != r.loc[q].kit_value  # NaN
        assert r.loc[q].note


def test_board_order_and_rounding(tables: dict) -> None:
    b = tables["openbiorq_board_rates"]
    assert (b["paper_rank"] == b["kit_rank"]).all()
    fc = b[b.split == "frozen_core_423"].sort_values("kit_rank")
    assert list(fc.model[:3]) == ["GPT-5.5", "Opus-4.7", "Gemini-3-Pro"]
    glm5 = b[(b.split == "frozen_core_423") & (b.model == "GLM-5")].iloc[0]
    assert not glm5.rounds_back  # 16.6% is not k/423 for any k
    assert b[b.model != "GLM-5"].rounds_back.all()


def test_declarations_and_cli_run(registry_raw: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kit.cli import cli
    from kit.release.reproduce import load_declarations

    names = {d.name for d in load_declarations()}
    assert {"grade_openbiorq", "grade_planted_audit", "grade_planted_audit_minilm"} <= names
    r = CliRunner().invoke(
        cli,
        ["reproduce", "run", "grade_openbiorq", "--raw", str(registry_raw), "--out", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    text = (tmp_path / "openbiorq_rates.csv").read_text()
    assert "wrong_paper_nct" in text and "paper_value" in text and "note" in text
