"""Sentence splitting (pure): the splitter the citation markers (:mod:`kit.runs.citations`)
and the verifier's windows share.

docs/architecture.md, "Citation guard": an answer is split into sentences; each sentence with
citations yields claim-citation pairs. The passage windows tile by these sentences.
"""

from __future__ import annotations

import re

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
