"""`kit guard tau` / `kit guard coverage` through the CLI."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from kit.cli import cli


def _read(p: Path) -> list[dict[str, str]]:
    with p.open() as fh:
        return list(csv.DictReader(fh))


def test_tau_cli_reproduces_published(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "tau.csv"
    r = CliRunner().invoke(
        cli,
        ["guard", "tau", "--calibration", "qasa", "--raw", str(registry_raw), "--out", str(out)],
    )
    assert r.exit_code == 0, r.output
    rows = _read(out)
    assert len(rows) == 25
    row = next(x for x in rows if x["alpha"] == "0.1")
    assert (row["k"], row["tau"], row["cal_recall"]) == ("451", "0.4318183144", "0.902")


def test_tau_cli_csv_calibration_and_refusal(tmp_path: Path) -> None:
    cal = tmp_path / "cal.csv"
    cal.write_text(
        "score,label\n" + "".join(f"{i / 20},unsupported\n" for i in range(19)) + "0.9,supported\n"
    )
    out = tmp_path / "t.csv"
    ok = CliRunner().invoke(
        cli, ["guard", "tau", "--calibration", str(cal), "--alphas", "0.1,0.5", "--out", str(out)]
    )
    assert ok.exit_code == 0, ok.output
    rows = _read(out)
    assert [x["k"] for x in rows] == ["18", "10"]
    # the tau is printed with its condition: the calibration sample it holds for
    assert rows[0]["guarantee"].startswith("catch >= 90% of unsupported citations exchangeable")
    assert "n = 19 unsupported, 1 supported" in rows[0]["guarantee"]
    assert "guarantee per row: catch >= 90%" in ok.output
    # the one supported score (0.9) lies above both taus: flagged 0 of 1, Wilson upper > 0
    assert rows[0]["false_flag_rate"] == "0" and float(rows[0]["false_flag_hi"]) > 0.5
    bad = CliRunner().invoke(
        cli, ["guard", "tau", "--calibration", str(cal), "--alphas", "0.01", "--out", str(out)]
    )
    assert bad.exit_code == 2 and "too_little_calibration" in bad.output


def test_tau_cli_bad_inputs_exit_2(tmp_path: Path) -> None:
    cal = tmp_path / "cal.csv"
    cal.write_text("score,label\n0.1,unsupported\nabc,unsupported\n0.2,maybe\n")
    r = CliRunner().invoke(
        cli,
        [
            "guard",
            "tau",
            "--calibration",
            str(cal),
            "--alphas",
            "0.5",
            "--out",
            str(tmp_path / "o.csv"),
        ],
    )
    assert r.exit_code == 2
    assert "row 3" in r.output and "score" in r.output and "row 4" in r.output
    r = CliRunner().invoke(
        cli, ["guard", "tau", "--calibration", "nope", "--out", str(tmp_path / "o.csv")]
    )
    assert r.exit_code == 2 and "Traceback" not in r.output
    r = CliRunner().invoke(
        cli,
        [
            "guard",
            "tau",
            "--calibration",
            str(cal),
            "--alphas",
            "2:1:0",
            "--out",
            str(tmp_path / "o.csv"),
        ],
    )
    assert r.exit_code == 2


def test_coverage_cli(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "cov.csv"
    args = [
        "guard",
        "coverage",
        "--calibration",
        "qasa",
        "--raw",
        str(registry_raw),
        "--n-cal",
        "25,100",
        "--alphas",
        "0.1,0.02",
        "--splits",
        "300",
        "--seed",
        "0",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    rows = _read(out)
    assert len(rows) == 4
    refused = [x for x in rows if x["verdict"] != "ok"]
    assert [(x["target"], x["n_cal"]) for x in refused] == [("0.98", "25")]
    ok = next(x for x in rows if x["target"] == "0.9" and x["n_cal"] == "25")
    assert float(ok["conformal_catch"]) > float(ok["naive_catch"])
    again = tmp_path / "cov2.csv"
    CliRunner().invoke(cli, [*args[:-1], str(again)])
    assert again.read_bytes() == out.read_bytes()
