"""Character windows (seed 001: 600 characters at stride 300) as an option of WindowSpec."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kit.core.errors import ConfigError
from kit.guard.scoring.windows import (
    PAPER_CHAR_WINDOW,
    WindowSpec,
    char_window_spans,
    passage_windows,
)

SENTENCE_RULE = (
    "windows of 3 consecutive sentences at stride 1, each capped at 120 words (longer "
    "sentences split into 120-word chunks at stride 60); s = max over windows"
)


def _text(seed: int, n_words: int, max_len: int = 12) -> str:
    rng = np.random.default_rng(seed)
    seps = [" ", " ", " ", "\n", "  ", "\t"]
    parts = []
    for _ in range(n_words):
        parts.append("".join(rng.choice(list("abcdefghij."), size=rng.integers(1, max_len))))
        parts.append(seps[int(rng.integers(len(seps)))])
    return "".join(parts)


def _covered(text: str, spans: list[tuple[int, int]]) -> np.ndarray:
    cov = np.zeros(len(text), dtype=bool)
    for a, b in spans:
        cov[a:b] = True
    return cov


def test_default_is_unchanged() -> None:
    spec = WindowSpec()
    assert (spec.size, spec.stride, spec.max_words, spec.unit) == (3, 1, 120, "sentences")
    assert spec.describe() == SENTENCE_RULE
    assert dataclasses.is_dataclass(spec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.unit = "chars"  # type: ignore[misc]


def test_paper_window_describe() -> None:
    assert (PAPER_CHAR_WINDOW.size, PAPER_CHAR_WINDOW.stride) == (600, 300)
    text = PAPER_CHAR_WINDOW.describe()
    assert "600 characters at stride 300" in text and "max over windows" in text


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("size", "stride"), [(600, 300), (50, 25), (40, 40), (30, 7)])
def test_every_character_covered_and_cuts_at_whitespace(seed: int, size: int, stride: int) -> None:
    text = _text(seed, 300)
    spans = char_window_spans(text, size, stride)
    cov = _covered(text, spans)
    content = np.array([not ch.isspace() for ch in text])
    assert np.all(cov[content]), "a non-whitespace character is in no window"
    for i, (a, b) in enumerate(spans):
        assert 0 <= a < b <= len(text) and b - a <= size
        assert not text[a].isspace() and not text[b - 1].isspace()
        if stride > 12:  # words here are < 12 characters: a window starts at a word
            assert a == 0 or text[a - 1].isspace()
        if i + 1 < len(spans):
            assert b == len(text) or text[b].isspace()  # cut at whitespace
            assert spans[i + 1][0] > a  # progress
            assert spans[i + 1][0] <= b + len(text[b:]) - len(text[b:].lstrip())  # no gap
    assert spans[-1][1] == len(text.rstrip())


def test_window_count_matches_stride() -> None:
    text = _text(1, 2000, max_len=8)
    spans = char_window_spans(text, 600, 300)
    expected = int(np.ceil((len(text.rstrip()) - 600) / 300)) + 1
    assert abs(len(spans) - expected) <= max(2, expected // 10)


def test_long_run_without_whitespace_is_cut_hard() -> None:
    text = "a" * 1500 + " tail words"
    spans = char_window_spans(text, 600, 300)
    assert spans[0] == (0, 600)
    assert np.all(_covered(text, spans)[[i for i, c in enumerate(text) if not c.isspace()]])
    assert all(b - a <= 600 for a, b in spans)


def test_passage_windows_chars() -> None:
    assert passage_windows("", PAPER_CHAR_WINDOW) == []
    assert passage_windows("  \n ", PAPER_CHAR_WINDOW) == []
    assert passage_windows("A short  passage.\nTwo lines.", PAPER_CHAR_WINDOW) == [
        "A short passage. Two lines."
    ]
    text = _text(3, 600)
    wins = passage_windows(text, PAPER_CHAR_WINDOW)
    assert len(wins) > 3 and all(len(w) <= 600 for w in wins)
    joined = " ".join(wins)
    assert all(word in joined for word in text.split())
    assert wins == passage_windows(text, WindowSpec(size=600, stride=300, unit="chars"))


def test_sentence_rule_untouched_by_unit_field() -> None:
    text = "One sentence here. Two sentences here. Three here. Four here. Five is last."
    assert passage_windows(text) == passage_windows(text, WindowSpec(3, 1, 120, "sentences"))
    assert passage_windows(text) != passage_windows(text, WindowSpec(30, 15, unit="chars"))


@pytest.mark.parametrize(
    "kwargs",
    [{"unit": "words"}, {"size": 0}, {"size": 10, "stride": 11, "unit": "chars"}, {"stride": 0}],
)
def test_bad_spec_refused(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        WindowSpec(**kwargs)
