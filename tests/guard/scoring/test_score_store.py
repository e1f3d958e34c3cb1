"""The content-addressed score store (kit.guard.scoring.score_store): keys, persistence, concurrency."""

from __future__ import annotations

import hashlib
import multiprocessing
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.guard.scoring import score_store as ss
from kit.guard.scoring.pairtable import score_pairs
from kit.guard.scoring.windows import WindowSpec

SHA_A = hashlib.sha256(b"verifier A").hexdigest()
SHA_B = hashlib.sha256(b"verifier B").hexdigest()
MODE = {"format": 1, "kind": "test", "device": "cpu"}


class CountingScorer:
    """A deterministic scorer that counts the pairs it was asked to score."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, claims: list[str], passages: list[str]) -> np.ndarray:
        self.calls += len(claims)
        return np.array([len(c) / (len(c) + len(p)) for c, p in zip(claims, passages, strict=True)])


class ClassScorer(CountingScorer):
    """A fake cross-encoder: three class probabilities per pair, s = P(entailment)."""

    labels = ("entailment", "neutral", "contradiction")

    def score_classes(
        self, claims: list[str], passages: list[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        s = self.score(claims, passages)
        probs = np.stack([s, (1 - s) / 3, 2 * (1 - s) / 3], axis=1)
        probs[[p == "" for p in passages]] = np.nan
        return s, probs


def test_pair_key_separates_fields() -> None:
    a = ss.pair_key("ab", "c")
    assert a == ss.pair_key("ab", "c") and len(a) == 64
    assert a != ss.pair_key("a", "bc")  # hashed separately: no concatenation collisions
    assert a != ss.pair_key("c", "ab")
    assert a[:32].hex() == ss.text_sha256("ab")


def test_scorer_name_is_the_name_then_the_card_then_the_class() -> None:
    """What a report calls an instrument: its name, else its verifier card's name."""

    class Named:
        name = "lexical-idf-coverage"

    class Carded:
        card = type("Card", (), {"name": "minilm-nli"})()

    class Bare:
        pass

    assert ss.scorer_name(Named()) == "lexical-idf-coverage"
    assert ss.scorer_name(Carded()) == "guard verifier: minilm-nli"
    assert ss.scorer_name(Bare()) == "Bare"


def test_scoring_mode_tracks_what_changes_a_score() -> None:
    card = SimpleNamespace(kind="cross-encoder", scoring_rule="r", window_rule="w", extra={})
    base = SimpleNamespace(card=card, labels=["entailment", "neutral"], scoring="entailment")
    base.window = WindowSpec()
    m = ss.mode_sha256(ss.scoring_mode(base, "cpu"))
    assert m == ss.mode_sha256(ss.scoring_mode(base, "cpu"))
    assert m != ss.mode_sha256(ss.scoring_mode(base, "cuda"))
    for change in (
        {"scoring": "entailment_minus_contradiction"},
        {"labels": ["neutral", "entailment"]},
        {"window": WindowSpec(size=5)},
    ):
        other = SimpleNamespace(**{**base.__dict__, **change})
        assert ss.mode_sha256(ss.scoring_mode(other, "cpu")) != m, change
    two = SimpleNamespace(**base.__dict__)
    two.card = SimpleNamespace(**{**card.__dict__, "extra": {"two_stage": {"top_k": 2}}})
    assert ss.mode_sha256(ss.scoring_mode(two, "cpu")) != m


def test_scores_each_pair_once_and_reads_back_exact_floats(tmp_path: Path) -> None:
    inner = CountingScorer()
    s = ss.StoredScorer(inner, ss.ScoreStore(tmp_path, SHA_A, MODE))
    first = s.score(["a", "bb", "a"], ["x", "y", "x"])
    assert inner.calls == 2 and s.misses == 2 and s.hits == 1
    assert s.flush() == 2 and s.flush() == 0
    again = ss.StoredScorer(CountingScorer(), ss.ScoreStore(tmp_path, SHA_A, MODE))
    second = again.score(["bb", "a"], ["y", "x"])
    assert again.inner.calls == 0 and again.hits == 2 and again.misses == 0
    assert second.tolist() == [first[1], first[0]]  # bit for bit
    with pytest.raises(Exception, match="same length"):
        s.score(["a"], [])


def test_changed_verifier_or_mode_never_hits(tmp_path: Path) -> None:
    claims, passages = ["c1", "c2"], ["p1", "p2"]
    s = ss.StoredScorer(CountingScorer(), ss.ScoreStore(tmp_path, SHA_A, MODE))
    s.score(claims, passages)
    s.flush()
    for sha, mode in ((SHA_B, MODE), (SHA_A, {**MODE, "device": "cuda"})):
        other = ss.StoredScorer(CountingScorer(), ss.ScoreStore(tmp_path, sha, mode))
        other.score(claims, passages)
        assert other.hits == 0 and other.misses == 2 and other.inner.calls == 2
    with pytest.raises(Exception, match="verifier_sha256"):
        ss.ScoreStore(tmp_path, "not-a-sha", MODE)


def test_no_store_keeps_nothing_on_disk(tmp_path: Path) -> None:
    s = ss.StoredScorer(CountingScorer(), ss.ScoreStore(None, SHA_A, MODE))
    s.score(["a", "a"], ["x", "x"])
    assert s.flush() == 1 and s.hits == 1 and not any(tmp_path.iterdir())


def test_class_probabilities_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"pair_id": ["1", "2", "3"], "claim": ["a", "bb", "c"], "passage": ["xy", "z", ""]}
    )
    direct = score_pairs(ClassScorer(), frame)
    s = ss.StoredScorer(ClassScorer(), ss.ScoreStore(tmp_path, SHA_A, MODE))
    cold = score_pairs(s, frame)
    s.flush()
    warm_s = ss.StoredScorer(ClassScorer(), ss.ScoreStore(tmp_path, SHA_A, MODE))
    warm = score_pairs(warm_s, frame)
    assert warm_s.inner.calls == 0 and warm_s.hits == 3
    pd.testing.assert_frame_equal(cold, direct)
    pd.testing.assert_frame_equal(warm, direct)  # NaN probabilities of an empty passage kept
    assert np.isnan(warm.loc[2, "p_entailment"])
    bi = ss.StoredScorer(CountingScorer(), ss.ScoreStore(tmp_path, SHA_B, MODE))
    assert not hasattr(bi, "labels")  # a bi-encoder stays a bi-encoder for score_pairs


def _writer(root: str, worker: int, n_keys: int, n_flushes: int) -> None:
    """One process: overlapping keys (every other key shared with the other worker)."""
    store = ss.ScoreStore(Path(root), SHA_A, MODE)
    per = n_keys // n_flushes
    for f in range(n_flushes):
        for i in range(f * per, (f + 1) * per):
            owner = "shared" if i % 2 == 0 else f"w{worker}"
            store.add(ss.pair_key(f"{owner}-{i}", "p"), (i % 97) / 96)
        store.flush()


def test_two_concurrent_writers_leave_every_score(tmp_path: Path) -> None:
    """Two processes append (and compact: more than COMPACT_AT shards) at the same time; the
    store stays readable and holds every score either wrote, with its value."""
    n_keys, n_flushes = 680, 34
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), w, n_keys, n_flushes)) for w in (0, 1)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = ss.ScoreStore(tmp_path, SHA_A, MODE)
    want = {}
    for w in (0, 1):
        for i in range(n_keys):
            owner = "shared" if i % 2 == 0 else f"w{w}"
            want[ss.pair_key(f"{owner}-{i}", "p")] = (i % 97) / 96
    assert len(store) == len(want) == 3 * n_keys // 2
    for k, v in want.items():
        assert store.get(k) == (v, None)
    assert store.folder is not None
    shards = list(store.folder.glob(ss.SHARD_GLOB))
    assert len(shards) < 2 * n_flushes  # compaction ran
    assert not [p for p in store.folder.iterdir() if p.name.startswith(".")]  # no temp left


def test_compact_merges_and_keeps_first_value(tmp_path: Path) -> None:
    st = ss.ScoreStore(tmp_path, SHA_A, MODE)
    st.add(ss.pair_key("a", "p"), 0.25)
    st.flush()
    late = ss.ScoreStore(tmp_path, SHA_A, MODE)
    late._entries = {}  # a writer that did not see the first shard scores "a" differently
    late.add(ss.pair_key("a", "p"), 0.75)
    late.add(ss.pair_key("b", "p"), 0.5)
    late.flush()
    assert ss.ScoreStore(tmp_path, SHA_A, MODE).get(ss.pair_key("a", "p")) == (0.25, None)
    assert ss.compact_store(tmp_path) == {f"{SHA_A}/{ss.mode_sha256(MODE)}": 2}
    after = ss.ScoreStore(tmp_path, SHA_A, MODE)
    assert after.get(ss.pair_key("a", "p")) == (0.25, None)  # the oldest value still wins
    assert after.get(ss.pair_key("b", "p")) == (0.5, None)
    assert after.folder is not None and len(list(after.folder.glob(ss.SHARD_GLOB))) == 1


def test_notes_round_trip_through_flush_and_compaction(tmp_path: Path) -> None:
    """A note (an LLM judge's reason) stays with its key's score; keys without one have none;
    the first shard's value and note win a repeated key."""
    k1, k2, k3 = (ss.pair_key(c, "p") for c in "abc")
    st = ss.ScoreStore(tmp_path, SHA_A, MODE)
    st.add(k1, 1.0, (0.8, 0.1, 0.1), note="names both terms")
    st.add(k2, 0.0)
    st.flush()
    late = ss.ScoreStore(tmp_path, SHA_A, MODE)
    late._entries = {}  # a writer that did not see the first shard
    late.add(k1, 0.5, note="a later reason")
    late.add(k3, 0.5, note="")
    late.flush()
    for _ in range(2):
        back = ss.ScoreStore(tmp_path, SHA_A, MODE)
        assert back.get(k1) == (1.0, (0.8, 0.1, 0.1)) and back.note(k1) == "names both terms"
        assert back.note(k2) is None and back.note(k3) == ""
        ss.compact_store(tmp_path)
    assert back.folder is not None and len(list(back.folder.glob(ss.SHARD_GLOB))) == 1


def test_cli_score_cold_and_warm_are_identical(tmp_path: Path, tiny_cross_dir: Path) -> None:
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {
            "pair_id": ["a", "b", "c"],
            "claim": ["Aspirin lowers fever.", "Statins cut LDL.", "Aspirin lowers fever."],
            "passage": ["Aspirin reduced fever in trials.", "LDL fell on statins.", "No text."],
        }
    ).to_csv(src, index=False)
    store = tmp_path / "scores"
    outs = []
    for name in ("cold", "warm"):
        out = tmp_path / f"{name}.csv"
        args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir), "--out", str(out)]
        r = CliRunner().invoke(cli, [*args, "--cache-dir", str(store)])
        assert r.exit_code == 0, r.output
        outs.append((r.output, out.read_bytes()))
    assert "0 hit(s), 3 scored" in outs[0][0]
    assert "3 hit(s), 0 scored" in outs[1][0]
    assert outs[0][1] == outs[1][1]
    none = tmp_path / "none"
    args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir)]
    args += ["--out", str(tmp_path / "n.csv"), "--cache-dir", str(none), "--no-cache"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and "0 hit(s), 3 scored" in r.output, r.output
    assert not none.exists()
    assert (tmp_path / "n.csv").read_bytes() == outs[0][1]
