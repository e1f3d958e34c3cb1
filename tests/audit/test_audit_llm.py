"""Issue 40 part 1: `kit audit --verifier CARD` with an LLM card, through a loopback server.

The chat model is the synthetic word-overlap judge of tests/llm_server.py on 127.0.0.1; the
audit scores its calibration pairs and the planted runs' citations with it. A second audit
asks the model nothing: every score comes from the shared score store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_helpers import invoke
from llm_server import MODEL, serve

from kit.core.schema import validate_json
from kit.grade.judge_prompt import DEFAULT_TEMPLATE


def test_audit_with_an_llm_card_and_a_warm_store_asks_nothing(
    tmp_path: Path, planted_dir: Path, registry_raw: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "store"))
    card = tmp_path / "card"

    def audit(out: Path):
        return invoke(
            "audit",
            str(planted_dir / "runs.jsonl"),
            "--checklists",
            str(planted_dir / "checklists.jsonl"),
            "--raw",
            str(registry_raw),
            "--verifier",
            str(card),
            "--n-cal",
            "30",
            "--out",
            str(out),
        )

    with serve() as srv:
        r = invoke(
            "guard", "import-verifier", "--base-url", srv.url, "--model", MODEL, "--out", str(card)
        )
        assert r.exit_code == 0, r.output
        r = audit(tmp_path / "a1")
        assert r.exit_code == 0, r.output
        asked = srv.state.chat
        assert asked > 30  # the calibration pairs and the citations were asked
        summary = json.loads((tmp_path / "a1" / "summary.json").read_text())
        validate_json(summary, "audit_summary", "summary.json")
        sha = json.loads((card / "card.json").read_text())["instrument_sha256"]
        assert summary["verifier"]["instrument_sha256"] == sha
        assert "onnx_sha256" not in summary["verifier"]
        r = audit(tmp_path / "a2")
        assert r.exit_code == 0, r.output
        assert srv.state.chat == asked  # a re-audit never re-asks the model
    a1 = json.loads((tmp_path / "a1" / "summary.json").read_text())
    a2 = json.loads((tmp_path / "a2" / "summary.json").read_text())
    assert a1["headline"] == a2["headline"]
    assert (tmp_path / "a1" / "citations.csv").read_bytes() == (
        tmp_path / "a2" / "citations.csv"
    ).read_bytes()


def test_audit_with_an_llm_checklist_judge_card(
    tmp_path: Path, planted_dir: Path, registry_raw: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kit audit --judge CARD` grades the checklists with the LLM judge (issue 40 part 2); a
    re-audit asks nothing; a failing judge exits 2 with no report."""
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "store"))
    card, judge = tmp_path / "card", tmp_path / "judge"

    def audit(out: Path, *extra: str):
        return invoke(
            "audit",
            str(planted_dir / "runs.jsonl"),
            "--checklists",
            str(planted_dir / "checklists.jsonl"),
            "--raw",
            str(registry_raw),
            "--verifier",
            str(card),
            "--judge",
            str(judge),
            "--n-cal",
            "30",
            "--limit",
            "40",
            "--out",
            str(out),
            *extra,
        )

    with serve() as srv:
        for cmd, out in (("guard import-verifier", card), ("grade import-judge", judge)):
            args = ("--base-url", srv.url, "--model", MODEL, "--retries", "0", "--out", str(out))
            r = invoke(*cmd.split(), *args)
            assert r.exit_code == 0, r.output
        r = audit(tmp_path / "a1")
        assert r.exit_code == 0, r.output
        asked = srv.state.chat
        r = audit(tmp_path / "a2")
        assert r.exit_code == 0, r.output
        assert srv.state.chat == asked  # verdicts and scores from the store
        # another judge (another prompt: another instrument), so every verdict is a store miss
        alt = tmp_path / "alt.txt"
        alt.write_text(DEFAULT_TEMPLATE.replace("frozen checklist", "fixed checklist"))
        args = ("--base-url", srv.url, "--model", MODEL, "--retries", "0", "--prompt", str(alt))
        r = invoke("grade", "import-judge", *args, "--out", str(tmp_path / "judge2"))
        assert r.exit_code == 0, r.output
        srv.state.mode = "error500"
        r = invoke(
            "audit",
            str(planted_dir / "runs.jsonl"),
            "--checklists",
            str(planted_dir / "checklists.jsonl"),
            "--raw",
            str(registry_raw),
            "--verifier",
            str(card),
            "--judge",
            str(tmp_path / "judge2"),
            "--n-cal",
            "30",
            "--limit",
            "40",
            "--out",
            str(tmp_path / "a3"),
        )
    s1 = json.loads((tmp_path / "a1" / "summary.json").read_text())
    validate_json(s1, "audit_summary", "summary.json")
    name = json.loads((judge / "card.json").read_text())["name"]
    assert s1["checklist"]["judge"].startswith(f"{name} (LLM checklist judge")
    s2 = json.loads((tmp_path / "a2" / "summary.json").read_text())
    assert s1["headline"] == s2["headline"]
    assert r.exit_code == 2 and "gave no verdict" in r.output, r.output
    assert not (tmp_path / "a3").exists()
    bad = invoke(
        "audit",
        str(planted_dir / "runs.jsonl"),
        "--judge",
        str(card),  # a verifier card is no judge
        "--checklists",
        str(planted_dir / "checklists.jsonl"),
        "--out",
        str(tmp_path / "a4"),
    )
    assert bad.exit_code == 2 and "not a checklist judge" in bad.output, bad.output


def test_refused_citations_are_missing_scores_flagged_for_review(
    tmp_path: Path, planted_dir: Path, registry_raw: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40 F: an endpoint that refuses some questions (HTTP 400, a content filter) does
    not stop the audit: those citations have no support score, l2 and flag reason 'refused',
    are counted in summary.json and on stdout, and every other score is the same number."""
    import re

    import pandas as pd

    card = tmp_path / "card"

    def audit(out: Path):
        return invoke(
            "audit",
            str(planted_dir / "runs.jsonl"),
            "--checklists",
            str(planted_dir / "checklists.jsonl"),
            "--raw",
            str(registry_raw),
            "--verifier",
            str(card),
            "--n-cal",
            "30",
            "--limit",
            "40",
            "--out",
            str(out),
        )

    with serve() as srv:
        args = ("--base-url", srv.url, "--model", MODEL, "--retries", "0", "--out", str(card))
        assert invoke("guard", "import-verifier", *args).exit_code == 0
        monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "store1"))
        r = audit(tmp_path / "a1")
        assert r.exit_code == 0, r.output
        before = pd.read_csv(tmp_path / "a1" / "citations.csv", keep_default_na=False)
        scored = before[before["support_score"] != ""]
        claim = str(scored["claim"].iloc[0])
        word = max(re.findall(r"[a-z]{6,}", claim.lower()), key=len)
        monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "store2"))  # every score asked again
        srv.state.mode, srv.state.filtered = "filter", (word,)
        r = audit(tmp_path / "a2")
        assert r.exit_code == 0, r.output
    after = pd.read_csv(tmp_path / "a2" / "citations.csv", keep_default_na=False)
    refused = after["l2"] == "refused"
    assert refused.iloc[scored.index[0]]  # the citation whose claim holds the word
    assert (after.loc[refused, "support_score"] == "").all()
    assert (after.loc[refused, "flag_reason"] == "refused").all()
    kept = ~refused & (before["support_score"] != "")
    assert (after.loc[kept, "support_score"] == before.loc[kept, "support_score"]).all()
    s = json.loads((tmp_path / "a2" / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    n = int(refused.sum())
    assert s["counts"]["l2"]["refused"] == n == s["counts"]["flagged"]["refused"]
    assert f"{n} citation(s) have no support score: the verifier's endpoint refused" in r.output
    head = {m["metric"]: m for m in s["headline"]}
    assert head["wrong_paper_rate"]["n"] == int((after["support_score"] != "").sum())
