"""The citation parser on ordinary and awkward inputs, and BM25 proposal."""

from __future__ import annotations

import numpy as np
import pytest

from kit.guard.reattribute import bm25_rank, recall_at_1
from kit.runs.citations import find_citations, parse_answer, resolve


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


NUMERIC_LIST = frozenset(str(i) for i in range(1, 13))  # a 12-entry numeric reference list


def refs_with(text: str, references: frozenset[str] | None) -> list[tuple[str, ...]]:
    return [c.refs for c in find_citations(text, references)]


@pytest.mark.parametrize("references", [None, NUMERIC_LIST, frozenset({"1", "2"})])
@pytest.mark.parametrize(
    "text",
    [
        "The dose range [10, 20] mg was tolerated.",
        "Doses of [1-3] mg were used.",
        "Survival improved by [10] % overall.",
        "Follow-up lasted [2, 5] years.",
        "The range [10, 20] covered all patients.",
        "The effect was 1.4 (95% CI [1, 3]).",
        "We set x = [1, 2] for the model.",
        "Values between [3; 4] were excluded.",
    ],
)
def test_bracketed_numbers_that_are_not_citations(
    text: str, references: frozenset[str] | None
) -> None:
    """Intervals and quantities in brackets are text whatever the reference list says."""
    assert refs_with(text, references) == []


def test_foreign_reference_is_text_unless_numeric_markers_are_declared() -> None:
    text = "As discussed, see ref [10] of the trial for details [1]."
    # with a 3-entry list, [10] names no entry and is not where a citation stands
    assert refs_with(text, frozenset({"1", "2", "3"})) == [("1",)]
    # a list that does hold entry 10: it is the answer's own reference 10
    assert refs_with(text, NUMERIC_LIST) == [("10",), ("1",)]
    # no list, numeric markers declared (references=None): the historical reading
    assert refs_with(text, None) == [("10",), ("1",)]


def test_numeric_markers_with_a_reference_list() -> None:
    listed = frozenset({"1", "2", "3"})
    assert refs_with("A [1]. B [1,2]. C [1-3].", listed) == [("1",), ("1", "2"), ("1", "2", "3")]
    # a marker naming one listed entry keeps its out-of-list ids (they resolve to missing)
    assert refs_with("A [2, 7].", listed) == [("2", "7")]
    # a fabricated entry where a citation stands is kept; mid-sentence it is text
    assert refs_with("Basalt is volcanic [9].", listed) == [("9",)]
    assert refs_with("Basalt [9] [2] is volcanic.", listed) == [("9",), ("2",)]
    assert refs_with("Table [9] shows basalt.", listed) == []
    # a list without numbers (PMCIDs, author-year keys): numeric brackets are never citations
    assert refs_with("A [1].", frozenset({"PMC123", "smith 2020"})) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A (PMID: 123).", [("PMID:123",)]),
        ("A (PMCID: PMC4567).", [("PMC4567",)]),
        ("A [PMC4567; PMID 12].", [("PMC4567", "PMID:12")]),
        ("A (doi:10.1000/xyz123).", [("DOI:10.1000/xyz123",)]),
        ("A [https://doi.org/10.1038/nature12373].", [("DOI:10.1038/nature12373",)]),
        ("Shown in doi:10.1016/j.cell.2020.01.001.", [("DOI:10.1016/j.cell.2020.01.001",)]),
        ("See https://doi.org/10.1000/a-b_c) now", [("DOI:10.1000/a-b_c",)]),
        ("Not a DOI (10.5 mg/kg).", []),
    ],
)
def test_identifier_styles(text: str, expected: list[tuple[str, ...]]) -> None:
    assert refs_with(text, frozenset()) == expected
    assert refs_with(text, None) == expected


def test_author_year_needs_a_reference_list() -> None:
    listed = frozenset({"smith 2020", "lee 2019", "wu 2021"})
    text = "Aspirin helps (Smith et al., 2020). Coffee is fine (Lee and Park 2019; Wu 2021)."
    cites = find_citations(text, listed)
    assert [c.refs for c in cites] == [("smith 2020",), ("lee 2019", "wu 2021")]
    assert {c.style for c in cites} == {"author-year"}
    assert refs_with(text, None) == []  # no list: a name and a year are prose
    assert refs_with("Aspirin helps (Jones 2018).", listed) == []  # not in the list
    claims = parse_answer(text, listed)
    assert [c.text for c in claims] == ["Aspirin helps.", "Coffee is fine."]


def test_resolve_doi_forms() -> None:
    assert resolve("DOI:10.1/x", {"10.1/x": "p"}) == "10.1/x"
    assert resolve("DOI:10.1/x", {"doi:10.1/x": "p"}) == "doi:10.1/x"
