"""The embedding store: a bi-encoder's embeddings kept across runs beside the score store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kit.core.errors import InputError
from kit.guard.scoring import embedding_store as es
from kit.guard.scoring import score_store as ss
from kit.guard.verifiers.load import load_verifier
from tests.guard.tiny_model import build_tiny_cross_encoder

SHA = "ab" * 32
MODE = es.embedding_mode("cpu", "cd" * 32)

PASSAGES = [
    "We enrolled 400 adults. Aspirin was given daily for two years. Strokes were counted by "
    "blinded assessors. The aspirin arm had fewer strokes than placebo. Bleeding was more "
    "common with aspirin. Adherence was high in both arms.",
    "Mice were fed a high-fat diet. Weight gain was measured weekly. Metformin reduced weight "
    "gain. Insulin sensitivity improved. No deaths occurred. Livers were examined at the end.",
]
CLAIMS_A = ["Aspirin lowers stroke risk.", "Metformin reduced weight gain in mice."]
CLAIMS_B = ["Aspirin raises bleeding risk.", "Metformin had no effect on insulin."]


def _vectors(n: int, dim: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {f"{i:064x}": rng.standard_normal(dim).astype(np.float32) for i in range(n)}


def test_shard_round_trip_is_bit_for_bit(tmp_path: Path) -> None:
    vecs = _vectors(5)
    path = es.write_shard(tmp_path, vecs)
    back = es.read_shard(path)
    assert sorted(back) == sorted(vecs)
    for k, v in vecs.items():
        assert back[k].dtype == np.float32
        assert np.array_equal(back[k].view(np.int32), v.view(np.int32))


def test_first_shard_wins_and_compaction_keeps_it(tmp_path: Path) -> None:
    old, new = _vectors(3, seed=1), _vectors(3, seed=2)
    es.write_shard(tmp_path, old, stamp=1)
    es.write_shard(tmp_path, new, stamp=2)
    key = sorted(old)[0]
    assert np.array_equal(es.read_partition(tmp_path)[key], old[key])
    assert es.compact(tmp_path) == 2
    assert len(list(tmp_path.glob(es.SHARD_GLOB))) == 1
    assert np.array_equal(es.read_partition(tmp_path)[key], old[key])


def test_store_flush_and_reload(tmp_path: Path) -> None:
    store = es.EmbeddingStore(tmp_path, SHA, MODE)
    vecs = _vectors(4)
    for k, v in vecs.items():
        store.add(k, v)
    assert store.flush() == 4
    assert store.flush() == 0  # nothing new: no empty shard
    again = es.EmbeddingStore(tmp_path, SHA, MODE)
    got = again.get_many([*vecs, "ef" * 32])
    assert sorted(got) == sorted(vecs)
    assert (store.folder / "mode.json").is_file()
    # another mode (device) is another partition: it sees nothing
    other = es.EmbeddingStore(tmp_path, SHA, es.embedding_mode("cuda", "cd" * 32))
    assert other.get_many(list(vecs)) == {}


def test_a_foreign_shard_is_a_clear_input_error(tmp_path: Path) -> None:
    path = tmp_path / "embeddings-00000000000000000001-1-aaaaaaaa.parquet"
    pd.DataFrame({"text_sha256": ["not-a-sha"], "e_0": np.float32([0.5])}).to_parquet(path)
    with pytest.raises(InputError) as err:
        es.read_shard(path)
    assert "embeddings-" in str(err.value.where) or "embeddings-" in str(err.value)


def test_a_short_embedding_names_its_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "embeddings-00000000000000000001-1-aaaaaaaa.parquet"
    frame = es.shard_frame(_vectors(3))
    frame.loc[1, "embedding"] = frame.loc[1, "embedding"][:-4]  # one float32 short
    frame.to_parquet(path)
    with pytest.raises(InputError) as err:
        es.read_shard(path)
    assert err.value.where.row == 2 and err.value.where.column == "embedding"
    assert "32 bytes" in str(err.value)


def test_bad_model_sha_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="64 lower-case hex"):
        es.EmbeddingStore(tmp_path, "xyz", MODE)


@pytest.fixture(scope="module")
def two_signal_dir(tmp_path_factory: pytest.TempPathFactory, verifier_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("emb") / "two"
    return build_tiny_cross_encoder(out, scoring="two_signal", relatedness=verifier_dir)


def _score(folder: Path, claims: list[str], root: Path | None) -> tuple[np.ndarray, int]:
    """(scores, tokens the relatedness bi-encoder embedded) of a fresh verifier via the store."""
    v = load_verifier(folder, "fp32")
    scorer = ss.open_scorer(v, root)
    s = scorer.score(claims, PASSAGES)
    scorer.flush()
    return s, v.relatedness.tokens_seen


def test_new_claims_reuse_the_windows_embeddings(two_signal_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "scores"
    _, tokens_a = _score(two_signal_dir, CLAIMS_A, root)
    # the windows and claims of run A are in the store, beside its scores
    parts = list(root.glob(f"*/*/{es.SHARD_GLOB}"))
    assert parts, "no embedding shard written"
    warm, tokens_warm = _score(two_signal_dir, CLAIMS_B, root)
    cold, tokens_cold = _score(two_signal_dir, CLAIMS_B, None)
    # run B embedded its two claims only: the passages' windows came from the store
    claims_only = load_verifier(two_signal_dir, "fp32").relatedness
    claims_only.embed(CLAIMS_B)
    assert tokens_warm == claims_only.tokens_seen
    assert tokens_warm < tokens_cold
    # fp32 embeddings do not depend on their batch: the scores are a cold run's
    np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-6)
    assert tokens_a > tokens_warm


def test_no_cache_binds_no_embedding_store(two_signal_dir: Path, tmp_path: Path) -> None:
    v = load_verifier(two_signal_dir, "fp32")
    ss.open_scorer(v, None).score(CLAIMS_A, PASSAGES)
    assert v.relatedness.embedding_store is None
    assert not any(tmp_path.iterdir())


def test_compact_store_merges_embedding_shards(tmp_path: Path) -> None:
    folder = tmp_path / SHA / "m"
    folder.mkdir(parents=True)
    es.write_shard(folder, _vectors(2, seed=1), stamp=1)
    es.write_shard(folder, _vectors(2, seed=2), stamp=2)
    assert ss.compact_store(tmp_path) == {f"{SHA}/m": 2}
