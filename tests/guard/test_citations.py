"""The citation parser on ordinary and awkward inputs, and BM25 proposal."""

from __future__ import annotations

import numpy as np
import pytest

from kit.guard.citations import find_citations, parse_answer, resolve
from kit.guard.reattribute import bm25_rank, recall_at_1


def refs(text: str) -> list[tuple[str, ...]]:
    return [c.refs for c in find_citations(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A [1].", [("1",)]),
        ("A [1, 2].", [("1", "2")]),
        ("A [1;3].", [("1", "3")]),
        ("A [1-3].", [("1", "2", "3")]),
        ("A [2–4].", [("2", "3", "4")]),
        ("A [PMID:123].", [("PMID:123",)]),
        ("A [PMID 123, 456].", [("PMID:123", "PMID:456")]),
        ("A (PMID 123).", [("PMID:123",)]),
        ("A (PMID: 9; NCT01234567).", [("PMID:9", "NCT01234567")]),
        ("Trial NCT01234567 showed it.", [("NCT01234567",)]),
        ("A [NCT01234567].", [("NCT01234567",)]),
        ("A [[1]].", [("1",)]),
        ("A [1] [1].", [("1",), ("1",)]),
    ],
)
def test_styles(text: str, expected: list[tuple[str, ...]]) -> None:
    assert refs(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "no citations here",
        "A [see above].",
        "dose (n = 5) and (3)",
        "A [5-1].",  # reversed range
        "A [1-500].",  # absurd range
        "NCT1234567 has 7 digits",
        "A [1,,2].",
        "A [",
        "A ]1[",
        "[]",
    ],
)
def test_non_citations_ignored(text: str) -> None:
    assert refs(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t ",
        "[1]",
        "[[[[[[1]]]]]] [[[",
        "Ünïcødé ≥ 5 µg/mL [１] — “quoted” [2]。 次の文 [3].",
        "\x00\x01 [1] \ud7ff",
        ("Long claim about aspirin [1]. " * 5000),
        "(" * 10000 + "[1]" + ")" * 10000,
        "Claim. [2] Next [3]",
    ],
)
def test_awkward_inputs_do_not_crash(text: str) -> None:
    claims = parse_answer(text)
    for c in claims:
        assert isinstance(c.text, str)
        for cit in c.citations:
            assert text[cit.start : cit.end] == cit.text


def test_sentences_and_leading_marker() -> None:
    claims = parse_answer("Aspirin works [1]. Coffee is fine. [2] Metformin helps (PMID 77).")
    assert [c.text for c in claims] == ["Aspirin works.", "Coffee is fine.", "Metformin helps."]
    assert [[x.refs for x in c.citations] for c in claims] == [[("1",)], [("2",)], [("PMID:77",)]]


def test_resolve_out_of_range_and_pmid_forms() -> None:
    passages = {"1": "a", "123": "b", "NCT01234567": "c"}
    assert resolve("1", passages) == "1"
    assert resolve("9", passages) is None
    assert resolve("PMID:123", passages) == "123"
    assert resolve("NCT01234567", passages) == "NCT01234567"


def test_bm25_small_pool_ranks_by_overlap_not_id() -> None:
    pool = {
        "1": "Aspirin reduced myocardial infarction.",
        "2": "Coffee and pancreatic cancer were not associated.",
        "3": "Metformin reduced glucose in type 2 diabetes.",
    }
    ranked = bm25_rank("metformin lowers glucose in diabetes", pool, exclude={"2"})
    assert ranked[0][0] == "3" and [p for p, _ in ranked] == ["3", "1"]
    assert bm25_rank("x", {"1": "", "2": "   "}) == []
    hits = recall_at_1(["coffee cancer", "aspirin"], ["2", "3"], [pool, pool])
    assert hits.tolist() == [1, 0]
    assert isinstance(hits, np.ndarray)
