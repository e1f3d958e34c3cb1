"""`--engine ray` scores the store's misses on a local 2-CPU Ray cluster, byte-identical to local."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.guard.scoring import score_store as ss


def _pairs(path: Path, n: int = 60, seed: int = 0) -> Path:
    """Claims and passages of varied lengths (one to several windows), one pair repeated."""
    rng = np.random.default_rng(seed)
    words = "aspirin lowers fever in adults statins cut ldl trials show no effect on".split()
    claims = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(n)]
    passages = [" ".join(rng.choice(words, rng.integers(4, 500))) for _ in range(n)]
    claims[-1], passages[-1] = claims[0], passages[0]  # a repeated pair
    frame = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "claim": claims})
    frame["passage"] = passages
    frame.to_parquet(path, index=False)
    return path


def _score(src: Path, out: Path, store: Path, model: Path, *extra: str) -> str:
    args = ["guard", "score", str(src), "--verifier", str(model), "--out", str(out)]
    r = CliRunner().invoke(cli, [*args, "--cache-dir", str(store), "--batch-size", "8", *extra])
    assert r.exit_code == 0, r.output
    return r.output


def _store_entries(root: Path) -> dict[bytes, ss.Entry]:
    (folder,) = [p for p in root.glob("*/*") if p.is_dir()]
    return ss.read_partition(folder)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    ray = pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow  # ~25 s on 2 shared cores, most of it starting Ray and its actors
def test_ray_engine_is_byte_identical_to_local(
    ray_cluster: object, tmp_path: Path, tiny_cross_dir: Path
) -> None:
    src = _pairs(tmp_path / "pairs.parquet")
    local_out, ray_out = tmp_path / "local.csv", tmp_path / "ray.csv"
    said = _score(src, local_out, tmp_path / "s-local", tiny_cross_dir)
    assert "1 hit(s), 59 scored" in said  # 60 rows, one repeated pair (a hit within the call)
    said = _score(src, ray_out, tmp_path / "s-ray", tiny_cross_dir, "--engine", "ray")
    assert "1 hit(s), 59 scored" in said
    assert ray_out.read_bytes() == local_out.read_bytes()
    a, b = _store_entries(tmp_path / "s-local"), _store_entries(tmp_path / "s-ray")
    assert len(a) == 59 and a.keys() == b.keys()
    for k in a:  # the shards hold the same floats, bit for bit
        assert np.array(a[k][0]).tobytes() == np.array(b[k][0]).tobytes()
        assert np.array(a[k][1]).tobytes() == np.array(b[k][1]).tobytes()
    # a half-warm store: only the misses go to Ray; same bytes as local from the same store
    half = tmp_path / "half.parquet"
    pd.read_parquet(src).iloc[:30].to_parquet(half, index=False)
    _score(half, tmp_path / "h.csv", tmp_path / "w-local", tiny_cross_dir)
    shutil.copytree(tmp_path / "w-local", tmp_path / "w-ray")
    outs = []
    for name, engine in (("w-local", "local"), ("w-ray", "ray")):
        out = tmp_path / f"{name}.csv"
        said = _score(src, out, tmp_path / name, tiny_cross_dir, "--engine", engine)
        assert "31 hit(s), 29 scored" in said
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_missing_ray_is_a_clear_exit_2(
    tmp_path: Path, tiny_cross_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    src = _pairs(tmp_path / "pairs.parquet", n=4)
    args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir), "--engine", "ray"]
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 2, r.output
    assert "pip install -e '.[ray]'" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o.csv").exists()


def test_ray_options_need_the_ray_engine(tmp_path: Path, tiny_cross_dir: Path) -> None:
    src = _pairs(tmp_path / "pairs.parquet", n=4)
    args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir)]
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "o.csv"), "--ray-address", "x"])
    assert r.exit_code == 2 and "need --engine ray" in r.output, r.output
