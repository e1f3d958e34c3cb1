"""End to end: `kit audit` on a small PubMedQA planted set, checked against the planted truth."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
from audit_helpers import AGENT, AuditRun, audit_args, invoke
from browser import artifact, dump_dom, screenshot

from kit.core.receipts import verify_chain
from kit.core.schema import read_table, validate_json


def _summary(run: AuditRun) -> dict:
    return json.loads((run.out / "summary.json").read_text())


def test_outputs_exist_and_validate(audited: AuditRun) -> None:
    for name in ("report.html", "summary.json", "citations.csv", "runs.csv"):
        assert (audited.out / name).is_file(), name
    s = _summary(audited)
    validate_json(s, "audit_summary", "summary.json")
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    runs = read_table(audited.out / "runs.csv", "audit_runs")
    assert len(runs) == s["counts"]["runs"] == 40
    assert len(cites) == s["counts"]["citations"] == 40
    assert list(cites["run_id"]) == sorted(cites["run_id"])
    assert s["kit_version"]
    assert len(s["inputs"]["runs"]["sha256"]) == 64
    assert {"checklists", "board", "design", "agent_scores", "planted_truth"} <= set(s["inputs"])
    # the page names what the numbers depend on
    page = (audited.out / "report.html").read_text()
    assert s["verifier"]["name"].split(" ")[0] in page
    assert "alpha = 0.100" in page and "tau = " in page
    assert s["conformal"]["calibration"]["source"] in page


def test_every_headline_number_recovers_the_planted_truth(
    audited: AuditRun, planted_dir: Path
) -> None:
    s = _summary(audited)
    rows = {r["metric"]: r for r in s["planted"]["rows"]}
    for metric in (
        "fabrication_rate",
        "wrong_paper_corrected",
        "wrong_paper_upper",
        "transient_lookups",
        "catch_rate_wrong_paper",
    ):
        assert metric in rows, metric
        assert rows[metric]["covered"] is True, rows[metric]
    # Independent count from the truth file: every planted fabrication that was not an outage
    # is L1 notfound, every outage is transient (never fabrication).
    truth = pd.read_csv(planted_dir / "truth.csv")
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    m = cites.merge(truth, on=["run_id", "citation"])
    assert (m.loc[m["transient"], "l1"] == "transient").all()
    fab = m[(m["planted"] == "fabricated") & ~m["transient"]]
    assert (fab["l1"] == "notfound").all()
    assert (m.loc[(m["planted"] != "fabricated") & ~m["transient"], "l1"] == "found").all()
    head = {h["metric"]: h for h in s["headline"]}
    assert head["fabrication_rate"]["k"] == len(fab)
    assert head["transient_lookups"]["k"] == int(truth["transient"].sum())
    # the conformal rule: flagged iff score <= tau
    tau = s["conformal"]["tau"]
    sc = cites[cites["support_score"].notna()]
    assert ((sc["support_score"] <= tau) == (sc["flag_reason"] == "score_at_or_below_tau")).all()
    # behaviour and checklist numbers are present with intervals
    for metric in ("solve_rate", "zero_tool_rate", "cite_rate", "flag_rate"):
        assert head[metric]["lo"] <= head[metric]["estimate"] <= head[metric]["hi"]
    assert head["cite_rate"]["estimate"] == 1.0  # every planted answer cites


def test_board_placement(audited: AuditRun) -> None:
    b = _summary(audited)["board"]
    assert b["agent"] == AGENT
    assert b["n_systems"] == 4
    assert 1 <= b["rank_lo"] <= b["rank_hi"] <= 4
    others = {p["other"] for p in b["pairs"]}
    assert others == {"A", "B", "C"}
    comp = [p for p in b["pairs"] if p["readout"] == "composite"]
    assert len(comp) == 3
    # true effect +0.3 against -0.1: certified better than C
    c = next(p for p in comp if p["other"] == "C")
    assert c["verdict"] == "certified" and c["agent_better"] == "yes"
    page = (audited.out / "report.html").read_text()
    assert "<svg" in page and "certified rank interval" in page


def test_receipt_chain(audited: AuditRun) -> None:
    chain = verify_chain(audited.out)
    names = {a["name"] for a in chain}
    assert {"inputs", "report.html", "summary.json", "citations.csv", "runs.csv"} <= names
    root = next(a for a in chain if a["name"] == "inputs")
    assert all(a["parent"] == root["content_hash"] for a in chain if a["name"] != "inputs")
    r = invoke("verify", "receipts", str(audited.out))
    assert r.exit_code == 0, r.output
    assert "sealed files match" in r.output and "every file in" in r.output


def test_page_is_self_contained(audited: AuditRun) -> None:
    page = (audited.out / "report.html").read_text()
    assert not re.search(r"https?://", page, re.IGNORECASE)
    for bad in ("<link", "<script src", "@import", "url(", "<img src", "<iframe"):
        assert bad not in page.lower(), bad
    assert "Recovered vs planted" in page and "Flagged citations" in page


def test_page_renders_in_headless_chromium(audited: AuditRun, tmp_path: Path) -> None:
    """Screenshots: the audit with its (SYNTHETIC) board, and the same audit without a board."""
    from kit.report.audit_page import render_audit_page

    png = screenshot(audited.out / "report.html", artifact(tmp_path, "audit-synthetic-board.png"))
    assert png.stat().st_size > 10_000  # a blank page is a few kB
    s = _summary(audited)
    s["board"] = None
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    plain = tmp_path / "plain.html"
    plain.write_text(render_audit_page(s, cites, None, {}))
    assert "SYNTHETIC" not in plain.read_text().split("<h2>Glossary")[0]
    png = screenshot(plain, artifact(tmp_path, "audit-default.png"))
    assert png.stat().st_size > 10_000


RAW = re.compile(r"\b(True|False|None)\b|\d\.\d{6,}")  # Python reprs: bools, None, long floats


def test_stdout_is_human_readable(audited: AuditRun) -> None:
    out = audited.result.output
    assert not RAW.search(out), RAW.search(out)
    lines = out.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("audited 40 runs"))
    assert lines[i + 2].startswith("Of 40 citations in 40 runs: ")  # the verdict first
    assert "cite papers that do not exist" in lines[i + 2]
    b = _summary(audited)["board"]
    assert "board placement:" in lines
    placement = lines[lines.index("board placement:") + 1]
    assert placement.startswith(f"  SYNTHETIC board: {AGENT} places ")
    assert f"[{b['rank_lo']}, {b['rank_hi']}]" in placement and "of 4 systems" in placement
    assert "recovered vs planted:" in lines and "covered None" not in out


def test_page_answers_first_in_the_browser(audited: AuditRun, tmp_path: Path) -> None:
    """DOM after load: the verdict opens the page, the headline wrong-paper number is marked,
    the board placement is labelled SYNTHETIC, metric names are words with definitions."""
    dom = dump_dom(audited.out / "report.html", tmp_path / "profile")
    body = dom.split("<body>", 1)[1]
    verdict = re.search(r'<div id="verdict" class="answer">(.*?)</div>', body, re.S)
    assert verdict and body.index('id="verdict"') < body.index("<h2>")
    text = html.unescape(re.sub(r"<[^>]+>", "", verdict.group(1)))
    c = _summary(audited)["counts"]
    assert text.startswith(f"Of {c['citations']} citations in {c['runs']} runs: ")
    assert re.search(r"\d+\.\d% \[\d+\.\d, \d+\.\d\] cite papers that do not exist", text)
    assert "cite a real paper that does not support the claim" in text
    assert "catches >= 90% of unsupported citations if they resemble" in text
    row = re.search(r'<tr class="headline" id="metric-([a-z_]+)">', body)
    assert row and row.group(1) == "wrong_paper_corrected"
    assert body.count('class="headline"') == 1
    assert "citations of papers that do not exist" in body  # the metric in words
    board = body.split('<h2 id="board-placement">', 1)[1]
    assert board.startswith("Board placement (SYNTHETIC board)</h2>")
    assert '<p id="synthetic" class="synthetic">SYNTHETIC board' in board
    assert ">SYNTHETIC</text>" in board  # on the chart
    assert "exact" not in re.sub(r"<[^>]+>", " ", board.split("</table>")[0].split("<table>")[-1])
    assert '<dl id="glossary" class="glossary">' in body and "<dt>tau</dt>" in body


def test_rerun_reuses_cache_and_is_identical(audited: AuditRun, tmp_path: Path) -> None:
    before = {n: (audited.out / n).read_bytes() for n in ("summary.json", "citations.csv")}
    r = invoke(*audited.args)
    assert r.exit_code == 0, r.output
    assert ", 0 scored" in r.output  # every score came from the cache
    for n, data in before.items():
        assert (audited.out / n).read_bytes() == data, n
    assert "audit: 40/40 runs" in r.stderr  # progress over runs on stderr


def _store_counts(output: str) -> tuple[int, int]:
    m = re.search(r"score store (\d+) hit\(s\), (\d+) scored", output)
    assert m, output
    return int(m.group(1)), int(m.group(2))


def test_reaudit_into_a_new_folder_scores_nothing_and_is_identical(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    """Cold store, then a re-audit of the same runs into a NEW folder: zero pairs scored, no
    shard added, byte-identical outputs (--no-cache: tests/guard/scoring/test_score_store.py)."""
    runs = tmp_path / "runs" / "runs.jsonl"
    runs.parent.mkdir()
    runs.write_text("\n".join((planted_dir / "runs.jsonl").read_text().splitlines()[:5]) + "\n")
    store = tmp_path / "scores"
    names = ("summary.json", "citations.csv", "runs.csv", "report.html")
    got = {}
    for run in ("cold", "warm"):
        args = audit_args(
            planted_dir, audit_verifier, registry_raw, tmp_path / run, "--n-cal", "12"
        )
        args[1] = str(runs)
        r = invoke(*args, "--cache-dir", str(store))
        assert r.exit_code == 0, r.output
        got[run] = (_store_counts(r.output), {n: (tmp_path / run / n).read_bytes() for n in names})
        if run == "cold":
            shards = sorted(store.glob("*/*/shard-*.parquet"))
    (hits, scored), cold = got["cold"]
    assert scored > 0
    assert got["warm"][0] == (hits + scored, 0)
    assert got["warm"][1] == cold
    assert sorted(store.glob("*/*/shard-*.parquet")) == shards  # the warm run added none
