"""The input boundary (kit.core.boundary) and the CLI's last line of defence: the regression cases of
issue 20 (item 1) each refused with exit 2 naming the file, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import INTERNAL_ERROR, cli
from kit.core import boundary
from kit.core.errors import InputError

DESIGN = "alpha: 0.05\n"
# a small synthetic score table (labelled synthetic in its entry_hash and backbone)
SCORES = (
    "task_id,cluster,system,readout,score,failed,entry_hash,backbone,entry_condition,length_view\n"
    + "".join(
        f"t{t},c{t % 3},{s},r1,{0.5 + 0.01 * t + (0.1 if s == 'A' else 0):.3f},False,"
        "synthetic:test,synthetic-backbone,fixed_input,matched_length\n"
        for s in "AB"
        for t in range(6)
    )
)


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def _certify(tmp: Path, scores: Path, design: Path) -> tuple[int, str]:
    return run("certify", str(scores), "--design", str(design), "--out", str(tmp / "out"))


def test_utf16_design_is_refused_naming_the_file(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(SCORES)
    design = tmp_path / "design.yaml"
    design.write_bytes(DESIGN.encode("utf-16"))
    code, out = _certify(tmp_path, scores, design)
    assert code == 2 and "bad_encoding" in out and "UTF-16" in out and "design.yaml" in out
    design.write_bytes(DESIGN.encode("utf-16-le"))  # no BOM: still recognised
    code, out = _certify(tmp_path, scores, design)
    assert code == 2 and "UTF-16" in out
    assert not (tmp_path / "out").exists()  # nothing written


def test_duplicate_yaml_key_is_refused(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(SCORES)
    design = tmp_path / "design.yaml"
    design.write_text("alpha: 0.05\nalpha: 0.5\n")
    code, out = _certify(tmp_path, scores, design)
    assert code == 2 and "duplicate key 'alpha'" in out and "design.yaml" in out and "row 2" in out


def test_bom_csv_is_read_and_bad_bytes_are_located(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"\xef\xbb\xbf" + SCORES.encode())
    code, out = run("schema", "validate", str(path), "--schema", "scores")
    assert code == 0, out
    path.write_bytes(SCORES.encode().replace(b"t3,", b"t\xff3,", 1))  # file line 5
    code, out = run("schema", "validate", str(path), "--schema", "scores")
    assert code == 2 and "0xff" in out and "s.csv, row 5, column '2'" in out


def test_non_parquet_named_parquet_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "scores.parquet"
    fake.write_text(SCORES)
    code, out = run("schema", "validate", str(fake), "--schema", "scores")
    assert code == 2 and "not_parquet" in out and "scores.parquet" in out
    design = tmp_path / "design.yaml"
    design.write_text(DESIGN)
    code, out = _certify(tmp_path, fake, design)
    assert code == 2 and "not_parquet" in out
    truncated = tmp_path / "t.parquet"
    truncated.write_bytes(b"PAR1" + b"\0" * 20 + b"PAR1")
    code, out = run("schema", "validate", str(truncated), "--schema", "scores")
    assert code == 2 and "not_parquet" in out


@pytest.mark.parametrize("name", ["../../x", "/etc/passwd", "json/../scores", "scores.yaml/.."])
def test_schema_outside_schemas_folder_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "x.yaml").write_text("schema_type: dataframe\n")
    path = tmp_path / "s.csv"
    path.write_text(SCORES)
    code, out = run("schema", "validate", str(path), "--schema", name)
    assert code == 2 and "unknown_schema" in out


def test_deeply_nested_json_is_refused_in_receipts_and_manifests(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "x.receipt.json").write_text(deep + "\n")
    code, out = run("verify", "receipts", str(tmp_path / "r"))
    assert code == 2 and "nested more than" in out and "x.receipt.json" in out
    manifest = tmp_path / "manifest.json"
    manifest.write_text(deep)
    code, out = run("release", "verify", "--manifest", str(manifest))
    assert code == 2 and "nested" in out and "manifest.json" in out
    just_over = "[" * (boundary.MAX_DEPTH + 1) + "]" * (boundary.MAX_DEPTH + 1)
    with pytest.raises(InputError, match="nested"):
        boundary.parse_json(just_over, "x.json")
    assert boundary.parse_json("[" * boundary.MAX_DEPTH + "]" * boundary.MAX_DEPTH, "x") == (
        json.loads("[" * boundary.MAX_DEPTH + "]" * boundary.MAX_DEPTH)
    )


@pytest.mark.parametrize("text", ['{"wall_time_s": Infinity}', '{"x": NaN}', "[-Infinity]"])
def test_non_finite_json_numbers_are_refused(text: str) -> None:
    with pytest.raises(InputError, match="non-finite") as exc:
        boundary.parse_json(text, "runs.jsonl", line=7)
    assert "runs.jsonl, row 7" in exc.value.message


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(InputError) as exc:
        list(boundary.read_jsonl(path))
    assert "runs.jsonl, row 3" in exc.value.message


def test_verify_receipts_of_a_missing_folder_is_exit_2() -> None:
    code, out = run("verify", "receipts", "/nonexistent")
    assert code == 2 and "/nonexistent" in out


def test_unexpected_exception_is_an_internal_error_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    schema_cmd = importlib.import_module("kit.commands.schema")

    def boom(*_: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(schema_cmd, "read_table", boom)
    path = tmp_path / "s.csv"
    path.write_text(SCORES)
    code, out = run("schema", "validate", str(path), "--schema", "scores")
    assert code == INTERNAL_ERROR == 3
    assert "internal error [ZeroDivisionError]" in out and "file an issue" in out


def test_missing_key_column_is_exit_2_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text(SCORES.replace("task_id", "task"))
    code, out = run("schema", "validate", str(path), "--schema", "scores")
    assert code == 2 and "column 'task_id': missing" in out


# ---- every reader through the boundary (issue 20, item 1, second slice)

# the first run of examples/grade/runs.jsonl (wall_time_s 14.2)
RUN = json.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "grade" / "runs.jsonl")
    .read_text()
    .splitlines()[0]
)


def _runs(tmp: Path, *lines: bytes) -> Path:
    path = tmp / "runs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_infinity_in_wall_time_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    good = json.dumps(RUN).encode()
    for bad in (b"Infinity", b"-Infinity", b"NaN", b"1e400"):
        path = _runs(tmp_path, good, good.replace(b"14.2", bad).replace(b'"r1"', b'"r2"'))
        code, out = run("grade", "runs", str(path), "--out", str(tmp_path / "o.csv"))
        assert code == 2, out
        assert "runs.jsonl, row 2, column 'wall_time_s'" in out and "non-finite" in out, out
        assert not (tmp_path / "o.csv").exists()


def test_deep_utf16_bad_byte_and_empty_runs_files_are_refused(tmp_path: Path) -> None:
    good = json.dumps(RUN).encode()
    deep = b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    cases = {
        "too_deep": _runs(tmp_path, good, deep).read_bytes(),
        "UTF-16": (good + b"\n").decode().encode("utf-16"),
        "0xff": good.replace(b'"model-a"', b'"\xff"'),
        "no run in the file": b"\n  \n",
    }
    for needle, data in cases.items():
        path = tmp_path / "runs.jsonl"
        path.write_bytes(data)
        for argv in (
            ["grade", "runs", str(path)],
            ["audit", str(path), "--out", str(tmp_path / "a")],
        ):
            code, out = run(*argv)
            assert code == 2 and needle in out and "runs.jsonl" in out, (argv, out)
        assert not (tmp_path / "a").exists()


def test_json_field_paths_and_big_numbers() -> None:
    with pytest.raises(InputError) as exc:
        boundary.parse_json('{"a": {"b": [1, 2, 1e999]}}', "x.json")
    assert exc.value.where.column == "a.b[2]"
    assert boundary.parse_json("[1e308]", "x.json") == [1e308]
    assert boundary.parse_json('{"m": NaN}', "card.json", allow_non_finite=True)["m"] != 0


def test_yaml_non_finite_values_are_refused_naming_the_key(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(SCORES)
    design = tmp_path / "design.yaml"
    for word in (".nan", ".inf", "-.inf"):
        design.write_text(f"alpha: {word}\n")
        code, out = _certify(tmp_path, scores, design)
        assert code == 2 and "design.yaml" in out and "column 'alpha'" in out, out
        assert not (tmp_path / "out").exists()


def test_inf_in_a_finite_input_column_is_refused_but_theory_constants_may_be_inf(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("system,task_id,x,y\nA,t1,0.1,0.2\nA,t2,inf,0.3\nA,t3,0.2,0.1\n")
    code, out = run("theory", "lm", str(runs))
    assert code == 2 and "runs.csv, row 3, column 'x'" in out and "notin" in out, out
    stages = Path(__file__).resolve().parents[2] / "examples" / "theory" / "stages_zero_inf.csv"
    code, out = run("theory", "compose", str(stages), "--eps0", "0.05")
    assert code == 0, out


def test_jsonl_with_a_utf8_bom_is_read(tmp_path: Path) -> None:
    path = _runs(tmp_path, b"\xef\xbb\xbf" + json.dumps(RUN).encode())
    code, out = run("grade", "runs", str(path))
    assert code == 0 and "r1" in out, out
