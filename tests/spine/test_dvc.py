"""DVC: data.dvc pins the registry data; push/pull round-trips through a temporary remote."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DVC = str(Path(sys.executable).parent / "dvc")


def _sh(*args: str, cwd: Path) -> str:
    res = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(args)}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def dvc_repo(tmp_path: Path, registry_raw: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _sh("git", "init", "-q", cwd=repo)
    _sh(DVC, "init", "-q", cwd=repo)
    _sh(DVC, "config", "core.analytics", "false", cwd=repo)
    shutil.copytree(registry_raw, repo / "data" / "raw")
    shutil.copyfile(REPO / "data.dvc", repo / "data.dvc")
    (repo / ".gitignore").write_text("/data/raw\n")
    return repo


def test_data_dvc_matches_pinned_registry(dvc_repo: Path) -> None:
    before = yaml.safe_load((dvc_repo / "data.dvc").read_text())
    _sh(DVC, "commit", "-f", "data.dvc", cwd=dvc_repo)
    after = yaml.safe_load((dvc_repo / "data.dvc").read_text())
    # recomputing the md5 of the sha256-pinned registry files gives the committed pointer
    assert after["outs"][0]["md5"] == before["outs"][0]["md5"]
    assert after["outs"][0]["nfiles"] == before["outs"][0]["nfiles"]


def test_push_pull_round_trip(dvc_repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    _sh(DVC, "remote", "add", "-d", "tmp", str(remote), cwd=dvc_repo)
    _sh(DVC, "commit", "-f", "data.dvc", cwd=dvc_repo)
    want = _tree(dvc_repo / "data" / "raw")
    _sh(DVC, "push", cwd=dvc_repo)
    assert any(remote.rglob("*")), "nothing reached the remote"
    shutil.rmtree(dvc_repo / "data" / "raw")
    shutil.rmtree(dvc_repo / ".dvc" / "cache")
    _sh(DVC, "pull", cwd=dvc_repo)
    assert _tree(dvc_repo / "data" / "raw") == want


def test_pipeline_declares_the_stages() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert list(stages)[:2] == ["fetch", "prepare"]
    for name, st in stages.items():
        body = st.get("do", st)  # a foreach stage declares its body under do:
        assert body["cmd"].startswith("kit "), name
        assert body.get("deps"), name
    # leave-one-source-out trains the default's recipe: the same code, so the same deps
    loso = stages["loso"]
    assert loso["do"]["deps"] == stages["train-verifier"]["deps"]
    assert "--leave-out ${item}" in loso["do"]["cmd"] and "kit guard train" in loso["do"]["cmd"]
    assert set(loso["foreach"]) == {"scifact", "check_covid", "covidfact"}


def _reproductions_of(cmd: str) -> set[str]:
    """The reproductions a `kit reproduce run` / `kit verify board` command selects."""
    from kit.release import reproduce as rep

    words = cmd.split("&&")[0].split()
    names, skip, i = [], [], 3
    while i < len(words):
        if words[i] == "--skip":
            skip.append(words[i + 1])
            i += 2
        elif words[i].startswith("--"):
            i += 1 if words[i] == "--skip-slow" else 2
        else:
            names.append(words[i])
            i += 1
    return {d.name for d in rep.select(rep.load_declarations(), tuple(names), skip=tuple(skip))}


def test_every_reproduction_is_built_and_verified_by_exactly_one_stage() -> None:
    """`make reproduce` (stages tables, verify) leaves out only what `make reproduce-loso`
    (tables-loso, verify-loso) builds, and the board stages never wait on the loso trainings."""
    from kit.release import reproduce as rep

    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    every = {d.name for d in rep.load_declarations()}
    board, loso = (_reproductions_of(stages[s]["cmd"]) for s in ("tables", "tables-loso"))
    assert board | loso == every and not board & loso
    assert loso == {"guard_verifier_loso"}
    assert _reproductions_of(stages["verify"]["cmd"]) == board
    assert _reproductions_of(stages["verify-loso"]["cmd"]) == loso
    assert "data/verifier-loso" not in stages["tables"]["deps"]
    assert "data/verifier-loso" in stages["tables-loso"]["deps"]
    assert "--tables data/tables-loso" in stages["verify-loso"]["cmd"]
    makefile = (REPO / "Makefile").read_text()
    # prepare too: the catalog README promises after `make reproduce` is not upstream of verify
    assert "dvc repro prepare verify &&" in makefile and "dvc repro verify-loso &&" in makefile
