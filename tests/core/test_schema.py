"""Schema violations are exit 2 with file, row, column and the failed check."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import InputError
from kit.core.schema import load_schema, read_table, schema_names

HEADER = (
    "task_id,cluster,system,readout,score,failed,entry_hash,backbone,entry_condition,length_view"
)
GOOD = "t1,c1,A,r1,0.5,false,h1,b,fixed_input,matched_length"


def _write(tmp_path: Path, *rows: str, header: str = HEADER) -> Path:
    p = tmp_path / "scores.csv"
    p.write_text("\n".join([header, *rows]) + "\n")
    return p


def _validate(path: Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["schema", "validate", str(path), "--schema", "scores"])
    return res.exit_code, res.output


def test_every_schema_loads() -> None:
    names = schema_names()
    for required in ("scores", "biolitbench_board", "biolitbench_pipelines", "pubmedqa_items"):
        assert required in names
    for n in names:
        load_schema(n)


def test_good_table_passes(tmp_path: Path) -> None:
    code, out = _validate(
        _write(tmp_path, GOOD, "t2,c1,A,r1,,true,h1,b,fixed_input,matched_length")
    )
    assert code == 0, out
    frame = read_table(tmp_path / "scores.csv", "scores")
    assert frame["score"].dtype == float
    assert frame["failed"].tolist() == [False, True]


def test_wrong_type_names_row_and_column(tmp_path: Path) -> None:
    code, out = _validate(
        _write(tmp_path, GOOD, "t2,c1,A,r1,high,false,h1,b,fixed_input,matched_length")
    )
    assert code == 2
    assert "row 3, column 'score'" in out
    assert "'high'" in out and "expected a number" in out


def test_out_of_range_score(tmp_path: Path) -> None:
    code, out = _validate(
        _write(tmp_path, GOOD, "t2,c1,A,r1,1.2,false,h1,b,fixed_input,matched_length")
    )
    assert code == 2
    assert "row 3, column 'score'" in out and "in_range" in out and "1.2" in out


def test_missing_column(tmp_path: Path) -> None:
    header = HEADER.replace(",length_view", "")
    code, out = _validate(_write(tmp_path, GOOD.rsplit(",", 1)[0], header=header))
    assert code == 2
    assert "column 'length_view': missing" in out


def test_duplicate_key(tmp_path: Path) -> None:
    code, out = _validate(_write(tmp_path, GOOD, GOOD.replace("0.5", "0.7")))
    assert code == 2
    assert "row 2: duplicate key (task_id, system, readout) = (t1, A, r1)" in out
    assert "row 3: duplicate key" in out


def test_nan_where_forbidden(tmp_path: Path) -> None:
    code, out = _validate(_write(tmp_path, "t1,,A,r1,0.5,false,h1,b,fixed_input,matched_length"))
    assert code == 2
    assert "row 2, column 'cluster'" in out and "not_nullable" in out


def test_bad_boolean_and_category(tmp_path: Path) -> None:
    code, out = _validate(_write(tmp_path, "t1,c1,A,r1,0.5,maybe,h1,b,sideways,matched_length"))
    assert code == 2
    assert "row 2, column 'failed': got 'maybe'; expected true or false" in out
    assert "row 2, column 'entry_condition'" in out and "isin" in out


def test_all_problems_reported_at_once(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "t1,c1,A,r1,2.0,false,h1,b,fixed_input,matched_length",
        "t2,c1,A,r1,x,false,h1,b,fixed_input,matched_length",
    )
    with pytest.raises(InputError) as info:
        read_table(p, "scores")
    assert len(info.value.details) == 2
    assert str(p) in info.value.message


def test_unknown_column_in_strict_table(tmp_path: Path) -> None:
    code, out = _validate(_write(tmp_path, GOOD + ",x", header=HEADER + ",extra"))
    assert code == 2
    assert "column 'extra': not in schema 'scores'" in out


def test_unreadable_and_missing_file(tmp_path: Path) -> None:
    code, out = _validate(tmp_path / "nope.csv")
    assert code == 2 and "file not found" in out
    p = tmp_path / "bin.csv"
    p.write_bytes(b"\xff\xfe\x00bad")
    code, out = _validate(p)
    assert code == 2 and "Traceback" not in out


def test_published_board_rejects_tampered_cell(registry_raw: Path, tmp_path: Path) -> None:
    import shutil

    raw = tmp_path / "raw"
    shutil.copytree(registry_raw, raw)
    board = raw / "published/biolitbench_board.csv"
    frame = pd.read_csv(board, dtype=str, keep_default_na=False)
    frame.loc[4, "composite"] = "1.7"
    frame.to_csv(board, index=False)
    res = CliRunner().invoke(
        cli, ["board", "check", "--raw", str(raw), "--out", str(tmp_path / "o.csv")]
    )
    assert res.exit_code == 2
    assert "row 6, column 'composite'" in res.output
    assert not (tmp_path / "o.csv").exists()


def test_infinite_value_in_an_integer_column_is_named(tmp_path: Path) -> None:
    """inf reads as a number but is no whole number: refused with its row and column (it used
    to reach pandas' integer cast and end as an internal error)."""
    p = tmp_path / "gold.csv"
    p.write_text("item_id,gold\na,1\nb,inf\nc,-Infinity\n")
    with pytest.raises(InputError) as err:
        read_table(p, "anchor_gold")
    text = err.value.render()
    assert "row 3, column 'gold': got 'inf'; expected a whole number" in text
    assert "row 4, column 'gold': got '-Infinity'; expected a whole number" in text
