"""The guard run end to end (library and `kit guard run`), with the real default verifier."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import InputError
from kit.guard.pipeline import AnswerRecord, guard_answers, read_answers
from kit.guard.verifiers.load import load_verifier
from tests.release.sealing import check_sealed_folder

ANSWERS = [
    {
        "answer_id": "a1",
        "answer": "Aspirin lowers the risk of heart attack in older adults [1]. Metformin lowers "
        "blood glucose in type 2 diabetes [2]. Coffee has no link to pancreatic cancer [3].",
        "passages": {
            "1": "Daily low-dose aspirin reduced the risk of myocardial infarction among adults aged over 50.",
            "2": "Coffee consumption was not associated with pancreatic cancer in a pooled cohort analysis.",
            "3": "Metformin reduced fasting glucose and HbA1c in patients with type 2 diabetes.",
        },
    },
    {
        "answer_id": "a2",
        "answer": "Volcanic rocks contain basalt [7]. Plate tectonics explains earthquakes [1] (PMID 555).",
        "passages": {"1": "", "555": "A recipe for lemon cake with butter and sugar."},
    },
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_guard_moves_flags_never_deletes(verifier_dir: Path) -> None:
    v = load_verifier(verifier_dir)
    recs = [AnswerRecord(a["answer_id"], a["answer"], a["passages"]) for a in ANSWERS]
    guarded, table = guard_answers(recs, v, tau=0.75)
    by = {(r.answer_id, r.cited): r for r in table.itertuples()}
    assert by[("a1", "1")].status == "supported"
    assert (by[("a1", "2")].status, by[("a1", "2")].moved_to) == ("moved", "3")
    assert (by[("a1", "3")].status, by[("a1", "3")].moved_to) == ("moved", "2")
    assert by[("a2", "7")].reason == "missing_passage" and by[("a2", "7")].status == "unverified"
    assert by[("a2", "1")].reason == "empty_passage"
    assert by[("a2", "PMID:555")].status == "unverified"
    g = {x["answer_id"]: x["guarded_answer"] for x in guarded}
    assert g["a1"].endswith("diabetes [3]. Coffee has no link to pancreatic cancer [2].")
    assert "[7 UNVERIFIED]" in g["a2"] and "[PMID:555 UNVERIFIED]" in g["a2"]
    assert "Volcanic rocks contain basalt" in g["a2"]  # nothing deleted
    _, t2 = guard_answers(recs, v, tau=0.75, reattribute=False)
    assert set(t2["status"]) == {"supported", "unverified"}
    assert np.all(np.isnan(t2["moved_score"]))


def test_cli_run_outputs(verifier_dir: Path, tmp_path: Path) -> None:
    ans = _write(tmp_path / "a.jsonl", ANSWERS)
    cal = tmp_path / "cal.csv"
    rng = np.random.default_rng(0)
    cal.write_text(
        "score,label\n" + "".join(f"{x:.4f},unsupported\n" for x in rng.uniform(0.3, 0.75, 60))
    )
    out = tmp_path / "out"
    args = [
        "guard",
        "run",
        str(ans),
        "--calibration",
        str(cal),
        "--alpha",
        "0.1",
        "--verifier",
        str(verifier_dir),
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["alpha"] == 0.1 and summary["n_cal"] == 60 and summary["k"] == 55
    assert len(summary["calibration"]["sha256"]) == 64 and "MiniLM" in summary["verifier"]["name"]
    header = (out / "citations.csv").read_text().splitlines()[0]
    assert header.startswith("answer_id,sentence,marker,claim,cited")
    assert len((out / "guarded.jsonl").read_text().splitlines()) == 2
    first = (out / "citations.csv").read_bytes()
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert (out / "citations.csv").read_bytes() == first


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"answer_id": "x", "answer": "A [1]."}', "passages"),
        ('{"answer_id": "x", "answer": "A", "passages": {"1": 5}}', "passages/1"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_jsonl_names_line_and_field(tmp_path: Path, line: str, needle: str) -> None:
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps(ANSWERS[0]) + "\n\n" + line + "\n")
    with pytest.raises(InputError) as exc:
        read_answers(p)
    assert "row 3" in exc.value.message and needle in exc.value.render()
    r = CliRunner().invoke(
        cli, ["guard", "run", str(p), "--calibration", "x", "--out", str(tmp_path / "o")]
    )
    assert r.exit_code == 2 and "row 3" in r.output and "Traceback" not in r.output


def test_duplicate_answer_id(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.jsonl", [ANSWERS[0], ANSWERS[0]])
    with pytest.raises(InputError, match="already on line 1"):
        read_answers(p)


def test_build_verifier_cli_help() -> None:
    r = CliRunner().invoke(cli, ["guard", "build-verifier", "--help"])
    assert r.exit_code == 0 and "kit guard build-verifier --out data/verifier" in r.output


def test_build_verifier_cli_writes_a_sealed_card_folder(verifier_dir: Path) -> None:
    """The session's verifier is built by the command: every file sealed, each flip named, and
    the folder with its receipts/ loads and scores (every guard test here loads it too)."""
    files = check_sealed_folder(verifier_dir, "guard-build-verifier")
    assert files == {"card.json", "minilm-fp32.onnx", "minilm-int8.onnx", "tokenizer.json"}
    s = load_verifier(verifier_dir).score(["aspirin lowers risk"], ["Aspirin reduced the risk."])
    assert 0 <= float(s[0]) <= 1
