"""Sentence splitting and sliding windows over a full passage (pure).

DESIGN.md section B: "The passage is read in full with a sliding window (never truncated to a
prefix); s = max over windows." Seed 001 (Appendix S2, S5) tiles passages in 600-character
windows at stride 300; the kit's default tiles by sentences instead -- windows of
``size`` consecutive sentences at stride 1 -- so a window never cuts a sentence in half, and
caps each window at ``max_words`` words so it fits the verifier's 256-token limit (a sentence
longer than that is itself split into overlapping word chunks). Every word of the passage lies
in at least one window (tested).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Lower-case abbreviations after which a period does not end a sentence.
_ABBREV = {
    "al",
    "e.g",
    "i.e",
    "fig",
    "figs",
    "vs",
    "ref",
    "refs",
    "no",
    "approx",
    "ca",
    "cf",
    "dr",
    "mr",
    "mrs",
    "ms",
    "st",
    "eq",
    "eqs",
    "sec",
    "resp",
    "etc",
}
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text`` in the *original* string.

    A sentence ends at ., ! or ? (plus closing quotes/brackets) followed by whitespace and a
    capital, digit or opening bracket. A boundary after a known abbreviation ("et al.", "Fig.",
    "e.g.") or a single-letter initial is not a sentence end. Whitespace-only text gives [].
    """
    out: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        head = text[start : m.start()].rstrip("\"')]")
        last = head.rsplit(None, 1)[-1].rstrip(".!?").lower() if head.strip() else ""
        if last in _ABBREV or (len(last) == 1 and last.isalpha()):
            continue
        out.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    out.append((start, len(text)))
    spans = []
    for a, b in out:
        seg = text[a:b]
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            spans.append((a + lead, a + len(seg.rstrip())))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` with internal whitespace collapsed (see :func:`sentence_spans`)."""
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


@dataclass(frozen=True)
class WindowSpec:
    """How a passage is tiled: ``size`` sentences per window, stride ``stride``, word cap."""

    size: int = 3
    stride: int = 1
    max_words: int = 120

    def describe(self) -> str:
        return (
            f"windows of {self.size} consecutive sentences at stride {self.stride}, each capped "
            f"at {self.max_words} words (longer sentences split into {self.max_words}-word "
            f"chunks at stride {max(1, self.max_words // 2)}); s = max over windows"
        )


def _units(passage: str, max_words: int) -> list[str]:
    units: list[str] = []
    step = max(1, max_words // 2)
    for sent in split_sentences(passage):
        words = sent.split()
        if len(words) <= max_words:
            units.append(sent)
            continue
        for i in range(0, len(words), step):
            units.append(" ".join(words[i : i + max_words]))
            if i + max_words >= len(words):
                break
    return units


def passage_windows(passage: str, spec: WindowSpec = WindowSpec()) -> list[str]:
    """The windows covering the whole passage, in order, duplicates removed.

    An empty passage yields [] -- callers must treat "nothing to read" explicitly (the guard
    gives such a citation score 0 and status ``empty_passage``), never as support.
    """
    units = _units(passage, spec.max_words)
    if not units:
        return []
    if len(units) <= spec.size:
        joined = " ".join(units)
        if len(joined.split()) <= spec.max_words:
            return [joined]
    windows: list[str] = []
    starts = list(range(0, max(1, len(units) - spec.size + 1), spec.stride))
    if starts[-1] + spec.size < len(units):  # make sure the tail is covered
        starts.append(len(units) - spec.size)
    for s in starts:
        chosen = [units[s]]
        count = len(units[s].split())
        for u in units[s + 1 : s + spec.size]:
            n = len(u.split())
            if count + n > spec.max_words:
                break
            chosen.append(u)
            count += n
        windows.append(" ".join(chosen))
    # a unit skipped by the word cap still starts its own window when stride is 1; for larger
    # strides add any unit not yet covered, so no text is ever left unread
    covered = set()
    for s in starts:
        covered.add(s)
    for i, u in enumerate(units):
        if i not in covered and not any(u in w for w in windows):
            windows.append(u)
    return list(dict.fromkeys(windows))
