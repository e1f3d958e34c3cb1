"""Citation markers in the spellings and formatting agents write (issue 36): DOIs with
parentheses, markdown / CJK formatting, PMID lists, one DOI in any case, web pages that are no
cited paper and stay in the claim."""

from __future__ import annotations

import pytest

from kit.runs.citations import find_citations, identifier_ref, parse_answer, resolve


def refs(text: str, references: frozenset[str] | None = frozenset()) -> list[tuple[str, ...]]:
    return [c.refs for c in find_citations(text, references)]


def claims(text: str) -> list[tuple[str, list[tuple[str, ...]]]]:
    return [(c.text, [x.refs for x in c.citations]) for c in parse_answer(text, frozenset())]


LANCET = "DOI:10.1016/s0140-6736(20)30183-5"


@pytest.mark.parametrize(
    "text",
    [
        "Remdesivir helped (https://doi.org/10.1016/S0140-6736(20)30183-5).",
        "Remdesivir helped [https://doi.org/10.1016/S0140-6736(20)30183-5].",
        "Remdesivir helped (doi:10.1016/S0140-6736(20)30183-5).",
        "Remdesivir helped, see doi:10.1016/S0140-6736(20)30183-5.",
        "Remdesivir helped [Lancet](https://doi.org/10.1016/S0140-6736(20)30183-5).",
    ],
)
def test_a_doi_with_parentheses_is_one_whole_citation(text: str) -> None:
    assert refs(text) == [(LANCET,)]
    (claim,) = claims(text)
    assert claim[0] in (
        "Remdesivir helped.",
        "Remdesivir helped, see.",
        "Remdesivir helped Lancet.",
    )


@pytest.mark.parametrize(
    ("text", "claim", "expected"),
    [
        ("Aspirin works *10.1000/xyz*.", "Aspirin works.", [("DOI:10.1000/xyz",)]),
        (
            "Aspirin works **https://pubmed.ncbi.nlm.nih.gov/123/**.",
            "Aspirin works.",
            [("PMID:123",)],
        ),
        ("Aspirin works _10.1000/xyz_.", "Aspirin works.", [("DOI:10.1000/xyz",)]),
        ("Aspirin works `10.1000/xyz`.", "Aspirin works.", [("DOI:10.1000/xyz",)]),
        ("Aspirin works <https://pubmed.ncbi.nlm.nih.gov/123/>.", "Aspirin works.", [("PMID:123",)]),
        ("Aspirin works (**PMID:** 123).", "Aspirin works.", [("PMID:123",)]),
        ("Aspirin works **PMID:** 123.", "Aspirin works.", [("PMID:123",)]),
        ("| Aspirin works | 10.1000/xyz |", "| Aspirin works | |", [("DOI:10.1000/xyz",)]),
        ("Aspirin works [[1]](https://pubmed.ncbi.nlm.nih.gov/123/).", "Aspirin works.", [("PMID:123",)]),
        ("Aspirin works ([PubMed](https://pubmed.ncbi.nlm.nih.gov/123/)).", "Aspirin works.", [("PMID:123",)]),
        (
            "A [2020 trial](https://pubmed.ncbi.nlm.nih.gov/123/) showed aspirin works.",
            "A 2020 trial showed aspirin works.",
            [("PMID:123",)],
        ),
        ("阿司匹林有效（doi:10.1000/xyz）。", "阿司匹林有效。", [("DOI:10.1000/xyz",)]),
        ("阿司匹林有效【PMID: 12】。", "阿司匹林有效。", [("PMID:12",)]),
        ("阿司匹林有效（PMID: 12，34）。", "阿司匹林有效。", [("PMID:12", "PMID:34")]),
        ("阿司匹林有效「10.1000/xyz」。", "阿司匹林有效。", [("DOI:10.1000/xyz",)]),
    ],
)  # fmt: skip
def test_formatting_belongs_to_the_marker(
    text: str, claim: str, expected: list[tuple[str, ...]]
) -> None:
    assert refs(text) == expected
    assert claims(text) == [(claim, expected)]


def test_an_image_is_no_citation() -> None:
    text = "See the figure ![Fig 1](https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1/figure/F1/)."
    assert refs(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Aspirin works (PMIDs: 111, 222 and 333).", [("PMID:111", "PMID:222", "PMID:333")]),
        ("Aspirin works, PMIDs 111; 222.", [("PMID:111", "PMID:222")]),
        ("Aspirin works (PubMed ID 123).", [("PMID:123",)]),
        ("Aspirin works (PMID- 123).", [("PMID:123",)]),
        ("Aspirin works [PMID=123].", [("PMID:123",)]),
        ("Aspirin works (PMCID: PMC123).", [("PMC123",)]),
        ("Aspirin works (PMID: 0123, 0456).", [("PMID:123", "PMID:456")]),
        ("PMC1 knockout mice (pmc1) differ.", [("PMC1",)]),
        ("The pmc1 knockout mice differ [pmc2].", []),
        ("Version 10.1234/5 was used [10.1234/5].", []),
        ("Cited [doi:10.1234/5].", [("DOI:10.1234/5",)]),
    ],
)
def test_spellings_of_identifier_markers(text: str, expected: list[tuple[str, ...]]) -> None:
    assert refs(text) == expected


def test_a_pmid_list_is_one_marker_and_leaves_no_debris() -> None:
    assert claims("Aspirin works, see PMIDs: 111, 222 and 333.") == [
        ("Aspirin works, see.", [("PMID:111", "PMID:222", "PMID:333")])
    ]
    # two identifiers of different schemes stay two markers
    assert refs("A as in PMID 123 and PMC9.") == [("PMID:123",), ("PMC9",)]


def test_one_doi_in_any_case_is_one_ref() -> None:
    text = "A (doi:10.1000/ABC). B [https://doi.org/10.1000/abc]. C 10.1000/Abc."
    assert refs(text) == [("DOI:10.1000/abc",)] * 3
    assert identifier_ref("10.1000/ABC") == ("DOI:10.1000/abc", "doi")
    passages = {"10.1000/ABC": "p", "https://doi.org/10.1000/DEF": "q"}
    assert resolve("DOI:10.1000/abc", passages) == "10.1000/ABC"
    assert resolve("DOI:10.1000/def", passages) == "https://doi.org/10.1000/DEF"
    assert resolve("DOI:10.1000/zzz", passages) is None


def test_a_web_page_is_no_citation_and_stays_in_the_claim() -> None:
    text = (
        "The ESC recommends it (https://www.escardio.org/guidelines). "
        "See https://example.org/fig.png for the figure. "
        "A chapter agrees (https://www.ncbi.nlm.nih.gov/books/NBK1/). "
        "A trial agrees (https://pubmed.ncbi.nlm.nih.gov/123/)."
    )
    assert claims(text) == [
        ("The ESC recommends it (https://www.escardio.org/guidelines).", []),
        ("See https://example.org/fig.png for the figure.", []),
        ("A chapter agrees.", [("https://www.ncbi.nlm.nih.gov/books/NBK1",)]),
        ("A trial agrees.", [("PMID:123",)]),
    ]
    # every URL, when a caller asks for it
    everything = [c.refs for c in find_citations(text, frozenset(), urls="all")]
    assert everything[0] == ("https://www.escardio.org/guidelines",) and len(everything) == 4


def test_an_empty_bracket_of_the_text_itself_is_kept() -> None:
    assert claims("Call f() twice (PMID: 1).") == [("Call f() twice.", [("PMID:1",)])]


class _Doubtful:
    """A verifier that supports nothing (every score 0)."""

    def score(self, claims: list[str], passages: list[str]) -> list[float]:
        return [0.0] * len(claims)


def test_the_guard_keeps_a_links_words_when_it_flags_the_link() -> None:
    from kit.guard.pipeline import AnswerRecord, guard_answers

    answer = "A [2020 trial](https://pubmed.ncbi.nlm.nih.gov/123/) showed aspirin works."
    rec = AnswerRecord("a", answer, {"123": "Aspirin did nothing."})
    guarded, table = guard_answers([rec], _Doubtful(), tau=0.5, reattribute=False)  # type: ignore[arg-type]
    assert table["cited"].tolist() == ["PMID:123"] and table["passage_id"].tolist() == ["123"]
    assert (
        guarded[0]["guarded_answer"] == "A 2020 trial [PMID:123 UNVERIFIED] showed aspirin works."
    )
