"""Old option spellings keep working for one release (kit.commands.options.deprecated_alias):
the value reaches the new option through its own type, a warning on stderr names the new
spelling, giving both is a usage error; and every alias of kit/commands/vocabulary.py does so."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.commands.options import deprecated_alias

ROOT = Path(__file__).resolve().parents[2]
THEORY = ROOT / "examples" / "theory"


def _toy() -> click.Command:
    @click.command()
    @click.option("--count", type=click.IntRange(min=1), default=3, show_default=True, help="N.")
    @deprecated_alias("--n", "--count", "count")
    @click.option("--name", "names", multiple=True, help="Names.")
    @deprecated_alias("--who", "--name", "names", multiple=True)
    @click.option("--alpha", type=float, default=0.1, help="Alpha.")
    @deprecated_alias("--target", "--alpha", "alpha", transform=lambda t: str(1 - float(t)))
    def toy(count: int, names: tuple[str, ...], alpha: float) -> None:
        click.echo(f"count={count!r} names={names!r} alpha={alpha:.2f}")

    return toy


def _run(cmd: click.Command, *args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cmd, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_old_spelling_goes_through_the_new_options_type() -> None:
    toy = _toy()
    assert _run(toy) == (0, "count=3 names=() alpha=0.10\n", "")
    code, out, err = _run(toy, "--n", "7")
    assert (code, out) == (0, "count=7 names=() alpha=0.10\n")
    assert "--n is deprecated" in err and "use --count" in err
    assert _run(toy, "--count", "7")[1] == out and _run(toy, "--count", "7")[2] == ""
    # the new option's type checks the old spelling's value too: exit 2, not a traceback
    code, _, err = _run(toy, "--n", "0")
    assert code == 2 and "--count" in err and "0" in err
    code, _, err = _run(toy, "--n", "x")
    assert code == 2 and "not a valid integer" in err


def test_multiple_and_transformed_values() -> None:
    toy = _toy()
    code, out, err = _run(toy, "--who", "a", "--who", "b", "--target", "0.9")
    assert (code, out) == (0, "count=3 names=('a', 'b') alpha=0.10\n")
    assert "--who is deprecated" in err and "--target is deprecated" in err


def test_old_and_new_spelling_together_is_a_usage_error() -> None:
    code, out, err = _run(_toy(), "--count", "2", "--n", "5")
    assert code == 2 and out == ""
    assert "give --count or its old spelling --n, not both" in err


def test_old_spellings_are_hidden_from_help() -> None:
    text = CliRunner().invoke(_toy(), ["--help"]).stdout
    assert "--count" in text and "--n " not in text and "--who" not in text


def _kit(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_theory_old_spellings_give_the_same_table() -> None:
    runs = str(THEORY / "runs.csv")
    new = _kit("theory", "lm", runs, "--estimator", "affine", "--format", "csv")
    old = _kit("theory", "lm", runs, "--design", "affine", "--format", "csv")
    assert new[0] == old[0] == 0 and new[1] == old[1] and "affine" in new[1]
    assert "--design is deprecated" in old[2] and "--estimator" in old[2]
    tr, st = str(THEORY / "transitions.csv"), str(THEORY / "states.csv")
    # checked before the distance is computed (that takes seconds)
    base = ["theory", "distance", tr, st, "--system-a", "syn-A", "--system-b", "syn-B"]
    code, _, err = _kit(*base, "--tol", "x")
    assert code == 2 and "--tol is deprecated" in err and "not a valid float" in err
    code, _, err = _kit(*base, "--tol", "1e-9", "--tolerance", "1e-9")
    assert code == 2 and "give --tolerance or its old spelling --tol, not both" in err


def test_catalog_and_registry_old_spellings(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.duckdb")
    for cmd in (["db", "tables"], ["query", "SELECT 1"]):
        new = _kit(*cmd, "--catalog", missing)
        old = _kit(*cmd, "--db", missing)
        assert new[0] == old[0] == 2 and new[2] in old[2] and "none.duckdb" in new[2]
        assert "--db is deprecated" in old[2] and "use --catalog" in old[2]
    empty = tmp_path / "raw"
    empty.mkdir()
    new = _kit("registry", "verify", "--raw", str(empty))
    old = _kit("registry", "verify", "--dest", str(empty))
    assert new[0] == old[0] == 2 and new[2] in old[2] and "--dest is deprecated" in old[2]


def test_reproduce_old_spellings(registry_raw: Path, tmp_path: Path, monkeypatch) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    code, _, _ = _kit(
        "reproduce", "run", "board_check", "--raw", str(registry_raw), "--tables", str(new)
    )
    assert code == 0
    code, _, err = _kit(
        "reproduce", "run", "board_check", "--raw", str(registry_raw), "--out", str(old)
    )
    assert code == 0 and "--out is deprecated" in err and "use --tables" in err
    assert (old / "board_check.csv").read_bytes() == (new / "board_check.csv").read_bytes()
    # the container run has one home, `kit release container`; the old flag forwards there
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("KIT_MIRROR", str(tmp_path))
    code, _, err = _kit("reproduce", "run", "--container", "cpu", "--tables", str(tmp_path / "c"))
    assert code == 2 and "kit release container cpu" in err and "deprecated" in err
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(("flag", "value"), [("--alphas", "0.1,0.02"), ("--targets", "0.9,0.98")])
def test_coverage_targets_are_alphas(
    registry_raw: Path, tmp_path: Path, flag: str, value: str
) -> None:
    out = tmp_path / "cov.csv"
    args = ["guard", "coverage", "--calibration", "qasa", "--raw", str(registry_raw)]
    args += ["--n-cal", "25,100", flag, value, "--splits", "50", "--out", str(out)]
    code, _, err = _kit(*args)
    assert code == 0, err
    assert ("--targets is deprecated" in err) == (flag == "--targets")
    rows = out.read_text().splitlines()
    header = rows[0].split(",")
    pairs = sorted(
        (r.split(",")[header.index("target")], r.split(",")[header.index("alpha")])
        for r in rows[1:]
    )
    assert pairs == [("0.9", "0.1"), ("0.9", "0.1"), ("0.98", "0.02"), ("0.98", "0.02")]


def test_corpus_ingest_is_a_deprecated_name_of_build(tmp_path: Path) -> None:
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "doc1.txt").write_text("Aspirin reduces fever.\n")
    args = ["mini", "--text-folder", str(folder), "--coverage", "URL=sample", "--licence", "CC0"]
    new = _kit("corpus", "build", *args, "--corpus-root", str(tmp_path / "a"), "--quiet")
    old = _kit("corpus", "ingest", *args, "--corpus-root", str(tmp_path / "b"), "--quiet")
    assert new[0] == old[0] == 0 and new[2] == ""
    assert "`kit corpus ingest` is deprecated" in old[2] and "use `kit corpus build`" in old[2]
    assert sorted(p.name for p in (tmp_path / "a" / "mini").iterdir()) == sorted(
        p.name for p in (tmp_path / "b" / "mini").iterdir()
    )
    assert "ingest" not in _kit("corpus", "--help")[1]
