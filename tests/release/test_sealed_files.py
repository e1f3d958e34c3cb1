"""Single-file outputs get a sidecar receipt FILE.receipt.json (issue 20, item 4): `kit board
check`, `kit theory ...`, `kit grade ...`, `kit guard ...` written with --out are sealed, and
`kit verify receipts FILE` catches every changed byte, a missing companion and a tampered or
missing sidecar; folder outputs of `kit grade planted` are sealed as a set; `kit simulate board`
(table + truth) and `kit guard evaluate` (csv, md, tex) too."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.commands.sealed import sealed_file
from kit.core import receipts
from kit.core.errors import ConfigError, InputError, KitError
from tests.release.sealing import check_sealed_file

STAGES = "stage,name,L,eps,xi\n1,a,0.5,0.01,0\n2,b,1.0,0.02,0\n"


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def _flip(path: Path, at: int) -> bytes:
    data = path.read_bytes()
    path.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])
    return data


def test_board_check_out_is_sealed_with_its_companion(tmp_path: Path, registry_raw: Path) -> None:
    out = tmp_path / "board_check.csv"
    code, text = run("board", "check", "--raw", str(registry_raw), "--out", str(out))
    assert code in (0, 1), text
    side = receipts.sidecar(out)
    assert side.is_file() and out.with_suffix(".json").is_file()
    assert set(receipts.read_receipt(side)["body"]["outputs"]) == {
        "board_check.csv",
        "board_check.json",
    }
    code, text = run("verify", "receipts", str(out))
    assert code == 0 and "1 verified" in text, text
    code, text = run("verify", "receipts", str(tmp_path))  # the folder: every file sealed
    assert code == 0, text
    for victim in (out, out.with_suffix(".json")):
        size = victim.stat().st_size
        for at in (0, size // 2, size - 1):
            original = _flip(victim, at)
            code, text = run("verify", "receipts", str(out))
            assert code == 1 and "changed" in text and victim.name in text, (victim, at, text)
            victim.write_bytes(original)
    companion = out.with_suffix(".json")
    kept = companion.read_bytes()
    companion.unlink()
    code, text = run("verify", "receipts", str(out))
    assert code == 1 and "missing" in text and "board_check.json" in text
    companion.write_bytes(kept)
    original = _flip(side, side.stat().st_size // 2)  # a tampered receipt: cannot verify
    code, text = run("verify", "receipts", str(out))
    assert code == 2 and side.name in text, text
    side.write_bytes(original)
    side.unlink()
    code, text = run("verify", "receipts", str(out))
    assert code == 2 and "no receipt" in text


def test_theory_out_is_sealed_and_printing_writes_nothing(tmp_path: Path) -> None:
    stages = tmp_path / "in" / "stages.csv"
    stages.parent.mkdir()
    stages.write_text(STAGES)
    code, text = run("theory", "compose", str(stages), "--eps0", "0.05")
    assert code == 0 and sorted(p.name for p in stages.parent.iterdir()) == ["stages.csv"]
    out = tmp_path / "bounds.csv"
    code, text = run("theory", "compose", str(stages), "--eps0", "0.05", "--out", str(out))
    assert code == 0, text
    art = receipts.read_receipt(receipts.sidecar(out))
    assert art["kind"] == "theory-compose"
    assert art["body"]["inputs"]["stages"]["path"] == str(stages)
    assert art["body"]["parameters"]["eps0"] == "0.05"
    assert run("verify", "receipts", str(out))[0] == 0
    # a refused run leaves the earlier output and its receipt consistent
    bad = tmp_path / "in" / "bad.csv"
    bad.write_bytes(STAGES.encode("utf-16"))
    code, text = run("theory", "compose", str(bad), "--eps0", "0.05", "--out", str(out))
    assert code == 2 and "bad.csv" in text
    assert run("verify", "receipts", str(out))[0] == 0


def test_verify_a_file_without_sidecar_or_missing_is_exit_2(tmp_path: Path) -> None:
    plain = tmp_path / "t.csv"
    plain.write_text("a\n1\n")
    code, text = run("verify", "receipts", str(plain))
    assert code == 2 and "no receipt" in text and "t.csv" in text
    with pytest.raises(InputError):
        receipts.verify_file(tmp_path / "absent.csv")


@click.command()
@click.option("--out", type=click.Path(path_type=Path))
@click.option("--code", type=int, default=0)
@sealed_file("out", kind="demo")
def _demo(out: Path, code: int) -> None:
    out.write_text(f"exit {code}\n")
    if code == 2:
        raise click.UsageError("refused after writing")
    if code:
        raise SystemExit(code)


@pytest.mark.parametrize(("code", "sealed"), [(0, True), (1, True), (2, False)])
def test_sealed_file_seals_on_success_and_on_exit_1_only(
    tmp_path: Path, code: int, sealed: bool
) -> None:
    out = tmp_path / "x.txt"
    res = CliRunner().invoke(_demo, ["--out", str(out), "--code", str(code)])
    assert res.exit_code == code
    assert receipts.sidecar(out).is_file() is sealed
    if sealed:
        assert receipts.verify_file(out).findings == ()


def test_sealed_file_refuses_to_write_onto_a_receipt(tmp_path: Path) -> None:
    res = CliRunner().invoke(_demo, ["--out", str(tmp_path / "x.receipt.json")])
    assert isinstance(res.exception, ConfigError) and "names a receipt" in str(res.exception)
    assert not list(tmp_path.iterdir())


def test_simulate_board_seals_the_table_and_its_truth(tmp_path: Path) -> None:
    out = tmp_path / "syn.csv"
    code, text = run(
        "simulate", "board", "--out", str(out), "--seed", "2", "--tasks", "8", "--clusters", "4"
    )
    assert code == 0 and "sealed" in text, text
    check_sealed_file(out, "simulate-board", {"syn.csv", "syn.csv.synthetic.json"})
    truth = out.with_name("syn.csv.synthetic.json")
    kept = truth.read_bytes()
    truth.unlink()
    code, text = run("verify", "receipts", str(out))
    assert code == 1 and "missing" in text and "syn.csv.synthetic.json" in text
    truth.write_bytes(kept)
    assert run("verify", "receipts", str(tmp_path))[0] == 0  # the folder: sidecar covers both


def test_guard_evaluate_seals_its_three_tables(tmp_path: Path) -> None:
    src = tmp_path / "in" / "s.csv"
    src.parent.mkdir()
    src.write_text(
        "pair_id,label,score\n"
        + "".join(
            f"p{i},{('SUPPORT', 'NEI', 'CONTRADICT')[i % 3]},{(i * 37 % 100) / 100}\n"
            for i in range(30)
        )
    )
    args = ["guard", "evaluate", str(src), "--n-boot", "20"]
    code, text = run(*args)  # printed: nothing written, nothing sealed
    assert code == 0 and sorted(p.name for p in src.parent.iterdir()) == ["s.csv"]
    code, text = run(*args, "--out", str(tmp_path / "rep" / "ev"))
    assert code == 0, text
    check_sealed_file(tmp_path / "rep" / "ev.csv", "guard-evaluate", {"ev.csv", "ev.md", "ev.tex"})
    art = receipts.read_receipt(receipts.sidecar(tmp_path / "rep" / "ev.csv"))
    assert art["body"]["inputs"]["scores"]["path"] == str(src)
    folder = tmp_path / "dir"
    folder.mkdir()
    code, text = run(*args, "--out", str(folder))  # a folder: evaluation.*
    assert code == 0, text
    names = {"evaluation.csv", "evaluation.md", "evaluation.tex"}
    check_sealed_file(folder / "evaluation.csv", "guard-evaluate", names)
    assert run("verify", "receipts", str(folder))[0] == 0


def test_every_single_byte_flip_in_a_sidecar_receipt_is_caught_and_named(tmp_path: Path) -> None:
    out = tmp_path / "syn.csv"
    run("simulate", "board", "--out", str(out), "--seed", "1", "--tasks", "4", "--clusters", "2")
    side = receipts.sidecar(out)
    data = side.read_bytes()
    for i in range(len(data)):
        side.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :])
        with pytest.raises(KitError) as exc:
            receipts.verify_file(out)
        assert side.name in exc.value.message, i
    side.write_bytes(data[:5] + b"\xff" + data[6:])
    code, text = run("verify", "receipts", str(out))
    assert code == 2 and side.name in text
