"""`kit audit --engine ray`: the store's misses scored on a local 2-CPU Ray, same bytes as local."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from audit_helpers import audit_args, invoke

from tests.guard.tiny_model import build_tiny_cross_encoder


@pytest.fixture(scope="module")
def tiny_cross(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "tiny-cross")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    ray = pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _args(planted: Path, verifier: Path, raw: Path, out: Path, store: Path, *extra: str) -> list:
    args = audit_args(planted, verifier, raw, out, "--cache-dir", str(store), "--quiet", *extra)
    i = args.index("--variant")
    return args[:i] + args[i + 2 :]  # the tiny cross-encoder has fp32 only


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow  # ~30 s on 2 shared cores: two audits and Ray's start
def test_audit_ray_engine_is_byte_identical_to_local(
    ray_cluster: object, tmp_path: Path, planted_dir: Path, registry_raw: Path, tiny_cross: Path
) -> None:
    local, ray_out = tmp_path / "local", tmp_path / "ray"
    r = invoke(*_args(planted_dir, tiny_cross, registry_raw, local, tmp_path / "s-local"))
    assert r.exit_code == 0, r.output
    scored = r.output.split("score store ")[1].split(" ->")[0]
    assert scored.startswith("0 hit(s)"), r.output  # a cold store: everything was scored
    r = invoke(
        *_args(planted_dir, tiny_cross, registry_raw, ray_out, tmp_path / "s-ray"),
        "--engine",
        "ray",
        "--ray-workers",
        "2",
    )
    assert r.exit_code == 0, r.output
    assert r.output.split("score store ")[1].split(" ->")[0] == scored  # the same misses
    a, b = _files(local), _files(ray_out)
    assert {"summary.json", "citations.csv", "runs.csv", "report.html"} <= set(a)
    assert a.keys() == b.keys()
    for name in sorted(a):
        assert a[name] == b[name], name
    # the stores hold the same shards' content (the Ray engine's floats are the local ones)
    from kit.guard.scoring import score_store as ss

    (fa,) = [p for p in (tmp_path / "s-local").glob("*/*") if p.is_dir()]
    (fb,) = [p for p in (tmp_path / "s-ray").glob("*/*") if p.is_dir()]
    ea, eb = ss.read_partition(fa), ss.read_partition(fb)
    assert ea.keys() == eb.keys() and all(ea[k] == eb[k] for k in ea)


def test_audit_missing_ray_is_a_clear_exit_2(
    tmp_path: Path,
    planted_dir: Path,
    registry_raw: Path,
    tiny_cross: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    out = tmp_path / "out"
    args = _args(planted_dir, tiny_cross, registry_raw, out, tmp_path / "s", "--engine", "ray")
    from click.testing import CliRunner

    from kit.cli import cli

    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "pip install -e '.[ray]'" in r.output and "Traceback" not in r.output
    assert not out.exists() and not (tmp_path / "s").exists()  # nothing scored, nothing written


def test_audit_ray_options_need_the_ray_engine(
    tmp_path: Path, planted_dir: Path, registry_raw: Path, tiny_cross: Path
) -> None:
    from click.testing import CliRunner

    from kit.cli import cli

    out = tmp_path / "out"
    for extra in (("--ray-address", "auto"), ("--ray-workers", "2")):
        args = _args(planted_dir, tiny_cross, registry_raw, out, tmp_path / "s", *extra)
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "need --engine ray" in r.output, r.output
    assert not out.exists()
