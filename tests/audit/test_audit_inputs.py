"""Malformed inputs: a clear error (exit 2, naming line and field) or a counted skip -- never a
traceback, never a partial report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_helpers import AGENT, AuditRun, audit_args
from click.testing import CliRunner, Result

from kit.cli import cli


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _good_lines(planted: Path, n: int) -> list[str]:
    return (planted / "runs.jsonl").read_text().splitlines()[:n]


def _with(planted: Path, tmp: Path, lines: list[str]) -> Path:
    """A runs file in its own folder (no planted truth beside it)."""
    d = tmp / "runs"
    d.mkdir()
    p = d / "runs.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def _edit(line: str, **changes: object) -> str:
    obj = json.loads(line)
    for k, v in changes.items():
        if v is None:
            obj.pop(k)
        else:
            obj[k] = v
    return json.dumps(obj)


CASES = {
    "bad_json": (lambda g: [g[0], '{"run_id": "x", ', g[1]], "row 2", "not valid JSON"),
    "missing_answer": (lambda g: [g[0], _edit(g[1], answer=None)], "row 2", "'answer'"),
    "missing_answer_names_run": (
        lambda g: [g[0], _edit(g[1], answer=None)],
        "row 2",
        "run_id 'planted-0-01'",  # the error names the run as well as line and field
    ),
    "unknown_citation_style": (
        lambda g: [_edit(g[0], cited=["[1]"]), g[1]],
        "row 1",
        "cited[0]",
    ),
    "duplicate_run_id": (lambda g: [g[0], g[0]], "row 2", "run_id"),
    "huge_answer": (
        lambda g: [g[0], _edit(g[1], answer="x " * 2_000_000)],
        "row 2",
        "over the cap",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_runs_exit_2_without_report(
    case: str, planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    make, where, what = CASES[case]
    runs = _with(planted_dir, tmp_path, make(_good_lines(planted_dir, 2)))
    out = tmp_path / "report"
    args = audit_args(planted_dir, audit_verifier, registry_raw, out)
    args[1] = str(runs)
    r = _run(*args)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output
    assert where in r.output and what in r.output, r.output
    assert str(runs) in r.output
    assert not out.exists()  # nothing written: validation precedes scoring


def test_skip_bad_counts_skips(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    g = _good_lines(planted_dir, 4)
    runs = _with(planted_dir, tmp_path, [g[0], "not json", g[1], g[1], _edit(g[2], cited=["x"])])
    out = tmp_path / "report"
    args = audit_args(planted_dir, audit_verifier, registry_raw, out, "--skip-bad", "--n-cal", "12")
    args[1] = str(runs)
    r = _run(*args)
    assert r.exit_code == 0, r.output
    s = json.loads((out / "summary.json").read_text())
    assert s["counts"]["runs"] == 2
    assert s["counts"]["skipped_lines"] == 3
    assert sorted(x["reason"] for x in s["counts"]["skipped"]) == [
        "bad_field",
        "bad_json",
        "duplicate_run_id",
    ]
    assert s["planted"] is None  # no truth beside these runs


def test_failed_audit_leaves_previous_report(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """An error raised after scoring (agent not on the board) leaves OUT exactly as it was."""
    before = {p.name: p.read_bytes() for p in audited.out.glob("*.*")}
    args = list(audited.args)
    i = args.index("--agent-scores")
    del args[i : i + 2]  # the board now lacks the agent's rows
    r = _run(*args)
    assert r.exit_code == 2, r.output
    assert "agent_not_on_board" in r.output
    after = {p.name: p.read_bytes() for p in audited.out.glob("*.*")}
    assert after == before
    assert not list(audited.out.parent.glob(".report.*"))  # no staged leftovers


def test_bad_options(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    base = audit_args(planted_dir, audit_verifier, registry_raw, tmp_path / "o")
    r = _run(*base, "--corpus", "nosuch")
    assert r.exit_code == 2 and "unknown_corpus" in r.output
    r = _run(*base, "--board", str(planted_dir / "truth.csv"))
    assert r.exit_code == 2 and "--board and --design go together" in r.output
    r = _run(*base, "--calibration", "nosuch")
    assert r.exit_code == 2 and "neither a file nor a registry name" in r.output
    assert not (tmp_path / "o").exists()


def test_device_cuda_without_provider(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA: covered by the device check")
    args = audit_args(planted_dir, audit_verifier, registry_raw, tmp_path / "o", "--device", "cuda")
    r = _run(*args)
    assert r.exit_code == 2
    assert "no_cuda" in r.output and "CUDAExecutionProvider" in r.output


def test_imported_judge_verdicts_and_shared_store(
    audited: AuditRun, planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    """Verdicts of an external judge are scored instead of the built-in judge's; an audit of
    the same runs into a NEW folder reuses the shared score store (nothing rescored) and writes
    no per-folder cache."""
    # an external judge that marks every criterion met (must_avoid met = the bad thing: 0)
    rows = []
    for line in (planted_dir / "checklists.jsonl").read_text().splitlines():
        cl = json.loads(line)
        for c in cl["criteria"]:
            rows.append(("external-judge", AGENT, cl["task_id"], c["id"], "met"))
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text(
        "judge,model,task_id,criterion_id,verdict\n" + "".join(",".join(r) + "\n" for r in rows)
    )
    out = tmp_path / "report"
    args = audit_args(
        planted_dir, audit_verifier, registry_raw, out, "--judge-verdicts", str(verdicts)
    )
    r = _run(*args)
    assert r.exit_code == 0, r.output
    assert ", 0 scored" in r.output and " 0 hit(s)" not in r.output
    s = json.loads((out / "summary.json").read_text())
    assert s["checklist"]["judge"] == "external-judge"
    assert s["checklist"]["n_scored"] == 40
    solve = next(m for m in s["headline"] if m["metric"] == "solve_rate")
    weights = [c["weight"] for c in json.loads(line)["criteria"]]
    kinds = [c["kind"] for c in json.loads(line)["criteria"]]
    expect = sum(w for w, k in zip(weights, kinds, strict=True) if k != "must_avoid") / sum(weights)
    assert solve["estimate"] == 1.0 and solve["mean_score"] == pytest.approx(expect)
    assert not (out / "cache").exists()  # the scores live in the shared store


def test_duplicate_attempt_with_checklists_is_refused_before_scoring(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    g = _good_lines(planted_dir, 1)
    runs = _with(planted_dir, tmp_path, [g[0], _edit(g[0], run_id="again")])
    out = tmp_path / "report"
    args = audit_args(planted_dir, audit_verifier, registry_raw, out)
    args[1] = str(runs)
    r = _run(*args)
    assert r.exit_code == 2 and "duplicate_attempt" in r.output, r.output
    assert not out.exists()


def test_external_calibration_is_named_and_warned(
    audited: AuditRun, tmp_path: Path, registry_raw: Path
) -> None:
    """--calibration qasa: tau from another verifier's scores; the summary and page say so."""
    from kit.guard.conformal.calibration import load_calibration
    from kit.guard.conformal.rule import conformal_tau

    args = list(audited.args)
    args[args.index("--out") + 1] = str(tmp_path / "report")
    r = _run(*args, "--calibration", "qasa")
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "report" / "summary.json").read_text())
    cal = load_calibration("qasa", registry_raw)
    assert s["conformal"]["tau"] == conformal_tau(cal.unsupported, 0.1).tau
    assert s["conformal"]["calibration"]["same_verifier"] is False
    assert s["conformal"]["calibration"]["sha256"] == cal.sha256
    assert "external calibration" in (tmp_path / "report" / "report.html").read_text()


def test_failed_audit_keeps_scores_for_the_rerun(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    """A fresh audit that fails after scoring leaves no report but keeps its scores in the
    store; the rerun scores nothing again."""
    runs = _with(planted_dir, tmp_path, _good_lines(planted_dir, 5))
    out = tmp_path / "report"
    store = tmp_path / "scores"
    args = audit_args(planted_dir, audit_verifier, registry_raw, out, "--n-cal", "12")
    args += ["--cache-dir", str(store)]
    args[1] = str(runs)
    board = tmp_path / "board.csv"
    r = _run("simulate", "board", "--out", str(board), "--systems", "A=0,B=0")
    assert r.exit_code == 0, r.output
    design = Path(__file__).resolve().parents[2] / "examples" / "certify" / "design.yaml"
    r = _run(*args, "--board", str(board), "--design", str(design))
    assert r.exit_code == 2 and "agent_not_on_board" in r.output, r.output
    assert not out.exists()  # never a partial report
    assert list(store.glob("*/*/shard-*.parquet"))  # the scores were kept
    r = _run(*args)
    assert r.exit_code == 0, r.output
    assert ", 0 scored" in r.output
    assert (out / "report.html").is_file()


def test_corrupt_store_shard_is_a_clear_error(
    audited: AuditRun, audit_verifier: Path, tmp_path: Path
) -> None:
    """A truncated shard and a shard with an out-of-range score: exit 2 naming the file."""
    from kit.guard.scoring.score_store import ScoreStore, scoring_mode
    from kit.guard.verifiers.load import load_verifier

    v = load_verifier(audit_verifier, "int8")
    store = ScoreStore(tmp_path / "scores", v.card.onnx_sha256, scoring_mode(v, "cpu"))
    assert store.folder is not None
    store.folder.mkdir(parents=True)
    shard = store.folder / "shard-00000000000000000001-1-0.parquet"
    shard.write_bytes(b"PAR1 not really")
    args = list(audited.args)
    args[args.index("--out") + 1] = str(tmp_path / "report")
    r = _run(*args, "--cache-dir", str(tmp_path / "scores"))
    assert r.exit_code == 2 and "bad_score_store" in r.output and shard.name in r.output, r.output
    assert not (tmp_path / "report").exists()
    import pandas as pd

    pd.DataFrame(
        {"claim_sha256": ["a" * 64], "passage_sha256": ["b" * 64], "score": [1.5]}
    ).to_parquet(shard)
    r = _run(*args, "--cache-dir", str(tmp_path / "scores"))
    assert r.exit_code == 2 and "score_store_shard" in r.output and "score" in r.output, r.output
