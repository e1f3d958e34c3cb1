"""DATA_LICENSES is generated from the source list; the two must agree."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from kit.cli import cli
from kit.registry.licences import check_exportable, render_licences
from kit.registry.sources import REPO_ROOT, load_sources


def test_data_licenses_in_sync() -> None:
    assert (REPO_ROOT / "DATA_LICENSES").read_text() == render_licences(), (
        "DATA_LICENSES is stale: run `kit registry licences --write`"
    )


def test_check_flag_detects_drift(tmp_path, monkeypatch) -> None:
    res = CliRunner().invoke(cli, ["registry", "licences", "--check"])
    assert res.exit_code == 0
    altered = tuple(dataclasses.replace(s, licence="CC-BY-4.0") for s in load_sources())
    assert render_licences(altered) != render_licences()


def test_every_source_names_licence_and_files() -> None:
    text = render_licences()
    for s in load_sources():
        assert f"licence (SPDX): {s.licence}" in text
        for f in s.files:
            assert f.sha256 in text


def test_export_refuses_non_redistributable() -> None:
    sources = load_sources()
    closed = tuple(
        dataclasses.replace(s, redistributable=False) if s.name == "pubmedqa" else s
        for s in sources
    )
    assert check_exportable(["pubmedqa", "published"], closed) == ["pubmedqa"]
    assert check_exportable(["pubmedqa", "published"], sources) == []
