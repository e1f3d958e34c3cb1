"""The certified board page: self-contained, every verdict shown, rendered in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from browser import artifact, dump_dom, screenshot
from click.testing import CliRunner

from kit.cli import cli
from kit.report.board_page import explain_pair, render_board_page

REPO = Path(__file__).resolve().parents[2]
EXTERNAL = re.compile(
    r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|<link\b|<script\b[^>]*\bsrc=|@import|url\(", re.I
)


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    ranks = pd.DataFrame(
        {
            "system": ["A", "B", "C"],
            "composite": [0.6, 0.5, 0.4],
            "n_tasks": [50, 50, 50],
            "rank_lo": [1, 2, 2],
            "rank_hi": [1, 3, 3],
        }
    )
    pairs = pd.DataFrame(
        {
            "system_a": ["A", "A", "B"],
            "system_b": ["B", "C", "C"],
            "readout": ["composite"] * 3,
            "verdict": ["certified", "refused", "undecided_sampling"],
            "reason": ["exact", "backbone_outside_scaffold_window", "gap <= q + eps_outside"],
            "winner": ["A", None, None],
            "gap": [0.1, 0.2, 0.01],
            "q": [0.03, float("nan"), 0.04],
            "eps_outside": [0.0, float("inf"), 0.0],
            "mde": [0.03, float("inf"), 0.04],
        }
    )
    return ranks, pairs


def test_page_is_self_contained_and_shows_every_verdict() -> None:
    ranks, pairs = _frames()
    page = render_board_page(ranks, pairs, {"alpha": 0.05, "pairs.csv sha256": "ab" * 32})
    assert not EXTERNAL.search(page), EXTERNAL.search(page)
    assert "refused (inadmissible)" in page and "backbone_outside_scaffold_window" in page
    assert "undecided: sampling-limited" in page
    assert page.count("<tr>") == 1 + 3 + 1  # headers + ranks + pair header
    assert page.count("<tr data-verdict=") == 3  # one filterable row per pair verdict
    assert "ab" * 32 in page and "alpha 0.05" in page
    assert "<svg" in page and page.count('stroke-width="8"') == 3


def test_page_escapes_system_names() -> None:
    ranks, pairs = _frames()
    ranks.loc[0, "system"] = "<script>alert(1)</script>"
    page = render_board_page(ranks, pairs, {})
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_page_answers_first() -> None:
    """The opening paragraph states the counts at alpha and the top of the board, before any
    chart or table; the reason column explains undecided pairs in words."""
    ranks, pairs = _frames()
    page = render_board_page(ranks, pairs, {"alpha": 0.05})
    m = re.search(r"<p id=answer class=answer>(.*?)</p>", page)
    assert m, page[:2000]
    answer = re.sub(r"<[^>]+>", "", m.group(1))
    assert answer.startswith(
        "At alpha = 0.05, of 3 composite pairs: 1 certified, 1 refused, 1 undecided"
    )
    assert "Top of the board of 3 systems: A rank 1 (composite 0.600); B rank 2–3" in answer
    assert "Undecided: B vs C" in answer
    assert page.index("id=answer") < page.index("<svg") < page.index("id=pairs")
    assert "within sampling noise: |gap| 0.010 ≤ q + ε_outside = 0.040" in page
    assert "id=glossary" in page and "<dt>ε_outside</dt>" in page and "<dt>MDE</dt>" in page
    assert "SYNTHETIC" not in page.split("<h2>Glossary")[0]  # no label without a record
    unknown = render_board_page(ranks, pairs, {})
    assert "At an unknown alpha (no design)" in unknown


def test_reasons_in_words() -> None:
    base = {"gap": -0.02, "q": 0.01, "eps_outside": 0.05, "mde": 0.06, "reason": "within_tolerance"}
    attribution = explain_pair({**base, "verdict": "undecided_attribution"})
    assert attribution.startswith("entry differences could explain it: |gap| 0.020 ≤ ε_outside")
    assert "more tasks will not decide it" in attribution
    refused = explain_pair({"verdict": "refused", "reason": "backbone_differs"})
    assert refused == "refused before reading scores: backbones differ under a scaffold window"
    certified = explain_pair({**base, "gap": 0.2, "verdict": "certified", "reason": "exact"})
    assert certified == "|gap| 0.200 > q + ε_outside = 0.060"


def test_synthetic_label_and_filters_in_the_page() -> None:
    ranks, pairs = _frames()
    page = render_board_page(
        ranks, pairs, {"alpha": 0.05}, synthetic={"synthetic": True, "seed": 3}
    )
    assert "<p id=synthetic class=synthetic>SYNTHETIC board" in page
    assert page.index("id=synthetic") < page.index("id=answer")
    assert ">SYNTHETIC</text>" in page  # the chart carries it too
    for ident in ("pair-filter", "verdict-filter", "readout-filter", "pair-shown"):
        assert f"id={ident}" in page, ident
    assert not EXTERNAL.search(page)


def _visible_rows(dom: str) -> list[str]:
    body = dom.split('<table id="pairs">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr ([^>]*)>", body)
    return [r for r in rows if "data-verdict" in r and "hidden" not in r]


def test_filter_and_sort_run_in_chromium(tmp_path: Path) -> None:
    """The inline script filters (verdict, text) and sorts, from the address, and counts what it
    shows."""
    ranks, pairs = _frames()
    page = tmp_path / "board.html"
    page.write_text(render_board_page(ranks, pairs, {"alpha": 0.05}))
    dom = dump_dom(page, tmp_path / "profile")
    assert len(_visible_rows(dom)) == 3
    assert "3 of 3 verdicts shown" in dom
    dom = dump_dom(page, tmp_path / "profile", "#verdict=refused")
    shown = _visible_rows(dom)
    assert len(shown) == 1 and 'data-verdict="refused"' in shown[0]
    assert "1 of 3 verdicts shown" in dom
    dom = dump_dom(page, tmp_path / "profile", "#q=sampling")
    assert [r for r in _visible_rows(dom) if "undecided_sampling" in r] == _visible_rows(dom)
    assert "1 of 3 verdicts shown" in dom
    dom = dump_dom(page, tmp_path / "profile", "#sort=gap")  # a click on the gap header
    body = dom.split('<table id="pairs">', 1)[1]
    rows = re.findall(r"<tr data-verdict.*?</tr>", body.split("</table>", 1)[0])
    gaps = [float(re.findall(r'data-v="([^"]*)"', r)[0]) for r in rows]  # first: gap
    assert gaps == [0.01, 0.1, 0.2]  # ascending; the page order was 0.1, 0.2, 0.01
    assert 'aria-sort="ascending"' in body


def _simulate(runner: CliRunner, scores: Path) -> None:
    res = runner.invoke(
        cli,
        [
            "simulate",
            "board",
            "--out",
            str(scores),
            "--seed",
            "3",
            "--systems",
            "A=0.15,B=0.0,C=-0.15",
        ],
    )
    assert res.exit_code == 0, res.output


def test_certify_keeps_its_context_and_the_page_needs_no_design(tmp_path: Path) -> None:
    """kit certify keeps design.yaml, context.json (command line, kit version, inputs' sha256)
    and synthetic.json, sealed with the rest; kit report board then shows alpha without
    --design, labels the SYNTHETIC board, and --design still overrides."""
    from kit import __version__
    from kit.core.hashing import file_sha256

    runner = CliRunner()
    scores = tmp_path / "s.csv"
    _simulate(runner, scores)
    design = REPO / "examples" / "certify" / "design.yaml"
    cert = tmp_path / "cert"
    res = runner.invoke(cli, ["certify", str(scores), "--design", str(design), "--out", str(cert)])
    assert res.exit_code == 0, res.output
    assert (cert / "design.yaml").read_bytes() == design.read_bytes()
    ctx = json.loads((cert / "context.json").read_text())
    assert ctx["command"] == f"kit certify {scores} --design {design} --out OUT"
    assert ctx["kit_version"] == __version__
    assert ctx["inputs"]["scores"]["sha256"] == file_sha256(scores)
    assert ctx["inputs"]["design_path"]["sha256"] == file_sha256(design)
    syn = json.loads((cert / "synthetic.json").read_text())
    assert (
        syn["synthetic"] is True and syn["seed"] == 3 and syn["sidecar"] == "s.csv.synthetic.json"
    )
    sealed = json.loads((cert / "receipts" / "certify.receipt.json").read_text())
    assert {"design.yaml", "context.json", "synthetic.json"} <= set(json.dumps(sealed).split('"'))
    res = runner.invoke(cli, ["verify", "receipts", str(cert)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["report", "board", str(cert)])
    assert res.exit_code == 0, res.output
    assert "SYNTHETIC" in res.output
    page = (cert / "board.html").read_text()
    assert "alpha 0.05" in page and "alpha ?" not in page
    assert "At alpha = 0.05, of 3 composite pairs" in page
    assert "<p id=synthetic class=synthetic>SYNTHETIC board" in page
    assert f"kit certify {scores}" in page  # the footer names the command that certified it
    other = tmp_path / "other.yaml"
    other.write_text(design.read_text().replace("alpha: 0.05", "alpha: 0.01"))
    res = runner.invoke(cli, ["report", "board", str(cert), "--design", str(other)])
    assert res.exit_code == 0, res.output
    assert "alpha 0.01" in (cert / "board.html").read_text()


def test_real_scores_are_not_labelled_synthetic(tmp_path: Path) -> None:
    runner = CliRunner()
    scores = tmp_path / "s.csv"
    _simulate(runner, scores)
    (tmp_path / "s.csv.synthetic.json").unlink()
    real = tmp_path / "real.csv"
    real.write_text(scores.read_text().replace("synthetic:seed3", "sha256:abc"))
    design = REPO / "examples" / "certify" / "design.yaml"
    cert = tmp_path / "cert"
    res = runner.invoke(cli, ["certify", str(real), "--design", str(design), "--out", str(cert)])
    assert res.exit_code == 0, res.output
    assert not (cert / "synthetic.json").exists()
    # the rows alone (no sidecar) still mark a generated board
    cert2 = tmp_path / "cert2"
    res = runner.invoke(cli, ["certify", str(scores), "--design", str(design), "--out", str(cert2)])
    assert json.loads((cert2 / "synthetic.json").read_text())["evidence"].startswith("450 of 450")
    res = runner.invoke(cli, ["report", "board", str(cert)])
    assert res.exit_code == 0, res.output
    page = (cert / "board.html").read_text()
    assert "id=synthetic" not in page and "SYNTHETIC ·" not in page


def test_rank_figure_is_legible() -> None:
    """Every text on ranks.png is at least the tick size; alpha and SYNTHETIC are on it."""
    import matplotlib.pyplot as plt

    from kit.report.rank_figure import TICK_SIZE, rank_figure

    ranks, _ = _frames()
    ranks["pinned"] = ranks["rank_lo"] == ranks["rank_hi"]
    fig = rank_figure(ranks, alpha=0.05, synthetic=True)
    try:
        ax = fig.axes[0]
        texts = [t for t in fig.findobj(plt.Text) if t.get_text()]
        assert all(t.get_fontsize() >= TICK_SIZE for t in texts), [
            (t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < TICK_SIZE
        ]
        assert ax.get_title() == "SYNTHETIC board: Certified rank intervals at alpha = 0.05"
        assert any(t.get_text() == "SYNTHETIC" for t in ax.texts)
    finally:
        plt.close(fig)


def test_certified_board_renders_in_chromium(tmp_path: Path) -> None:
    """Screenshots of the page as certified (SYNTHETIC) and of a board of real scores."""
    runner = CliRunner()
    scores = tmp_path / "s.csv"
    _simulate(runner, scores)
    design = REPO / "examples" / "certify" / "design.yaml"
    res = runner.invoke(
        cli, ["certify", str(scores), "--design", str(design), "--out", str(tmp_path / "cert")]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["report", "board", str(tmp_path / "cert")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "cert" / "board.html").read_text()
    assert not EXTERNAL.search(page)
    assert "alpha 0.05" in page
    ranks, pairs = _frames()
    plain = tmp_path / "plain.html"
    plain.write_text(render_board_page(ranks, pairs, {"alpha": 0.05}))
    screenshot(plain, artifact(tmp_path, "board-default.png"), "1100,900")
    shot = screenshot(
        tmp_path / "cert" / "board.html", artifact(tmp_path, "board-synthetic.png"), "1100,900"
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # a rendered page, not a blank one: many distinct colours in the screenshot
    import zlib

    assert len(data) > 20_000
    assert len(zlib.compress(data)) > 10_000
