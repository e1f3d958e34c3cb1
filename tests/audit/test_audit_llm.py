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

from kit.grade.judge_prompt import DEFAULT_TEMPLATE
from kit.schema import validate_json


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
