"""`kit guard pairs` -> `kit guard score` -> `kit guard tau`, and CLI refusals."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.guard.verifiers.export import build_verifier


def test_pairs_score_tau_chain(registry_raw: Path, verifier_dir: Path, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    r = CliRunner().invoke(
        cli,
        [
            "guard",
            "pairs",
            "--n",
            "6",
            "--seed",
            "3",
            "--raw",
            str(registry_raw),
            "--out",
            str(pairs),
        ],
    )
    assert r.exit_code == 0, r.output
    meta = json.loads(pairs.with_suffix(".meta.json").read_text())
    assert meta["labels"].startswith("construction-labelled") and meta["seed"] == 3
    scored = tmp_path / "scored.csv"
    args = [
        "guard",
        "score",
        str(pairs),
        "--keep-types",
        "positive,random",
        "--verifier",
        str(verifier_dir),
        "--out",
        str(scored),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "AUC positive vs random" in r.output
    with scored.open() as fh:
        rows = list(csv.DictReader(fh))
    assert {x["pair_type"] for x in rows} == {"positive", "random"} and len(rows) == 12
    tau = tmp_path / "tau.csv"
    r = CliRunner().invoke(
        cli, ["guard", "tau", "--calibration", str(scored), "--alphas", "0.5", "--out", str(tau)]
    )
    assert r.exit_code == 0, r.output
    assert "n_cal=6" in r.output


def test_score_refuses_empty_selection(verifier_dir: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.csv"
    p.write_text(
        "item_pmid,pair_type,label,claim,passage_pmid,passage,decision\n1,positive,supported,c,1,p,yes\n"
    )
    r = CliRunner().invoke(
        cli,
        [
            "guard",
            "score",
            str(p),
            "--keep-types",
            "mesh",
            "--verifier",
            str(verifier_dir),
            "--out",
            str(tmp_path / "o.csv"),
        ],
    )
    assert r.exit_code == 2 and "no pairs left" in r.output


def test_coverage_refuses_oversized_n_cal(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.csv"
    args = [
        "guard",
        "coverage",
        "--calibration",
        "qasa",
        "--raw",
        str(registry_raw),
        "--n-cal",
        "100,500",
        "--alphas",
        "0.1",
        "--splits",
        "50",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and "1 refused" in r.output
    with out.open() as fh:
        rows = {x["n_cal"]: x for x in csv.DictReader(fh)}
    assert rows["500"]["verdict"].startswith("refused: n_cal + n_test > pool")
    assert rows["500"]["conformal_catch"] == "" and rows["100"]["verdict"] == "ok"


def test_run_cuda_without_provider_is_config_error(verifier_dir: Path, tmp_path: Path) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        return
    ans = tmp_path / "a.jsonl"
    ans.write_text(
        json.dumps({"answer_id": "a", "answer": "X [1].", "passages": {"1": "Y."}}) + "\n"
    )
    cal = tmp_path / "cal.csv"
    cal.write_text("score,label\n" + "".join(f"{i / 30},unsupported\n" for i in range(30)))
    args = [
        "guard",
        "run",
        str(ans),
        "--calibration",
        str(cal),
        "--alpha",
        "0.2",
        "--verifier",
        str(verifier_dir),
        "--device",
        "cuda",
        "--out",
        str(tmp_path / "o"),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "CUDAExecutionProvider" in r.output


@pytest.mark.slow
def test_rebuild_is_byte_identical(verifier_dir: Path, tmp_path: Path) -> None:
    build_verifier(tmp_path / "again")
    for name in ("minilm-fp32.onnx", "minilm-int8.onnx", "tokenizer.json", "card.json"):
        assert (tmp_path / "again" / name).read_bytes() == (verifier_dir / name).read_bytes()


def test_pairs_exclude_gives_a_disjoint_sample(registry_raw: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    base = ["guard", "pairs", "--n", "40", "--raw", str(registry_raw)]
    assert CliRunner().invoke(cli, [*base, "--seed", "0", "--out", str(first)]).exit_code == 0
    r = CliRunner().invoke(
        cli, [*base, "--seed", "0", "--exclude", str(first), "--out", str(second)]
    )
    assert r.exit_code == 0, r.output

    def pmids(p: Path) -> set[str]:
        rows = list(csv.DictReader(p.open()))
        return {r["item_pmid"] for r in rows} | {r["passage_pmid"] for r in rows}

    assert pmids(first) and not pmids(first) & pmids(second)
    # an --exclude file that does not exist is bad input (exit 2)
    r = CliRunner().invoke(
        cli,
        [
            *base,
            "--seed",
            "0",
            "--exclude",
            str(tmp_path / "nope.csv"),
            "--out",
            str(tmp_path / "c.csv"),
        ],
    )
    assert r.exit_code == 2
