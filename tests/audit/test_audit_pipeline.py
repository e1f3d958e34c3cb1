"""The one audit pipeline: claims -> citation rows, what the agent read, L2 evidence rule, and
`kit audit` / `kit grade audit-citations` giving the same L1/L2 figures (tiny test verifier)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result

from kit.audit.evidence import agent_read, argument_keys, response_segment, unread_refs
from kit.cli import cli
from kit.core.schema import read_table, validate_json
from kit.corpus.identifiers import find_identifiers
from kit.grade.citation_audit import (
    AgentRead,
    SupportRule,
    audit_citations,
    citation_rows,
    claim_for,
    score_support,
)
from kit.runs.model import Citation
from kit.runs.v1 import run_from_dict
from kit.runs.v2 import run_v2_from_dict

REPO = Path(__file__).resolve().parents[2]
V1 = REPO / "examples" / "grade" / "runs.jsonl"
RULE = SupportRule(0.84, 0.80)
P1 = Citation("PMID", "21645374")
P2 = Citation("PMID", "9488747")


def _v2(**kw: object) -> dict:
    return {"format_version": 2, "run_id": "r1", "task_id": "t1", "model": "m"} | kw


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# ----------------------------------------------------------------------------- claims


def test_rows_from_claims_and_v1_rows_unchanged() -> None:
    run = run_v2_from_dict(
        _v2(
            answer="A. B.",
            citations=[
                {"id": "21645374", "scheme": "pmid", "key": "1"},
                {"id": "9488747", "scheme": "pmid", "key": "2"},
                {"id": "10.1000/xyz", "scheme": "doi"},
            ],
            claims=[
                {"text": "Claim one.", "cites": ["1", "2"]},
                {"text": "Claim two.", "cites": ["2"]},
                {"text": "No citation here.", "cites": []},
            ],
        )
    )
    rows = citation_rows([run])
    got = list(rows[["claim_no", "citation", "claim"]].itertuples(index=False, name=None))
    assert got == [
        (1, "PMID:21645374", "Claim one."),
        (1, "PMID:9488747", "Claim one."),
        (2, "PMID:9488747", "Claim two."),
        (0, "doi:10.1000/xyz", claim_for(run.answer, Citation("DOI", "10.1000/xyz"))),
    ]
    v1 = [
        run_from_dict(json.loads(line), str(V1), i)
        for i, line in enumerate(V1.read_text().splitlines(), 1)
    ]
    rows = citation_rows(v1)
    assert (rows["claim_no"] == 0).all()
    expected = [(r.run_id, c.label, claim_for(r.answer, c)) for r in v1 for c in r.cited]
    assert sorted(rows[["run_id", "citation", "claim"]].itertuples(index=False, name=None)) == (
        sorted(expected)
    )


# ----------------------------------------------------------------------------- agent read


def test_find_identifiers_reads_every_spelling_and_never_bare_numbers() -> None:
    text = (
        'PMID: 21645374; {"pmid": "9488747"} https://pubmed.ncbi.nlm.nih.gov/123/ PMC55 '
        "nct01234567 arXiv:2101.00001v2 doi:10.1000/ABC see 4444"
    )
    keys = [i.key for _, _, i in find_identifiers(text)]
    assert keys == [
        ("PMID", "21645374"),
        ("PMID", "9488747"),
        ("PMID", "123"),
        ("PMCID", "PMC55"),
        ("NCT", "NCT01234567"),
        ("ARXIV", "2101.00001"),
        ("DOI", "10.1000/abc"),
    ]


FETCHED = "Abstract: mitochondria cluster at the nucleus."  # names no id: asked for by argument


def test_response_segment_and_argument_rule() -> None:
    search = (
        "PMID: 21645374\nTitle: lace plant PCD\nmitochondria surround the nucleus\n\n"
        "PMID: 9488747\nTitle: Snellen E\nacuity overestimated"
    )
    seg = response_segment(search, P1)
    assert seg is not None and "lace plant" in seg and "Snellen" not in seg
    seg2 = response_segment(search, P2)
    assert seg2 is not None and "Snellen" in seg2 and "lace" not in seg2
    assert response_segment("only PMID:21645374 here, text", P1) == "only PMID:21645374 here, text"
    assert response_segment("nothing relevant", P1) is None
    assert argument_keys({"pmid": "21645374", "q": "x"}) == {("PMID", "21645374")}
    assert argument_keys({"ids": ["doi:10.1000/A", 7]}) == {("DOI", "10.1000/a")}
    run = run_v2_from_dict(
        _v2(
            answer="Mitochondria surround the nucleus (PMID: 21645374).",
            tool_calls=[
                {"tool": "fetch", "arguments": {"pmid": "21645374"}, "response_text": FETCHED},
                {"tool": "search", "arguments": {"q": "x"}, "response_text": search},
                {"tool": "down", "status": "error", "response_text": "PMID: 21645374 err"},
                {"tool": "stored", "response_ref": "responses.jsonl#1"},
            ],
        )
    )
    read = agent_read(run, P1)
    assert read is not None and read.calls == (0, 1)
    assert read.text.startswith(FETCHED + "\n\nPMID: 21645374") and "Snellen" not in read.text
    assert agent_read(run, Citation("NCT", "NCT01234567")) is None
    assert unread_refs([run]) == 1


class _Lookup:
    """A scorer that knows fixed scores per passage and records what it was asked."""

    def __init__(self, by_passage: dict[str, float]) -> None:
        self.by_passage = by_passage
        self.calls: list[tuple[list[str], list[str]]] = []

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        self.calls.append((list(claims), list(passages)))
        return np.array([self.by_passage[p] for p in passages])


def test_l2_rule_agent_read_first_then_corpus() -> None:
    rows = pd.DataFrame(
        {
            "run_id": ["a", "a", "a", "a"],
            "citation": ["PMID:1", "PMID:2", "doi:10.1/x", "PMID:3"],
            "id_type": ["PMID", "PMID", "DOI", "PMID"],
            "value": ["1", "2", "10.1/x", "3"],
            "claim": ["c1", "c2", "c3", "c4"],
            "l1": ["found", "found", "unchecked", "notfound"],
        }
    )
    corpus = {"1": "abs1", "2": "abs2"}
    scorer = _Lookup({"abs1": 0.9, "abs2": 0.5, "tool1": 0.1, "tool3": 0.95, "tool4": 0.99})
    read = [AgentRead("tool1", (0,)), None, AgentRead("tool3", (1, 2)), AgentRead("tool4", (0,))]
    out = score_support(rows, scorer, lambda _t, v: corpus.get(v), RULE, read)
    assert list(out["evidence"]) == ["tool_response", "corpus", "tool_response", "none"]
    assert list(out["evidence_calls"]) == ["0", "", "1;2", ""]
    assert out["tool_score"].iloc[0] == 0.1 and out["corpus_score"].iloc[0] == 0.9
    assert list(out["support_score"].iloc[:3]) == [0.1, 0.5, 0.95]
    assert list(out["l2"]) == ["no", "no", "yes", ""]  # notfound is never scored
    # without agent-read passages the scorer sees exactly the corpus pairs (v1 unchanged)
    scorer.calls.clear()
    plain = score_support(rows, scorer, lambda _t, v: corpus.get(v), RULE)
    assert scorer.calls == [(["c1", "c2"], ["abs1", "abs2"])]
    assert list(plain["evidence"]) == ["corpus", "corpus", "none", "none"]
    resolver = {"PMID": type("R", (), {"resolve": lambda self, v: {x: "found" for x in v}})()}
    both = audit_citations(rows.drop(columns="l1"), resolver, scorer, None, RULE)
    assert list(both["l1"][:2]) == ["found", "found"] and (both["l2"] == "").all()


# ----------------------------------------------------------------------------- one pipeline


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "verifier")


def _mixed_runs(path: Path) -> Path:
    """Two v1 lines and three v2 runs, two of which read tool responses naming their papers."""
    v1 = V1.read_text().splitlines()[:2]
    v2 = [
        _v2(
            run_id="v2-read",
            answer="Mitochondria surround the nucleus in lace plant PCD [1]. Acuity differs [2].",
            citations=[
                {"id": "21645374", "scheme": "pmid", "key": "1"},
                {"id": "9488747", "scheme": "pmid", "key": "2"},
            ],
            tool_calls=[
                {
                    "tool": "search",
                    "arguments": {"q": "lace plant"},
                    "response_text": "PMID: 21645374\nmitochondria in lace plant PCD\n\n"
                    "PMID: 9488747\nSnellen E and Landolt C",
                }
            ],
        ),
        _v2(
            run_id="v2-doi",
            answer="A result (doi:10.1000/abc).",
            tool_calls=[
                {"tool": "fetch", "response_text": "doi:10.1000/ABC: a result text on the finding."}
            ],
        ),
        _v2(run_id="v2-plain", answer="Nothing read (PMID: 9488747)."),
    ]
    path.write_text("\n".join(v1 + [json.dumps(x) for x in v2]) + "\n")
    return path


def test_audit_and_grade_view_agree_on_l1_l2(
    tiny: Path, registry_raw: Path, tmp_path: Path
) -> None:
    runs = _mixed_runs(tmp_path / "runs.jsonl")
    common = ["--raw", str(registry_raw), "--verifier", str(tiny), "--quiet"]
    common += ["--cache-dir", str(tmp_path / "scores")]
    r = _invoke("audit", str(runs), "--out", str(tmp_path / "audit"), "--n-cal", "10", *common)
    assert r.exit_code == 0, r.output
    rates_csv, rows_csv = tmp_path / "rates.csv", tmp_path / "rows.csv"
    g = _invoke(
        "grade", "audit-citations", str(runs), *common,
        "--out", str(rates_csv), "--citations-out", str(rows_csv),
    )  # fmt: skip
    assert g.exit_code == 0, g.output
    assert "0 scored" in g.output  # every L1/L2 pair was scored by the audit already
    summary = json.loads((tmp_path / "audit" / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    cols = ["by", "group", "n_cited", "found", "notfound", "transient", "unchecked"]
    cols += ["l2_scored", "l2_yes", "l2_partial", "l2_no"]
    from_audit = pd.DataFrame(summary["citation_rates"])[cols]
    from_grade = pd.read_csv(rates_csv, keep_default_na=False)[cols]
    pd.testing.assert_frame_equal(from_audit, from_grade, check_dtype=False)
    a = read_table(tmp_path / "audit" / "citations.csv", "audit_citations")
    b = pd.read_csv(rows_csv, keep_default_na=False).sort_values(
        ["run_id", "claim_no", "citation"], kind="stable"
    )
    key = ["run_id", "claim_no", "citation", "l1", "evidence", "l2"]
    assert a[key].astype(str).values.tolist() == b[key].astype(str).values.tolist()
    np.testing.assert_allclose(
        a["support_score"].to_numpy(float),
        pd.to_numeric(b["support_score"]).to_numpy(float),
        rtol=1e-5,  # the rates csv prints 6 significant digits
    )
    # what the agent read decided L2 where it named the paper: the segment of each record
    read = a[a["run_id"] == "v2-read"]
    assert list(read["evidence"]) == ["tool_response", "tool_response"]
    assert (read["support_score"] == read["tool_score"]).all()
    assert read["corpus_score"].notna().all() and (read["l1"] == "found").all()
    doi = a[a["run_id"] == "v2-doi"].iloc[0]
    assert (doi["l1"], doi["evidence"], doi["l2"] != "") == ("unchecked", "tool_response", True)
    assert a.loc[a["run_id"] == "v2-plain", "evidence"].tolist() == ["corpus"]
    assert summary["counts"]["evidence"]["tool_response"] == 3
    assert any("checked first against what the agent read" in n for n in summary["notes"])


def test_limit_audits_the_first_runs_in_file_order(
    tiny: Path, registry_raw: Path, tmp_path: Path
) -> None:
    runs = _mixed_runs(tmp_path / "runs.jsonl")
    out = tmp_path / "audit"
    r = _invoke(
        "audit", str(runs), "--out", str(out), "--n-cal", "10", "--limit", "3",
        "--raw", str(registry_raw), "--verifier", str(tiny), "--quiet",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "--limit 3: auditing the first 3 of 5 runs" in r.output
    s = json.loads((out / "summary.json").read_text())
    assert (s["counts"]["limit"], s["counts"]["runs"], s["counts"]["runs_in_file"]) == (3, 3, 5)
    first3 = [json.loads(x)["run_id"] for x in runs.read_text().splitlines()[:3]]
    assert sorted(pd.read_csv(out / "runs.csv")["run_id"]) == sorted(first3)
    assert any("--limit 3" in n for n in s["notes"])
    bad = _invoke("audit", str(runs), "--out", str(out), "--limit", "0")
    assert bad.exit_code == 2


def test_the_audit_loads_its_verifier_through_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/bench_audit.py measures the two-stage mode by replacing
    ``kit.guard.verifiers.load.load_verifier``; that only works while the audit looks it up there at
    call time (an earlier bench patched a name the audit no longer used and measured the
    cross-encoder twice)."""
    from types import SimpleNamespace

    import kit.guard.verifiers.load as kv
    from kit.audit.pipeline import open_context

    class Reached(Exception):
        pass

    def load(*args: object, **kwargs: object) -> None:
        raise Reached

    monkeypatch.setattr(kv, "load_verifier", load)
    opts = SimpleNamespace(verifier="x", variant="int8", device="cpu", batch_size=32)
    with pytest.raises(Reached):
        open_context(opts, None)  # type: ignore[arg-type]
