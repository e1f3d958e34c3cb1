"""schemas/json/verifier_card.schema.json: every card kind the kit writes validates against it;
a card that breaks it is refused on load (exit 2, naming the file, the field and what was
expected) and never written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm_server import MODEL, serve

from kit.cli import cli
from kit.core import boundary
from kit.core.errors import InputError
from kit.guard.verifiers.card_file import card_text, check_card, write_card
from kit.guard.verifiers.load import load_card


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def checked(folder: Path) -> dict:
    path = folder / "card.json"
    card = boundary.read_json(path, allow_non_finite=True)
    check_card(card, str(path))
    assert load_card(folder) == card
    return card


def test_bi_encoder_card_validates(verifier_dir: Path) -> None:
    assert checked(verifier_dir)["kind"] == "bi-encoder"


def test_cross_encoder_card_validates(tiny_cross_dir: Path) -> None:
    card = checked(tiny_cross_dir)
    assert card["kind"] == "cross-encoder" and "entailment" in card["extra"]["labels"]


def test_two_signal_card_with_relatedness_validates(tmp_path: Path, verifier_dir: Path) -> None:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    out = build_tiny_cross_encoder(tmp_path / "two", scoring="two_signal", relatedness=verifier_dir)
    assert checked(out)["extra"]["relatedness"]["folder"] == "relatedness"
    checked(out / "relatedness")


def test_imported_card_validates(tmp_path: Path, tiny_cross_dir: Path) -> None:
    card = json.loads((tiny_cross_dir / "card.json").read_text())
    res = invoke(
        "guard",
        "import-verifier",
        tiny_cross_dir / card["onnx_file"],
        "--tokenizer",
        tiny_cross_dir / "tokenizer.json",
        "--labels",
        "entailment,neutral,contradiction",
        "--out",
        tmp_path / "imported",
    )
    assert res.exit_code == 0, res.output
    assert "imported_sha256" in checked(tmp_path / "imported")["extra"]


def test_llm_verifier_and_judge_cards_validate(tmp_path: Path) -> None:
    with serve() as srv:
        res = invoke("guard", "import-verifier", "--base-url", srv.url, "--model", MODEL,
                     "--out", tmp_path / "llm")  # fmt: skip
        assert res.exit_code == 0, res.output
        res = invoke("grade", "import-judge", "--base-url", srv.url, "--model", MODEL,
                     "--out", tmp_path / "judge")  # fmt: skip
        assert res.exit_code == 0, res.output
    assert checked(tmp_path / "llm")["instrument_sha256"]
    judge = boundary.read_json(tmp_path / "judge" / "card.json")
    check_card(judge, "judge/card.json")
    assert judge["kind"] == "llm-judge"


def test_a_card_breaking_the_schema_exits_2_naming_file_and_field(
    tmp_path: Path, tiny_cross_dir: Path
) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny_cross_dir, bad)
    card = json.loads((bad / "card.json").read_text())
    card["max_length"] = "long"
    (bad / "card.json").write_text(json.dumps(card))
    res = invoke("guard", "card", "--verifier", bad)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert str(bad / "card.json") in res.output
    assert "verifier_card" in res.output
    assert "/max_length" in res.output and "'long' is not of type 'integer'" in res.output


def test_a_bad_validation_block_names_its_path(tmp_path: Path, tiny_cross_dir: Path) -> None:
    card = json.loads((tiny_cross_dir / "card.json").read_text())
    with pytest.raises(InputError, match="verifier_card") as err:
        check_card({**card, "validation": {"format": 1}}, "card.json")
    assert "at /validation: 'kit_version' is a required property" in err.value.details


def test_a_bad_card_is_never_written(tmp_path: Path, tiny_cross_dir: Path) -> None:
    card = json.loads((tiny_cross_dir / "card.json").read_text())
    del card["onnx_sha256"]
    with pytest.raises(InputError) as err:
        write_card(tmp_path, card)
    assert "'onnx_sha256' is a required property" in "\n".join(err.value.details)
    assert not (tmp_path / "card.json").exists()


def test_card_text_is_the_bytes_written(tiny_cross_dir: Path) -> None:
    card = json.loads((tiny_cross_dir / "card.json").read_text())
    assert card_text(card) == (tiny_cross_dir / "card.json").read_text()


def test_the_built_in_cards_validate_where_built() -> None:
    """minilm-nli and minilm-bi (data/verifier-nli, data/verifier), when this checkout has
    them, with the relatedness card the cross-encoder pins."""
    from kit.guard.verifiers.load import BUILTIN_VERIFIERS

    cards = [
        p
        for f in BUILTIN_VERIFIERS.values()
        for p in (f, f / "relatedness")
        if (p / "card.json").is_file()
    ]
    if not cards:
        pytest.skip("no built-in verifier built in this checkout")
    for folder in cards:
        checked(folder)
