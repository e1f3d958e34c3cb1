"""Sliding windows over a full passage (pure); the sentences they tile come from
:mod:`kit.runs.sentences`.

docs/architecture.md, "Citation guard": "The passage is read in full with a sliding window (never truncated to a
prefix); s = max over windows." Seed 001 (Appendix S2, S5) tiles passages in 600-character
windows at stride 300; the kit's default tiles by sentences instead -- windows of
``size`` consecutive sentences at stride 1 -- so a window never cuts a sentence in half, and
caps each window at ``max_words`` words so it fits the verifier's 256-token limit (a sentence
longer than that is itself split into overlapping word chunks). Every word of the passage lies
in at least one window (tested).

The paper's rule is available as an option: ``WindowSpec(size=600, stride=300, unit="chars")``
(:data:`PAPER_CHAR_WINDOW`) tiles the passage in windows of at most ``size`` characters at
stride ``stride``, cutting at whitespace where possible (:func:`char_window_spans`); every
non-whitespace character lies in at least one window (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.core.errors import check_param
from kit.runs.sentences import split_sentences

WINDOW_UNITS = ("sentences", "chars")


@dataclass(frozen=True)
class WindowSpec:
    """How a passage is tiled.

    ``unit="sentences"`` (default): ``size`` sentences per window, stride ``stride`` sentences,
    each window capped at ``max_words`` words. ``unit="chars"``: windows of at most ``size``
    characters starting every ``stride`` characters (seed 001: 600 / 300), cut at whitespace
    where possible; ``max_words`` is not used.
    """

    size: int = 3
    stride: int = 1
    max_words: int = 120
    unit: str = "sentences"

    def __post_init__(self) -> None:
        check_param("unit", self.unit, self.unit in WINDOW_UNITS, "'sentences' or 'chars'")
        check_param("size", self.size, isinstance(self.size, int) and self.size >= 1, ">= 1")
        check_param(
            "stride",
            self.stride,
            isinstance(self.stride, int) and 1 <= self.stride <= max(self.size, 1),
            f"an integer in [1, size={self.size}]",
        )

    def describe(self) -> str:
        if self.unit == "chars":
            return (
                f"windows of at most {self.size} characters at stride {self.stride} characters "
                f"(seed 001, Appendix S2/S5), cut at the last whitespace of the window's second "
                f"half (a longer run without whitespace is cut at {self.size} characters), each "
                f"starting at a word; whitespace collapsed; every character lies in a window; "
                f"s = max over windows"
            )
        return (
            f"windows of {self.size} consecutive sentences at stride {self.stride}, each capped "
            f"at {self.max_words} words (longer sentences split into {self.max_words}-word "
            f"chunks at stride {max(1, self.max_words // 2)}); s = max over windows"
        )


PAPER_CHAR_WINDOW = WindowSpec(size=600, stride=300, unit="chars")


def char_window_spans(text: str, size: int = 600, stride: int = 300) -> list[tuple[int, int]]:
    """(start, end) offsets of character windows over ``text`` (seed 001, Appendix S2/S5).

    A window starts at a word (or at the first non-whitespace character) and ends at most
    ``size`` characters later: at the last whitespace in the second half of that span, or -- when
    a single run of non-whitespace fills it -- exactly ``size`` characters later. The next
    window starts at the last word start at or before ``start + stride`` (a hard offset when
    there is none), never after the current window's end, so consecutive windows overlap or
    touch and every non-whitespace character lies in some window. Whitespace-only text gives [].
    """
    check_param("size", size, size >= 1, ">= 1", "char_window_spans")
    check_param("stride", stride, 1 <= stride <= size, f"in [1, size={size}]", "char_window_spans")
    stripped = text.rstrip()
    stop = len(stripped)
    start = len(stripped) - len(stripped.lstrip())
    spans: list[tuple[int, int]] = []
    while start < stop:
        limit = start + size
        if limit >= stop:
            spans.append((start, stop))
            break
        end = limit
        lo = start + max(1, size // 2)
        for j in range(limit, lo - 1, -1):  # cut before the last whitespace in the second half
            if text[j].isspace():
                end = j
                break
        spans.append((start, len(text[start:end].rstrip()) + start))
        target = start + stride
        nxt = target
        for j in range(target, start, -1):  # back off to the start of the word holding target
            if not text[j].isspace() and text[j - 1].isspace():
                nxt = j
                break
        nxt = min(nxt, end)
        while nxt < stop and text[nxt].isspace():
            nxt += 1
        start = nxt
    return spans


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
    ``spec.unit == "chars"`` tiles by characters (:func:`char_window_spans`), whitespace
    inside each window collapsed.
    """
    if spec.unit == "chars":
        spans = char_window_spans(passage, spec.size, spec.stride)
        return list(dict.fromkeys(" ".join(passage[a:b].split()) for a, b in spans))
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
