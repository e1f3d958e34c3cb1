"""`kit grade ...` through kit.cli.cli: exit codes 0 / 1 / 2 and output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kit.cli import cli

EX = Path(__file__).resolve().parents[2] / "examples" / "grade"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["grade", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    "cmd",
    [
        [],
        ["runs"],
        ["judge"],
        ["checklist"],
        ["audit-citations"],
        ["behaviour"],
        ["replay"],
        ["replay", "check"],
        ["replay", "get"],
        ["replay", "key"],
        ["frozen-core"],
        ["planted"],
    ],
)
def test_help_has_example(cmd: list[str]) -> None:
    r = _invoke(*cmd, "--help")
    assert r.exit_code == 0 and ("Example" in r.output)


def test_runs_ok_and_bad(tmp_path: Path) -> None:
    r = _invoke("runs", str(EX / "runs.jsonl"), "--format", "csv")
    assert r.exit_code == 0 and r.output.startswith("run_id,task_id,model")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes((EX / "runs.jsonl").read_bytes() + b'{"run_id": "x"}\n')
    r = _invoke("runs", str(bad))
    assert r.exit_code == 2
    assert f"{bad}, row 6, column 'task_id'" in r.output and "Traceback" not in r.output
    r = _invoke("runs", str(bad), "--skip-bad", "--format", "csv")
    assert r.exit_code == 0 and "1 line(s) skipped" in r.output


def test_judge_then_checklist(tmp_path: Path) -> None:
    v = tmp_path / "verdicts.csv"
    r = _invoke(
        "judge",
        str(EX / "runs.jsonl"),
        "--checklists",
        str(EX / "checklists.jsonl"),
        "--out",
        str(v),
    )
    assert r.exit_code == 0 and v.is_file()
    r = _invoke(
        "checklist", str(v), "--checklists", str(EX / "checklists.jsonl"), "--format", "csv"
    )
    assert r.exit_code == 0
    assert "model-b [no tools]" in r.output  # the ablation arm is its own entry
    r = _invoke(
        "checklist",
        str(EX / "verdicts.csv"),
        "--checklists",
        str(EX / "checklists.jsonl"),
        "--rates",
        "--format",
        "json",
    )
    assert r.exit_code == 0 and json.loads(r.output)
    r = _invoke(
        "checklist",
        str(EX / "verdicts.csv"),
        "--checklists",
        str(EX / "checklists.jsonl"),
        "--agreement",
        "judge-x,judge-y",
    )
    assert r.exit_code == 0 and "spearman" in r.output
    r = _invoke(
        "checklist",
        str(EX / "verdicts.csv"),
        "--checklists",
        str(EX / "checklists.jsonl"),
        "--agreement",
        "judge-x",
    )
    assert r.exit_code == 2


def test_checklist_rejects_edited_checklist_and_bad_verdict(tmp_path: Path) -> None:
    edited = tmp_path / "cl.jsonl"
    edited.write_text(
        (EX / "checklists.jsonl").read_text().replace('"weight": 3', '"weight": 2', 1)
    )
    r = _invoke("checklist", str(EX / "verdicts.csv"), "--checklists", str(edited))
    assert r.exit_code == 2 and "edited after freezing" in r.output
    bad = tmp_path / "v.csv"
    bad.write_text((EX / "verdicts.csv").read_text().replace("partial", "sort-of", 1))
    r = _invoke("checklist", str(bad), "--checklists", str(EX / "checklists.jsonl"))
    assert r.exit_code == 2 and "column 'verdict'" in r.output


def test_audit_citations(registry_raw: Path, tmp_path: Path) -> None:
    """The view of the `kit audit` pipeline: built-in PubMedQA corpus from the registry, the
    verifier behind the score store (a tiny random cross-encoder: plumbing, not accuracy)."""
    from tests.guard.tiny_model import build_tiny_cross_encoder

    verifier = build_tiny_cross_encoder(tmp_path / "tiny")
    cites = tmp_path / "cites.csv"
    out = tmp_path / "rates.md"
    args = ["audit-citations", str(EX / "runs.jsonl"), "--raw", str(registry_raw)]
    args += ["--verifier", str(verifier), "--quiet"]
    r = _invoke(*args, "--citations-out", str(cites), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "instrument: guard verifier: tiny random cross-encoder" in r.output
    assert "L2 yes >= 0.84, partial >= 0.8" in r.output  # kit audit's defaults
    text = cites.read_text()
    # the PubMedQA corpus is a declared sample: an absent PMID is unchecked, not fabricated
    assert "PMID:99999999,PMID,99999999" in text and ",notfound," not in text
    row = next(ln for ln in text.splitlines() if "PMID:99999999" in ln)
    assert ",unchecked,,none," in row
    assert out.read_text().startswith("| by | group |")
    r = _invoke(*args, "--catalog", str(tmp_path / "none.duckdb"))
    assert r.exit_code == 0 and "--catalog is deprecated and ignored" in r.output
    r = _invoke(*args, "--verifier", str(tmp_path / "nothing"))
    assert r.exit_code == 2 and "card.json" in r.output


def test_runs_to_guard_input(grade_catalog: Path, tmp_path: Path) -> None:
    from kit.guard.pipeline import read_answers

    out = tmp_path / "guard.jsonl"
    r = _invoke(
        "runs", str(EX / "runs.jsonl"), "--guard-out", str(out), "--catalog", str(grade_catalog)
    )
    assert r.exit_code == 0, r.output
    recs = {a.answer_id: a for a in read_answers(out)}  # the guard's own reader accepts it
    assert set(recs) == {"r1", "r2", "r3", "r4", "r5"}
    assert "PMID:21645374" in recs["r1"].passages and not recs["r4"].passages


def test_behaviour_and_frozen_core() -> None:
    r = _invoke("behaviour", str(EX / "runs.jsonl"), "--format", "csv")
    assert r.exit_code == 0 and "no_tools" in r.output
    r = _invoke(
        "frozen-core",
        str(EX / "task_scores.csv"),
        "--roster",
        "GLM-5.1,Qwen3.6,DeepSeek-V4",
        "--second",
        str(EX / "task_scores_redecode.csv"),
        "--format",
        "json",
    )
    assert r.exit_code == 0
    row = json.loads(r.output)[0]
    assert row["core_size"] == 3 and row["flip_rate"] == 0.5
    r = _invoke("frozen-core", str(EX / "task_scores.csv"), "--roster", "GLM-5.1,Nobody")
    assert r.exit_code == 2 and "Nobody" in r.output


def test_replay_commands(tmp_path: Path) -> None:
    cache = EX / "cache.jsonl"
    r = _invoke("replay", "check", str(EX / "runs.jsonl"), "--cache", str(cache))
    assert r.exit_code == 0 and "all in the cache" in r.output
    short = tmp_path / "cache.jsonl"
    short.write_text("".join(cache.read_text().splitlines(keepends=True)[1:]))
    r = _invoke("replay", "check", str(EX / "runs.jsonl"), "--cache", str(short))
    assert r.exit_code == 1 and "not in the cache" in r.output
    r = _invoke(
        "replay",
        "get",
        "--cache",
        str(cache),
        "pubmed_search",
        '{"q": "Landolt C Snellen E amblyopia"}',
    )
    assert r.exit_code == 0 and "16418930" in r.output
    r = _invoke("replay", "get", "--cache", str(cache), "pubmed_search", '{"q": "never asked"}')
    assert r.exit_code == 2 and "replay cache miss" in r.output and "never asked" in r.output
    r = _invoke("replay", "key", "t", '{"b": 1, "a": 2}')
    r2 = _invoke("replay", "key", "t", '{"a": 2, "b": 1}')
    assert r.exit_code == 0 and r.output == r2.output and len(r.output.strip()) == 64
    assert _invoke("replay", "key", "t", "[1]").exit_code == 2


def test_planted_command(registry_raw: Path, grade_catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "planted"
    r = _invoke(
        "planted",
        "--out",
        str(out),
        "--raw",
        str(registry_raw),
        "--n-answers",
        "200",
        "--seed",
        "3",
        "--audit",
    )
    assert r.exit_code in (0, 1), r.output
    assert "planted: 200 runs" in r.output and "wrong_paper_corrected" in r.output
    for name in (
        "runs.jsonl",
        "checklists.jsonl",
        "truth.csv",
        "design.json",
        "failed_lookups.txt",
    ):
        assert (out / name).is_file()
    # the written runs and checklists are valid inputs of the other commands
    assert _invoke("runs", str(out / "runs.jsonl"), "--format", "csv").exit_code == 0
    v = tmp_path / "v.csv"
    args = ["judge", str(out / "runs.jsonl"), "--checklists", str(out / "checklists.jsonl")]
    r = _invoke(*args, "--out", str(v))
    assert (
        r.exit_code == 2 and "no key terms and no support" in r.output
    )  # must_ground needs a scorer
    assert _invoke(*args, "--catalog", str(grade_catalog), "--out", str(v)).exit_code == 0
    r = _invoke("checklist", str(v), "--checklists", str(out / "checklists.jsonl"), "--rates")
    assert r.exit_code == 0 and "planted-answers" in r.output
    r = _invoke(
        "planted", "--out", str(tmp_path / "p2"), "--raw", str(registry_raw), "--n-answers", "5"
    )
    assert r.exit_code == 2
    shutil.rmtree(out)
