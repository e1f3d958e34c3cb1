"""Citations in every spelling the corpus layer reads, wherever they stand in the answer (issue
36): PubMed / PMC / doi.org / ClinicalTrials.gov / arXiv links in prose, in brackets and in a
References list become one canonical identifier each (a PubMed link is the PMID)."""

from __future__ import annotations

import pytest

from kit.corpus.identifiers import canonical
from kit.grade.citation_audit import claim_for
from kit.runs.citations import find_citations
from kit.runs.extract import identifiers_in
from kit.runs.model import Citation
from kit.runs.v2 import run_v2_from_dict

ANSWER = """\
Mitochondria move to the nucleus in lace plant PCD (https://pubmed.ncbi.nlm.nih.gov/21645374/).
Snellen charts overestimate acuity, see https://www.ncbi.nlm.nih.gov/pubmed/9488747.
The full text agrees [https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3120501/].
A second copy is at https://pmc.ncbi.nlm.nih.gov/articles/PMC0654321/ for reference.
The effect replicated (https://doi.org/10.1000/ABC.1).
The trial was registered at https://clinicaltrials.gov/study/NCT01234567.
A preprint said so too (https://arxiv.org/abs/2101.00001v2).
Older work agrees [1] and a review disagrees [2].
The same paper again as PMID 21645374.

References
[1] Smith J, Lee K. Lace plant leaves. Plant J. 2011. https://pubmed.ncbi.nlm.nih.gov/22876568/
[2] Wu X. A review. https://www.ncbi.nlm.nih.gov/pmc/articles/PMC777/
"""

EXPECTED = [
    ("Mitochondria move to the nucleus in lace plant PCD.", ("PMID:21645374",)),
    ("Snellen charts overestimate acuity, see.", ("PMID:9488747",)),
    ("The full text agrees.", ("PMC3120501",)),
    ("A second copy is at for reference.", ("PMC654321",)),
    ("The effect replicated.", ("doi:10.1000/abc.1",)),
    ("The trial was registered at.", ("NCT01234567",)),
    ("A preprint said so too.", ("arXiv:2101.00001v2",)),
    ("Older work agrees and a review disagrees.", ("PMID:22876568", "PMC777")),
    ("The same paper again as.", ("PMID:21645374",)),
]


def _run(answer: str) -> object:
    return run_v2_from_dict(
        {"format_version": 2, "run_id": "r", "task_id": "t", "model": "m", "answer": answer}
    )


def test_every_spelling_in_prose_brackets_and_references_is_one_canonical_citation() -> None:
    run = _run(ANSWER)
    got = [(c.text, c.cites) for c in run.claims]
    assert got == EXPECTED
    cited = {c.label: c.id_type for c in run.cited}
    # no PubMed link stays a URL: every citation is in the scheme the corpus resolves
    assert "URL" not in cited.values()
    assert cited == {
        "PMID:22876568": "PMID",
        "PMC777": "PMCID",
        "PMID:21645374": "PMID",
        "PMID:9488747": "PMID",
        "PMC3120501": "PMCID",
        "PMC654321": "PMCID",
        "doi:10.1000/abc.1": "DOI",
        "NCT01234567": "NCT",
        "arXiv:2101.00001v2": "ARXIV",
    }


def test_reference_list_entries_use_the_corpus_reading() -> None:
    for text, label in [
        ("Smith. https://pubmed.ncbi.nlm.nih.gov/22876568/", "PMID:22876568"),
        ("Smith. https://www.ncbi.nlm.nih.gov/pubmed/22876568.", "PMID:22876568"),
        ("Smith. https://pmc.ncbi.nlm.nih.gov/articles/PMC55/", "PMC55"),
        ("Smith. https://dx.doi.org/10.5555/XYZ", "doi:10.5555/xyz"),
        ("Smith. PMID: 22876568. doi:10.5555/xyz", "PMID:22876568"),  # first one listed
    ]:
        ident, scheme = identifiers_in(text)[0]
        got = canonical(ident, default_scheme=scheme.upper())
        assert got is not None and got.label == label, text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A (https://pubmed.ncbi.nlm.nih.gov/123/).", [("PMID:123",)]),
        ("A, see https://www.ncbi.nlm.nih.gov/pubmed/123.", [("PMID:123",)]),
        ("A [https://pmc.ncbi.nlm.nih.gov/articles/PMC9/].", [("PMC9",)]),
        ("A as in PMID 123 and PMC9.", [("PMID:123",), ("PMC9",)]),
        # a web page is no cited paper (it stays in the claim); a scholarly page is a URL
        # citation (unchecked when no corpus resolves it)
        ("A (https://example.org/page).", []),
        (
            "A (https://www.ncbi.nlm.nih.gov/books/NBK1/).",
            [("https://www.ncbi.nlm.nih.gov/books/NBK1",)],
        ),
        ("A (10.5 mg/kg) in 2020 [1].", []),  # no numeric list given: not a citation
    ],
)
def test_guard_markers_read_links_and_bare_identifiers(
    text: str, expected: list[tuple[str, ...]]
) -> None:
    assert [c.refs for c in find_citations(text, frozenset())] == expected


def test_v1_claim_is_cut_at_a_link_read_whole() -> None:
    """A v1 run lists its citations; the claim each closes is cut at the identifiers the corpus
    layer reads, so a PubMed link is one marker (not a number found inside a URL)."""
    answer = (
        "Aspirin prevents stroke (PMID:100; NCT01234567). Mitochondria move to the nucleus "
        "(https://pubmed.ncbi.nlm.nih.gov/22876568/). Statins help [doi:10.1000/ABC]."
    )
    got = {
        c.label: claim_for(answer, c)
        for c in (
            Citation("PMID", "100"),
            Citation("NCT", "NCT01234567"),
            Citation("PMID", "22876568"),
            Citation("DOI", "10.1000/abc"),
        )
    }
    assert got == {
        "PMID:100": "Aspirin prevents stroke",
        "NCT01234567": "Aspirin prevents stroke",
        "PMID:22876568": "Mitochondria move to the nucleus",
        "doi:10.1000/abc": "Statins help",
    }
    assert claim_for(answer, Citation("PMID", "999")) == answer  # not in the text


def test_a_link_listed_as_a_url_is_the_identifier_it_links() -> None:
    run = run_v2_from_dict(
        {
            "format_version": 2, "run_id": "r", "task_id": "t", "model": "m",
            "answer": "Mitochondria move [1]. Acuity differs [2]. A web page says so [3].",
            "citations": [
                {"id": "https://www.ncbi.nlm.nih.gov/pubmed/22876568", "scheme": "url", "key": "1"},
                {"id": "https://doi.org/10.5555/XYZ", "scheme": "url", "key": "2"},
                {"id": "https://example.org/page/", "scheme": "url", "key": "3"},
            ],
        }
    )  # fmt: skip
    assert [c.cites for c in run.claims] == [
        ("PMID:22876568",),
        ("doi:10.5555/xyz",),
        ("https://example.org/page",),
    ]
    assert canonical("https://pmc.ncbi.nlm.nih.gov/articles/PMC55/", "URL").label == "PMC55"


def test_one_doi_in_any_case_is_one_citation_of_the_run() -> None:
    """DOIs are case-insensitive: a marker, a reference-list entry and a listed citation that
    spell one DOI in different cases name one paper, keyed in lower case."""
    run = run_v2_from_dict(
        {
            "format_version": 2, "run_id": "r", "task_id": "t", "model": "m",
            "answer": (
                "Aspirin works (doi:10.1000/ABC). Coffee is fine [1]. Tea helps [2].\n\n"
                "References\n[1] Lee. https://doi.org/10.1000/Abc\n"
                "[2] Wu. https://doi.org/10.1016/S0140-6736(20)30183-5\n"
            ),
            "citations": [{"id": "10.1000/abC", "scheme": "doi", "key": "3"}],
        }
    )  # fmt: skip
    assert [c.cites for c in run.claims] == [
        ("doi:10.1000/abc",),
        ("doi:10.1000/abc",),
        ("doi:10.1016/s0140-6736(20)30183-5",),
    ]
    assert [c.label for c in run.cited] == ["doi:10.1000/abc", "doi:10.1016/s0140-6736(20)30183-5"]


def test_a_web_page_in_prose_is_no_citation_but_a_listed_one_is() -> None:
    run = run_v2_from_dict(
        {
            "format_version": 2, "run_id": "r", "task_id": "t", "model": "m",
            "answer": (
                "The ESC recommends aspirin (https://www.escardio.org/guidelines). "
                "The WHO agrees [1].\n\nReferences\n[1] WHO report. https://www.who.int/r/1\n"
            ),
        }
    )  # fmt: skip
    assert [(c.text, c.cites) for c in run.claims] == [
        ("The ESC recommends aspirin (https://www.escardio.org/guidelines).", ()),
        ("The WHO agrees.", ("https://www.who.int/r/1",)),
    ]


def test_v1_claim_is_not_cut_at_a_web_page() -> None:
    answer = (
        "Guidelines (https://www.escardio.org/g) say aspirin helps (PMID:1). "
        "Coffee (see https://pubmed.ncbi.nlm.nih.gov/2/) is fine (PMID:3)."
    )
    assert claim_for(answer, Citation("PMID", "1")) == (
        "Guidelines (https://www.escardio.org/g) say aspirin helps"
    )
    assert claim_for(answer, Citation("PMID", "3")) == "is fine"
    # a web page the run lists as its citation is still found and closes its own claim
    assert claim_for(answer, Citation("URL", "https://www.escardio.org/g")) == "Guidelines"
