"""Registry fetch: sha256 pinning, resolution order, nothing partial on failure."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import InputError, IntegrityError
from kit.registry import fetch as fetch_mod
from kit.registry.sources import all_files, load_sources


def _snapshot(folder: Path) -> dict[str, str]:
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def mirror_copy(tmp_path: Path, mirror: Path) -> Path:
    dst = tmp_path / "mirror"
    shutil.copytree(mirror, dst)
    return dst


def test_every_shared_file_is_registered(mirror: Path) -> None:
    on_disk = {
        str(p.relative_to(mirror))
        for p in mirror.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    }
    assert on_disk == {f.path for f in all_files()}


def test_pins_match_sources_md(mirror: Path) -> None:
    """Every pin appears in the mirror's own lists: SOURCES.md, and nli/README.md for nli/."""
    text = (mirror / "SOURCES.md").read_text()
    nli = (mirror / "nli" / "README.md").read_text()
    for f in all_files():
        if f.path == "nli/README.md":  # its table lists every file "except this README"
            continue
        assert f.sha256 in (nli if f.path.startswith("nli/") else text), f.path


def test_fetch_from_mirror_then_present(tmp_path: Path, mirror: Path) -> None:
    dest = tmp_path / "raw"
    recs = fetch_mod.fetch(dest=dest, mirror=mirror, dvc_cache=None, allow_network=False)
    assert {r.origin for r in recs} == {"mirror"}
    assert len(recs) == len(all_files())
    again = fetch_mod.fetch(dest=dest, mirror=None, dvc_cache=None, allow_network=False)
    assert {r.origin for r in again} == {"present"}
    for f in all_files():
        assert hashlib.sha256((dest / f.path).read_bytes()).hexdigest() == f.sha256


def test_dvc_cache_is_tried_before_mirror(tmp_path: Path, mirror: Path) -> None:
    f = all_files()[0]
    cache = tmp_path / "cache"
    cached = cache / f.md5[:2] / f.md5[2:]
    cached.parent.mkdir(parents=True)
    shutil.copyfile(mirror / f.path, cached)
    recs = fetch_mod.fetch(
        dest=tmp_path / "raw", mirror=mirror, dvc_cache=cache, files=[f], allow_network=False
    )
    assert recs[0].origin == "dvc-cache"


def test_corrupt_mirror_byte_is_exit_2_and_dest_unchanged(
    tmp_path: Path, mirror: Path, mirror_copy: Path
) -> None:
    dest = tmp_path / "raw"
    # a partly fetched dest: one good file already in place
    first = all_files()[0]
    fetch_mod.fetch(dest=dest, mirror=mirror, dvc_cache=None, files=[first], allow_network=False)
    before = _snapshot(dest)
    target = mirror_copy / "published" / "biolitbench_board.csv"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    res = CliRunner().invoke(
        cli,
        [
            "registry",
            "fetch",
            "--mirror",
            str(mirror_copy),
            "--raw",
            str(dest),
            "--offline",
            "--no-dvc-cache",
        ],
    )
    assert res.exit_code == 2
    assert "published/biolitbench_board.csv" in res.output
    assert "sha256" in res.output
    assert _snapshot(dest) == before
    assert not any(p.name.startswith(".fetch-") for p in tmp_path.iterdir())


def test_missing_file_is_named_and_nothing_written(tmp_path: Path, mirror_copy: Path) -> None:
    (mirror_copy / "pubmedqa" / "test_ground_truth.json").unlink()
    dest = tmp_path / "raw"
    with pytest.raises(InputError) as info:
        fetch_mod.fetch(dest=dest, mirror=mirror_copy, dvc_cache=None, allow_network=False)
    assert "pubmedqa/test_ground_truth.json" in str(info.value)
    assert _snapshot(dest) == {}


def test_mismatch_raises_integrity_error(tmp_path: Path, mirror_copy: Path) -> None:
    (mirror_copy / "citation-guard" / "LICENSE").write_text("not the licence\n")
    with pytest.raises(IntegrityError) as info:
        fetch_mod.fetch(
            dest=tmp_path / "raw", mirror=mirror_copy, dvc_cache=None, allow_network=False
        )
    assert info.value.reason == "sha256_mismatch"
    assert "citation-guard/LICENSE" in info.value.message


def test_verify_present_names_missing_file(registry_raw: Path, tmp_path: Path) -> None:
    dest = tmp_path / "raw"
    shutil.copytree(registry_raw, dest)
    (dest / "published" / "openbiorq_board.csv").unlink()
    res = CliRunner().invoke(cli, ["registry", "verify", "--raw", str(dest)])
    assert res.exit_code == 2
    assert "published/openbiorq_board.csv" in res.output


def test_raw_path_error_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        fetch_mod.raw_path("pubmedqa/ori_pqal.json", tmp_path)
    assert "kit registry fetch" in str(info.value)


def test_registry_list_prints_every_file() -> None:
    res = CliRunner().invoke(cli, ["registry", "list", "--format", "csv"])
    assert res.exit_code == 0
    lines = res.output.strip().splitlines()
    assert lines[0].startswith("source,path,bytes,licence,redistributable,sha256")
    assert len(lines) == 1 + sum(len(s.files) for s in load_sources())


def test_upstream_is_last_resort_and_checked(tmp_path: Path, mirror: Path) -> None:
    f = all_files()[0]
    served = tmp_path / "served.json"
    shutil.copyfile(mirror / f.path, served)
    upstream = dataclasses.replace(f, url=served.as_uri())
    recs = fetch_mod.fetch(
        dest=tmp_path / "raw", mirror=tmp_path / "empty", dvc_cache=None, files=[upstream]
    )
    assert recs[0].origin == "upstream"
    served.write_bytes(b"tampered upstream")
    with pytest.raises(IntegrityError) as info:
        fetch_mod.fetch(dest=tmp_path / "raw2", mirror=None, dvc_cache=None, files=[upstream])
    assert "upstream" in info.value.message and f.path in info.value.message
    assert not (tmp_path / "raw2" / f.path).exists()
    with pytest.raises(InputError) as info2:
        fetch_mod.fetch(
            dest=tmp_path / "raw3",
            mirror=None,
            dvc_cache=None,
            files=[upstream],
            allow_network=False,
        )
    assert "network disabled" in str(info2.value)
