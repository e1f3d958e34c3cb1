"""`kit import jsonl FILE --map ...`: any JSON Lines file of runs -> run format v2 (docs/runs.md).

The input lines are hand-built in the shape a lab's own logging might take (nested output,
integer task ids, a reference list of identifier strings); the round trip reads the written
file back with the v2 reader the audit uses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.runs.importers.jsonl import MISSING, import_jsonl, lookup, parse_map
from kit.runs.reader import read_runs

MAP = "run_id=id,task_id=task.id,model=meta.model,answer=output.choices.0.text,cited=refs"
LINES = [
    {
        "id": "r1",
        "task": {"id": 7},
        "meta": {"model": "lab/agent-1"},
        "output": {"choices": [{"text": "Aspirin lowers risk (PMID: 123). Statins help."}]},
        "refs": ["PMID:123", "10.1000/abc", "PMC42", "NCT01234567", "arXiv:2101.00001", "x-9"],
        "score": {"acc": 1.0, "judge": "ok"},
        "claims": [{"text": "Aspirin lowers risk.", "cites": ["PMID:123"]}, "Statins help."],
    },
    {
        "id": "r2",
        "task": {"id": "t-8"},
        "meta": {"model": "lab/agent-1"},
        "output": {"choices": [{"text": "No idea."}]},
        "refs": [],
        "score": {"acc": 0.0, "judge": None},
        "claims": [],
    },
    {
        "id": 3,
        "task": {"id": 9},
        "meta": {"model": "lab/agent-2"},
        "output": {"choices": [{"text": "See doi:10.1000/xyz for the trial."}]},
        "refs": [{"id": "10.1000/xyz", "scheme": "doi", "key": "1", "title": "T"}],
        "score": {"acc": 0.5, "judge": "partial"},
        "claims": [],
    },
]


def _write(tmp: Path, lines: list, name: str = "raw.jsonl") -> Path:
    p = tmp / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["import", "jsonl", *args])


def test_round_trip_through_the_v2_reader(tmp_path: Path) -> None:
    src = _write(tmp_path, LINES)
    out = tmp_path / "runs.jsonl"
    r = _invoke(str(src), "--map", MAP + ",scores=score", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "jsonl" in r.output and "3" in r.output
    runs = read_runs(out).runs
    assert [x.run_id for x in runs] == ["r1", "r2", "3"]
    assert [x.task_id for x in runs] == ["7", "t-8", "9"]
    assert [x.model for x in runs] == ["lab/agent-1", "lab/agent-1", "lab/agent-2"]
    assert runs[0].answer == LINES[0]["output"]["choices"][0]["text"]
    assert all(x.format_version == 2 and not x.tools_enabled for x in runs)
    schemes = [c.id_type for c in runs[0].cited]
    assert schemes[:5] == ["PMID", "DOI", "PMCID", "NCT", "ARXIV"] and schemes[5] == "OTHER"
    assert runs[0].scores == {"acc": 1.0, "judge": "ok"} and runs[1].scores["judge"] is None
    assert runs[0].metadata == {"harness": "jsonl", "source": "raw.jsonl", "line": 1}
    # claims extracted from the answer: the (PMID: 123) marker names the listed PMID
    cited = {c for claim in runs[0].claims for c in claim.cites}
    assert cited == {"PMID:123"}
    # --limit, and the file written is exactly what the reader re-reads
    out2 = tmp_path / "two.jsonl"
    assert _invoke(str(src), "--map", MAP, "--out", str(out2), "--limit", "2").exit_code == 0
    assert len(read_runs(out2).runs) == 2


def test_explicit_claims_and_model_option(tmp_path: Path) -> None:
    src = _write(tmp_path, LINES)
    out = tmp_path / "runs.jsonl"
    mapping = "run_id=id,task_id=task.id,answer=output.choices.0.text,cited=refs,claims=claims"
    r = _invoke(str(src), "--map", mapping, "--model", "M", "--out", str(out))
    assert r.exit_code == 0, r.output
    runs = read_runs(out).runs
    assert {x.model for x in runs} == {"M"}
    assert [c.text for c in runs[0].claims] == ["Aspirin lowers risk.", "Statins help."]
    assert runs[0].claims[0].cites == ("PMID:123",) and runs[0].claims[1].cites == ()


def test_cited_scheme_reads_bare_ids(tmp_path: Path) -> None:
    line = {"id": "a", "t": "q1", "m": "x", "ans": "Text.", "refs": ["123", "456"]}
    src = _write(tmp_path, [line])
    out = tmp_path / "runs.jsonl"
    m = "run_id=id,task_id=t,model=m,answer=ans,cited=refs"
    assert _invoke(str(src), "--map", m, "--out", str(out), "--id-scheme", "pmid").exit_code == 0
    assert [(c.id_type, c.value) for c in read_runs(out).runs[0].cited] == [
        ("PMID", "123"),
        ("PMID", "456"),
    ]
    assert _invoke(str(src), "--map", m, "--out", str(out)).exit_code == 0
    assert {c.id_type for c in read_runs(out).runs[0].cited} == {"OTHER"}


def test_missing_mapped_field_names_file_line_field(tmp_path: Path) -> None:
    lines = [LINES[0], {k: v for k, v in LINES[1].items() if k != "output"}]
    src = _write(tmp_path, lines)
    out = tmp_path / "runs.jsonl"
    r = _invoke(str(src), "--map", MAP, "--out", str(out))
    assert r.exit_code == 2
    assert f"{src}, row 2, column 'output.choices.0.text'" in r.output
    assert "mapped to answer" in r.output and "Traceback" not in r.output
    assert not out.exists()  # nothing half-written


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda x: x | {"output": {"choices": [{"text": 5}]}}, "output.choices.0.text"),
        (lambda x: x | {"task": {"id": True}}, "task.id"),
        (lambda x: x | {"refs": [17]}, "refs[0]"),
        (lambda x: x | {"refs": [{"id": "abc", "scheme": "pmid"}]}, "refs[0].id"),
        (lambda x: x | {"refs": [{"id": "1", "scheme": "isbn"}]}, "refs[0].scheme"),
    ],
)
def test_mistyped_fields_exit_2(tmp_path: Path, edit, field: str) -> None:
    src = _write(tmp_path, [LINES[1], edit(dict(LINES[0]))])
    r = _invoke(str(src), "--map", MAP, "--out", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2, r.output
    assert f"row 2, column '{field}'" in r.output


def test_required_mapping_absent_exits_2_naming_it(tmp_path: Path) -> None:
    src = _write(tmp_path, LINES)
    out = str(tmp_path / "o.jsonl")
    r = _invoke(str(src), "--map", "run_id=id,task_id=task.id,answer=output.text", "--out", out)
    assert r.exit_code == 2 and "missing_mapping" in r.output and "model" in r.output
    r = _invoke(str(src), "--map", "run_id=id,model=m,task_id=task.id", "--out", out)
    assert r.exit_code == 2 and "lacks the required mapping(s) answer" in r.output
    with pytest.raises(ConfigError, match="run_id, task_id"):
        parse_map("answer=a")


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("run_id=id,task_id=t,model=m,answer=a,bogus=x", "not a run field"),
        ("run_id=id,run_id=x,task_id=t,model=m,answer=a", "twice"),
        ("run_id=id,task_id=t..x,model=m,answer=a", "empty key"),
        ("run_id,task_id=t,model=m,answer=a", "TARGET=FIELD"),
    ],
)
def test_bad_map_specs(spec: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_map(spec)
    with pytest.raises(ConfigError, match="both mapped"):
        parse_map("run_id=i,task_id=t,model=m,answer=a", model="M")


def test_duplicate_run_id_names_both_lines(tmp_path: Path) -> None:
    src = _write(tmp_path, [LINES[0], LINES[1] | {"id": "r1"}])
    r = _invoke(str(src), "--map", MAP, "--out", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2 and "row 2, column 'id'" in r.output and "first on line 1" in r.output


def test_lookup_paths(tmp_path: Path) -> None:
    obj = {"a": {"b": [{"c": 1}, {"c": 2}]}, "n": None}
    assert lookup(obj, ("a", "b", "1", "c")) == 2
    assert lookup(obj, ("a", "b", "2", "c")) is MISSING  # past the list's end
    assert lookup(obj, ("a", "x")) is MISSING and lookup(obj, ("n",)) is None
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no JSON line"):
        import_jsonl(empty, tmp_path / "o.jsonl", "run_id=i,task_id=t,model=m,answer=a")


def test_status_error_and_limit_are_mapped_and_checked(tmp_path: Path) -> None:
    lines = [
        LINES[0] | {"fate": "ok"},
        LINES[1] | {"fate": "error", "why": "tool server down"},
        LINES[2] | {"fate": "limit", "which": "message"},
    ]
    spec = MAP + ",status=fate,error=why,limit=which"
    out = tmp_path / "runs.jsonl"
    s = import_jsonl(_write(tmp_path, lines), out, spec)
    assert (s.written, s.failed, s.cancelled) == (3, 1, 1)
    r1, r2, r3 = read_runs(out).runs
    assert r1.status == "ok" and [c.label for c in r1.cited][:1] == ["PMID:123"]
    assert (r2.status, r2.error, r2.cited) == ("error", "tool server down", ())
    assert (r3.status, r3.limit, r3.cited, r3.claims) == ("limit", "message", (), ())
    bad = _write(tmp_path, [LINES[0] | {"fate": "failed"}], "bad.jsonl")
    with pytest.raises(InputError) as exc:
        import_jsonl(bad, out, spec)
    assert (exc.value.where.row, exc.value.where.column) == (1, "fate")
    no_limit = _write(tmp_path, [LINES[0] | {"fate": "limit"}], "nolimit.jsonl")
    with pytest.raises(InputError, match="limit="):
        import_jsonl(no_limit, out, MAP + ",status=fate")
