"""Any pair table (csv / parquet / jsonl) read, validated, scored and written back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.guard.evaluation.evaluate import LABEL_TABLE, canonical_label
from kit.guard.scoring.pairtable import (
    normalise_labels,
    parse_label_map,
    probability_column,
    read_pair_table,
    read_scores_table,
    write_pair_table,
)

ROWS = [
    {
        "claim": "Aspirin lowers stroke risk [10].",
        "passage": "Aspirin reduced the risk of stroke.",
        "label": "SUPPORT",
        "source": "a",
    },
    {
        "claim": "The drug failed.",
        "passage": "No effect was seen.",
        "label": "NEI",
        "source": "b",
    },
    {
        "claim": "Cats are dogs.",
        "passage": "Cats are not dogs.",
        "label": "CONTRADICT",
        "source": "c",
    },
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_read_any_format_same_frame(tmp_path: Path, suffix: str) -> None:
    frame = read_pair_table(_write(tmp_path / f"p{suffix}", ROWS))
    assert list(frame.columns) == ["pair_id", "claim", "passage", "label", "source"]
    assert frame["pair_id"].tolist() == ["1", "2", "3"]  # generated: record numbers
    assert frame.loc[0, "claim"] == "Aspirin lowers stroke risk [10]."  # plain text
    assert frame["source"].tolist() == ["a", "b", "c"]  # extra columns carried
    assert frame.attrs["row_base"] == (2 if suffix == ".csv" else 1)


def test_given_pair_id_is_kept_and_numbers_become_text(tmp_path: Path) -> None:
    rows = [{**r, "pair_id": 10 + i, "group": 7} for i, r in enumerate(ROWS)]
    frame = read_pair_table(_write(tmp_path / "p.jsonl", rows))
    assert frame["pair_id"].tolist() == ["10", "11", "12"]
    assert frame.columns[0] == "pair_id" and frame["group"].tolist() == ["7"] * 3


def test_duplicated_pair_id_names_rows(tmp_path: Path) -> None:
    rows = [{**r, "pair_id": pid} for r, pid in zip(ROWS, ["x", "y", "x"], strict=True)]
    with pytest.raises(InputError) as exc:
        read_pair_table(_write(tmp_path / "p.csv", rows))
    text = exc.value.render()
    assert "pair_id 'x' on rows 2, 4" in text and "p.csv" in text


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("claim,label\nA,SUPPORT\n", ["p.csv", "column 'passage'", "missing"]),
        ("claim,passage\nA,P\n,Q\n", ["p.csv", "row 3", "column 'claim'"]),
        ("claim,passage\nA,P\n   ,Q\n", ["row 3", "column 'claim'"]),
        ("claim,passage\nA,\n", ["row 2", "column 'passage'"]),
    ],
)
def test_bad_csv_names_file_row_column(tmp_path: Path, content: str, needles: list[str]) -> None:
    p = tmp_path / "p.csv"
    p.write_text(content)
    with pytest.raises(InputError) as exc:
        read_pair_table(p)
    text = exc.value.render()
    assert all(n in text for n in needles), text


def test_bad_jsonl_and_parquet(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text('{"claim": "A", "passage": "B"}\nnot json\n')
    with pytest.raises(InputError, match=r"p.jsonl, row 2, column '1': not valid JSON"):
        read_pair_table(p)
    p.write_text('{"claim": "A", "passage": "B"}\n{"claim": 5, "passage": "B"}\n')
    with pytest.raises(InputError) as exc:
        read_pair_table(p)
    assert "row 2, column 'claim': expected text" in exc.value.render()
    q = tmp_path / "p.parquet"
    q.write_bytes(b"not a parquet file")
    with pytest.raises(InputError, match="not a Parquet file"):
        read_pair_table(q)
    with pytest.raises(InputError, match="file not found"):
        read_pair_table(tmp_path / "absent.csv")
    with pytest.raises(ConfigError, match=r"\.csv, \.parquet or \.jsonl"):
        read_pair_table(tmp_path / "p.xlsx")


def test_label_table_maps_every_vocabulary() -> None:
    cases = {
        "SUPPORT": "entailment",
        "SUPPORTS": "entailment",
        "supported": "entailment",
        "Entailment": "entailment",
        "NEI": "neutral",
        "NOT_ENOUGH_INFO": "neutral",
        "not enough info": "neutral",
        "neutral": "neutral",
        "CONTRADICT": "contradiction",
        "REFUTES": "contradiction",
        "contradiction": "contradiction",
    }
    for raw, want in cases.items():
        assert canonical_label(raw) == want, raw
    assert set(LABEL_TABLE.values()) == {"entailment", "neutral", "contradiction"}
    assert canonical_label("maybe") is None
    assert canonical_label("0", {"0": "SUPPORT"}) == "entailment"


def test_normalise_labels_names_row_and_value(tmp_path: Path) -> None:
    rows = [*ROWS, {"claim": "X", "passage": "Y", "label": "MAYBE"}]
    frame = read_pair_table(_write(tmp_path / "p.csv", rows))
    with pytest.raises(InputError) as exc:
        normalise_labels(frame["label"])
    text = exc.value.render()
    assert "row 5, column 'label': unknown label 'MAYBE'" in text and "p.csv" in text
    got = normalise_labels(frame["label"], {"MAYBE": "neutral"})
    assert got.tolist() == ["entailment", "neutral", "contradiction", "neutral"]
    kept = frame[frame["label"] != "SUPPORT"]  # row numbers survive filtering
    with pytest.raises(InputError, match="row 5"):
        normalise_labels(kept["label"])


def test_parse_label_map() -> None:
    assert parse_label_map("0=entailment, 1=NEI,2=refutes") == {
        "0": "entailment",
        "1": "NEI",
        "2": "refutes",
    }
    with pytest.raises(ConfigError, match="SRC=DST"):
        parse_label_map("0entailment")
    with pytest.raises(ConfigError, match="destinations"):
        parse_label_map("0=banana")


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_write_roundtrip(tmp_path: Path, suffix: str) -> None:
    frame = read_pair_table(_write(tmp_path / "p.csv", ROWS))
    frame["score"] = [0.25, 0.5, 0.75]
    out = write_pair_table(frame, tmp_path / f"o{suffix}")
    back = read_scores_table(out)
    assert back["pair_id"].tolist() == ["1", "2", "3"]
    assert np.allclose(back["score"], [0.25, 0.5, 0.75])
    assert back.loc[0, "claim"] == ROWS[0]["claim"]


def test_probability_column_names() -> None:
    assert probability_column("entailment") == "p_entailment"
    assert probability_column("NOT ENOUGH-INFO") == "p_not_enough_info"


def test_cli_score_cross_encoder_jsonl_to_parquet(tmp_path: Path, tiny_cross_dir: Path) -> None:
    src = _write(tmp_path / "p.jsonl", [{**r, "pair_id": f"q{i}"} for i, r in enumerate(ROWS)])
    out = tmp_path / "s.parquet"
    args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir), "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "AUC entailment vs unsupported" in r.output and "p_entailment" in r.output
    got = pd.read_parquet(out)
    assert got["pair_id"].tolist() == ["q0", "q1", "q2"]
    assert {"p_entailment", "p_neutral", "p_contradiction", "source"} <= set(got.columns)
    assert np.allclose(got[["p_entailment", "p_neutral", "p_contradiction"]].sum(axis=1), 1.0)
    # the score is the card's scoring rule on these probabilities (here: P(entailment))
    assert np.allclose(got["score"], got["p_entailment"])
    assert got.loc[0, "claim"].endswith("[10].")


def test_cli_score_bi_encoder_csv(tmp_path: Path, verifier_dir: Path) -> None:
    src = _write(tmp_path / "p.csv", ROWS)
    out = tmp_path / "s.csv"
    args = ["guard", "score", str(src), "--verifier", str(verifier_dir), "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    got = pd.read_csv(out)
    assert list(got.columns) == [
        "pair_id",
        "claim",
        "passage",
        "label",
        "source",
        "score",
        "score_status",
    ]
    assert got["score"].between(0, 1).all() and (got["score_status"] == "scored").all()


def test_cli_score_bad_inputs_exit_2(tmp_path: Path, tiny_cross_dir: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("claim,passage\nA,B\n,C\n")
    base = ["guard", "score", "--verifier", str(tiny_cross_dir)]
    r = CliRunner().invoke(cli, [*base, str(bad), "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 2 and "row 3" in r.output and "claim" in r.output
    assert "Traceback" not in r.output
    good = _write(tmp_path / "g.csv", ROWS)
    r = CliRunner().invoke(cli, [*base, str(good), "--out", str(tmp_path / "o.txt")])
    assert r.exit_code == 2 and ".csv, .parquet or .jsonl" in r.output
    r = CliRunner().invoke(
        cli, [*base, str(good), "--keep-types", "x", "--out", str(tmp_path / "o.csv")]
    )
    assert r.exit_code == 2 and "pair_type" in r.output
