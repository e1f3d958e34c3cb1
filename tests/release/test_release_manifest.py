"""`kit release build|verify`: every released file hashed, and every difference named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _release_tree import NONREDIST_FILE, RAW_FILES, git, make_tree
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import IntegrityError
from kit.registry.licences import check_exportable
from kit.registry.sources import load_sources
from kit.release import manifest as man


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


def build(tree: Path) -> tuple[int, str]:
    return run("release", "build", "--root", str(tree), "--sources", str(tree / "sources.yaml"))


def verify(tree: Path, *extra: str) -> tuple[int, str]:
    return run(
        "release", "verify", "--root", str(tree), "--sources", str(tree / "sources.yaml"), *extra
    )


def test_build_lists_every_released_file_and_verifies_clean(tree: Path) -> None:
    code, out = build(tree)
    assert code == 0, out
    doc = json.loads((tree / "release" / "manifest.json").read_text())
    paths = {f["path"]: f for f in doc["files"]}
    assert set(paths) == {
        ".gitignore",
        "README.md",
        "data.dvc",
        "pkg/mod.py",
        "pyproject.toml",
        *(f"data/raw/{p}" for p in RAW_FILES),
    }
    raw = paths["data/raw/beta/scores.csv"]
    assert (raw["kind"], raw["source"], raw["licence"]) == ("raw", "beta", "CC-BY-4.0")
    assert raw["bytes"] == len(RAW_FILES["beta/scores.csv"])
    assert paths["README.md"]["licence"] == "MIT"
    assert doc["totals"] == {"files": len(paths), "bytes": sum(f["bytes"] for f in doc["files"])}
    assert doc["includes_tables"] is False
    code, out = verify(tree)
    assert code == 0, out
    assert "0 difference(s)" in out


def test_build_is_byte_identical_when_nothing_changed(tree: Path) -> None:
    build(tree)
    first = (tree / "release" / "manifest.json").read_bytes()
    build(tree)
    assert (tree / "release" / "manifest.json").read_bytes() == first


@pytest.mark.parametrize("folder", ["data/tables", "data/tables-loso"])
def test_tables_are_released_when_present(tree: Path, folder: str) -> None:
    (tree / folder).mkdir(parents=True)
    (tree / folder / "t.csv").write_text("a,b\n1,2\n")
    assert build(tree)[0] == 0
    doc = man.read(tree / "release" / "manifest.json")
    kinds = {f["path"]: f["kind"] for f in doc["files"]}
    assert kinds[f"{folder}/t.csv"] == "table" and doc["includes_tables"] is True
    (tree / folder / "t.csv").write_text("a,b\n1,3\n")
    code, out = verify(tree)
    assert code == 1
    assert f"changed  {folder}/t.csv" in out


@pytest.mark.parametrize("victim", ["pkg/mod.py", "data/raw/alpha/items.json"])
def test_one_tampered_byte_is_named(tree: Path, victim: str) -> None:
    assert build(tree)[0] == 0
    p = tree / victim
    data = bytearray(p.read_bytes())
    data[3] ^= 0x01
    p.write_bytes(bytes(data))
    code, out = verify(tree)
    assert code == 1, out
    assert f"changed  {victim}" in out
    assert "1 difference" in out or victim.startswith("data/raw")
    if victim.startswith("data/raw"):
        assert "dvc      data.dvc" in out  # the folder no longer matches DVC's record either


def test_missing_and_extra_files_are_named(tree: Path) -> None:
    assert build(tree)[0] == 0
    (tree / "README.md").unlink()
    (tree / "data" / "raw" / "beta" / "new.csv").write_text("x\n")
    (tree / "pkg" / "added.py").write_text("Y = 2\n")
    git(tree, "add", "pkg/added.py")
    code, out = verify(tree)
    assert code == 1, out
    assert "missing  README.md" in out
    assert "extra    data/raw/beta/new.csv" in out
    assert "extra    pkg/added.py" in out


def test_manifest_does_not_list_itself(tree: Path) -> None:
    (tree / ".gitignore").write_text("/data/raw\n/sources.yaml\n")  # release/ not ignored
    git(tree, "add", ".gitignore")
    assert build(tree)[0] == 0
    git(tree, "add", "release/manifest.json")  # now tracked, as a committed release would be
    doc = man.read(tree / "release" / "manifest.json")
    assert "release/manifest.json" not in {f["path"] for f in doc["files"]}
    code, out = verify(tree)
    assert code == 0, out


@pytest.mark.parametrize(
    "content",
    ["{not json", json.dumps({"format": "litaudit-kit-release-manifest/1"}), "[]"],
    ids=["not_json", "schema_violation", "wrong_type"],
)
def test_unreadable_or_invalid_manifest_exits_2(tree: Path, content: str) -> None:
    bad = tree / "bad.json"
    bad.write_text(content)
    code, out = verify(tree, "--manifest", str(bad))
    assert code == 2
    assert "bad.json" in out


def test_missing_manifest_exits_2(tree: Path) -> None:
    code, out = verify(tree, "--manifest", str(tree / "nope.json"))
    assert code == 2
    assert "nope.json" in out


def test_data_dvc_mismatch_is_an_error_naming_data_dvc(tree: Path) -> None:
    dvc = tree / "data.dvc"
    dvc.write_text(
        "outs:\n- md5: 00000000000000000000000000000000.dir\n  hash: md5\n  path: data/raw\n"
    )
    code, out = build(tree)
    assert code == 2
    assert "data.dvc" in out and "dvc_mismatch" in out
    assert not (tree / "release" / "manifest.json").exists()


def test_raw_file_off_its_pin_is_refused(tree: Path) -> None:
    src = tree / "sources.yaml"
    src.write_text(src.read_text().replace("CC-BY-4.0", "CC0-1.0"))
    (tree / "data" / "raw" / "beta" / "scores.csv").write_text("id,score\n1,0.9\n")
    code, out = build(tree)
    assert code == 2
    assert "data/raw/beta/scores.csv" in out


def test_unregistered_raw_file_is_refused(tree: Path) -> None:
    (tree / "data" / "raw" / "beta" / "stray.csv").write_text("x\n")
    code, out = build(tree)
    assert code == 2
    assert "data/raw/beta/stray.csv" in out and "unregistered" in out


def test_non_redistributable_source_is_withheld(tmp_path: Path) -> None:
    files = {**RAW_FILES, NONREDIST_FILE[0]: NONREDIST_FILE[1]}
    tree = make_tree(tmp_path / "t", files, nonredist={"gamma"})
    sources = load_sources(tree / "sources.yaml")
    assert check_exportable(["alpha", "gamma"], sources) == ["gamma"]
    code, out = build(tree)
    assert code == 0, out
    assert "withheld: source gamma" in out
    doc = man.read(tree / "release" / "manifest.json")
    assert all(not f["path"].startswith("data/raw/gamma/") for f in doc["files"])
    assert doc["withheld"] == [
        {
            "source": "gamma",
            "licence": "LicenseRef-Proprietary",
            "paths": ["data/raw/gamma/secret.txt"],
        }
    ]
    # the DVC record covers the whole folder, withheld file included
    assert doc["dvc"]["nfiles"] == len(files)
    code, out = verify(tree)
    assert code == 0, out


def test_verify_flags_a_listed_file_whose_source_became_non_redistributable(
    tree: Path,
) -> None:
    assert build(tree)[0] == 0
    # a new file: load_sources caches by path within one process
    src = tree / "sources-now.yaml"
    text = (tree / "sources.yaml").read_text()
    src.write_text(text.replace("redistributable: true", "redistributable: false", 1))
    code, out = run("release", "verify", "--root", str(tree), "--sources", str(src))
    assert code == 1
    assert "licence  data/raw/alpha/" in out


def test_library_build_raises_integrity_error_on_dvc_mismatch(tree: Path) -> None:
    (tree / "data" / "raw" / "alpha" / "LICENSE").write_text("changed\n")
    src = tree / "sources.yaml"
    with pytest.raises(IntegrityError):
        man.build(tree, load_sources(src))


@pytest.mark.parametrize("name", ["pkg/.env", "deploy/id_rsa", "server.pem"])
def test_a_tracked_secret_is_refused(tree: Path, name: str) -> None:
    (tree / name).parent.mkdir(parents=True, exist_ok=True)
    (tree / name).write_text("TOKEN=x\n")
    git(tree, "add", "-f", name)
    code, out = build(tree)
    assert code == 2
    assert "secret_in_release" in out and name in out
    assert not (tree / "release" / "manifest.json").exists()


def test_secret_patterns_do_not_catch_ordinary_files() -> None:
    assert not any(man.looks_secret(p) for p in ("kit/env.py", "keys.md", "data.dvc", "a/b.yaml"))


def test_outside_a_git_tree_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nlicense = "MIT"\n')
    code, out = run("release", "build", "--root", str(tmp_path))
    assert code == 2
    assert "not a git work tree" in out


def test_the_kit_repository_itself_builds(tmp_path: Path) -> None:
    """The real repository: every tracked file, the registry files and data.dvc agree."""
    from kit.registry.sources import REPO_ROOT

    if not (REPO_ROOT / "data" / "raw").is_dir():
        pytest.skip("data/raw not fetched (run `kit registry fetch`)")
    out = tmp_path / "manifest.json"
    code, text = run("release", "build", "--out", str(out))
    assert code == 0, text
    doc = man.read(out)
    assert {f["kind"] for f in doc["files"]} >= {"repo", "raw"}
    raw = [f for f in doc["files"] if f["kind"] == "raw"]
    withheld = [p for w in doc["withheld"] for p in w["paths"]]
    # sources that may not be redistributed (SICK, COVID-Fact, Climate-FEVER, ...) are withheld
    assert withheld and len(raw) + len(withheld) == doc["dvc"]["nfiles"]
    assert not {f["path"] for f in raw} & set(withheld)
