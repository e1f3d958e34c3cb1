"""`kit certify --engine ray`: the --validate / --null-draws draws as Ray tasks, same bytes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kit.certify.calibration import sign_flip_null
from kit.certify.design import parse_design
from kit.certify.engine import prepare_board
from kit.certify.simulate import simulate_board
from kit.certify.validity import validity_report
from kit.cli import cli
from kit.core.parallel import SerialMap, split

EFFECTS = {"A": 0.04, "B": 0.0, "C": 0.0, "D": -0.03}


class Grouped(SerialMap):
    """A serial mapper asking for ``parts`` groups, counting its calls (as Ray would split)."""

    def __init__(self, parts: int) -> None:
        self.parts = parts
        self.items: list[object] = []

    def map(self, fn, items):  # type: ignore[no-untyped-def]
        self.items = list(items)
        return [fn(x) for x in reversed(self.items)][::-1]  # evaluated out of order


def test_split_covers_every_index_once() -> None:
    for n, parts in ((10, 3), (3, 8), (1, 1), (257, 4)):
        pieces = split(n, parts)
        assert [i for p in pieces for i in p] == list(range(n))
        assert len(pieces) == min(n, parts) and all(len(p) > 0 for p in pieces)


@pytest.mark.parametrize("parts", [2, 5])
def test_validity_is_the_same_in_any_grouping(parts: int) -> None:
    frame = simulate_board(np.random.default_rng(4), EFFECTS, n_tasks=30, n_clusters=5)
    design = parse_design({})
    board = prepare_board(frame, design)
    ref = validity_report(board, design, 7, seed=2)
    run = Grouped(parts)
    got = validity_report(board, design, 7, seed=2, mapper=run)
    assert len(run.items) == parts  # the work really was split
    assert got.to_csv() == ref.to_csv()
    other = validity_report(board, design, 7, seed=3, mapper=run)
    assert other.to_csv() != ref.to_csv()  # the seed matters: the comparison can fail


@pytest.mark.parametrize(("k", "draws"), [(12, 700), (4, 64)])  # random draws; exact 2^K
def test_sign_flip_null_is_the_same_in_any_grouping(k: int, draws: int) -> None:
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(k), 5)
    d = rng.normal(0.02, 0.1, size=(6, len(codes)))
    d[1, 3] = np.nan
    eps = np.full(6, 0.01)
    ref = sign_flip_null(d, codes, k, eps, 0.01, draws, np.random.default_rng(5), chunk=64)
    run = Grouped(3)
    got = sign_flip_null(
        d, codes, k, eps, 0.01, draws, np.random.default_rng(5), chunk=64, mapper=run
    )
    assert len(run.items) == min(3, -(-len(ref.statistic) // 64))
    assert got.statistic.tobytes() == ref.statistic.tobytes()
    assert got.per_contrast.tobytes() == ref.per_contrast.tobytes()
    assert (got.fwer, got.c_star, got.exact) == (ref.fwer, ref.c_star, ref.exact)


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    scores = tmp_path / "s.csv"
    simulate_board(np.random.default_rng(9), EFFECTS, n_tasks=40, n_clusters=12).to_csv(
        scores, index=False
    )
    design = tmp_path / "d.yaml"
    design.write_text("alpha: 0.05\n")
    return scores, design


def _certify(scores: Path, design: Path, out: Path, *extra: str) -> str:
    args = ["certify", str(scores), "--design", str(design), "--out", str(out), "--no-figure"]
    res = CliRunner().invoke(cli, [*args, "--validate", "24", "--null-draws", "600", *extra])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    ray = pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


# ~12 s on 2 shared cores (Ray's start), under the 20 s of a slow test; skipped without ray
def test_certify_ray_engine_is_byte_identical_to_local(ray_cluster: object, tmp_path: Path) -> None:
    scores, design = _inputs(tmp_path)
    local = _certify(scores, design, tmp_path / "local")
    ray_said = _certify(scores, design, tmp_path / "ray", "--engine", "ray", "--ray-workers", "2")
    assert local.splitlines()[-12:-1] == ray_said.splitlines()[-12:-1]  # last: the path
    for name in ("validity.csv", "calibration.csv", "loco.csv", "pairs.csv"):
        a = (tmp_path / "local" / name).read_bytes()
        assert a == (tmp_path / "ray" / name).read_bytes(), name
    assert b"fwer_false_certification" in (tmp_path / "ray" / "validity.csv").read_bytes()


def test_certify_missing_ray_is_a_clear_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    scores, design = _inputs(tmp_path)
    args = ["certify", str(scores), "--design", str(design), "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(cli, [*args, "--validate", "4", "--engine", "ray"])
    assert res.exit_code == 2, res.output
    assert "pip install -e '.[ray]'" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()  # the sealed folder is swapped in only on success
    res = CliRunner().invoke(cli, [*args, "--ray-workers", "2"])
    assert res.exit_code == 2 and "need --engine ray" in res.output, res.output
