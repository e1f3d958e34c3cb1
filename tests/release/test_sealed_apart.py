"""A card folder's receipt is the same on every build of the same weights (issue 36).

Two sources made `make reproduce` on a fresh clone rewrite dvc.lock: the folder receipt sealed
``build.json`` (this build's seconds and load, different on every build) and recorded ``--raw`` as
an absolute path (different in every checkout). ``apart=`` seals such a file in its own sidecar;
paths are recorded relative to the checkout.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.testing import CliRunner

from kit.commands.sealed import sealed_output
from kit.core import receipts
from kit.registry.sources import REPO_ROOT

READINGS: list[float] = []


def _command(apart: tuple[str, ...]) -> click.Command:
    @click.command()
    @click.option("--out", type=click.Path(path_type=Path), required=True)
    @click.option("--raw", type=click.Path(path_type=Path), default=REPO_ROOT / "data" / "raw")
    @sealed_output("out", kind="demo-card", legacy="card.json", apart=apart)
    def demo(out: Path, raw: Path) -> None:
        (out / "card.json").write_text('{"weights": "same"}\n')
        # a machine reading: not a parameter, different on every build
        (out / "build.json").write_text(json.dumps({"seconds": READINGS.pop()}) + "\n")

    return demo


def _build(tmp: Path, name: str, reading: str, apart: tuple[str, ...]) -> Path:
    out = tmp / name
    READINGS.append(float(reading))
    res = CliRunner().invoke(_command(apart), ["--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _folder_receipt(out: Path) -> bytes:
    return (out / receipts.RECEIPTS_DIR / f"demo-card{receipts.SUFFIX}").read_bytes()


def test_a_machine_reading_apart_leaves_the_folder_receipt_unchanged(tmp_path: Path) -> None:
    a = _build(tmp_path, "a", "11.0", ("build.json",))
    b = _build(tmp_path, "b", "99.0", ("build.json",))
    assert _folder_receipt(a) == _folder_receipt(b)
    body = json.loads(_folder_receipt(a))["body"]
    assert sorted(body["outputs"]) == ["card.json"]
    sidecar = json.loads((a / f"build.json{receipts.SUFFIX}").read_bytes())
    assert sorted(sidecar["body"]["outputs"]) == ["build.json"]
    for folder in (a, b):  # every file still sealed: the sidecar counts as a receipt
        check = receipts.verify_outputs(folder)
        assert check.findings == () and check.sealed == 2 and check.receipts == 2
    (a / "build.json").write_text('{"seconds": "tampered"}\n')
    assert [f for f in receipts.verify_outputs(a).findings]  # the reading is still sealed


def test_without_apart_the_reading_moves_the_receipt(tmp_path: Path) -> None:
    """The failing case before the fix: the folder receipt sealed build.json."""
    a = _build(tmp_path, "a", "11.0", ())
    b = _build(tmp_path, "b", "99.0", ())
    assert _folder_receipt(a) != _folder_receipt(b)


def test_paths_are_recorded_relative_to_the_checkout(tmp_path: Path) -> None:
    out = _build(tmp_path, "a", "1.0", ("build.json",))
    params = json.loads(_folder_receipt(out))["body"]["parameters"]
    assert params["raw"] == "data/raw"
    assert str(REPO_ROOT) not in _folder_receipt(out).decode()
