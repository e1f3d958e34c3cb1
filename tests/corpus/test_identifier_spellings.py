"""Identifiers in free text (issue 36, review defects 4, 5, 7 and the URL / DOI-case rules):
parentheses inside DOIs, formatting around identifiers, PMID / PMCID spellings, false
positives, which URLs are cited papers, Europe PMC and PubMed links with a query."""

from __future__ import annotations

import pytest

from kit.core.errors import ConfigError
from kit.corpus.identifiers import (
    Identifier,
    canonical,
    find_identifiers,
    is_cited_paper,
    link_identifier,
    strip_trailing,
    unwrap,
)

LANCET = "10.1016/s0140-6736(20)30183-5"


def spans(text: str, urls: str = "all") -> list[tuple[str, str]]:
    """(identifier as written in ``text``, canonical label) for each one found."""
    return [(text[a:b], i.label) for a, b, i in find_identifiers(text, urls=urls)]


# ---------------------------------------------------------------- defect 4: parentheses in DOIs


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (
            "https://doi.org/10.1016/S0140-6736(20)30183-5",
            "https://doi.org/10.1016/S0140-6736(20)30183-5",
        ),
        ("see https://doi.org/10.1016/S0140-6736(20)30183-5.", None),
        ("see 10.1016/S0140-6736(20)30183-5.", "10.1016/S0140-6736(20)30183-5"),
        ("(doi:10.1016/S0140-6736(20)30183-5)", "doi:10.1016/S0140-6736(20)30183-5"),
        ("[Lancet](https://doi.org/10.1016/S0140-6736(20)30183-5)", None),
        ("http://dx.doi.org/10.1016%2FS0140-6736%2820%2930183-5", None),
    ],
)
def test_balanced_parentheses_stay_in_a_doi(text: str, written: str | None) -> None:
    (got,) = spans(text)
    assert got[1] == f"doi:{LANCET}"
    assert written is None or got[0] == written


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("A result (doi:10.1000/abc).", "doi:10.1000/abc"),
        ("A result (doi:10.1000/abc), more.", "doi:10.1000/abc"),
        ("A result (10.1000/abc); more", "10.1000/abc"),
        ("See https://doi.org/10.1000/a-b_c) now", "https://doi.org/10.1000/a-b_c"),
        ("Ends a sentence 10.1016/j.cell.2020.01.001.", "10.1016/j.cell.2020.01.001"),
        ("A list 10.1000/abc, 10.1000/def: done", "10.1000/abc"),
        ("(see https://pubmed.ncbi.nlm.nih.gov/123/)", "https://pubmed.ncbi.nlm.nih.gov/123/"),
    ],
)
def test_a_parenthetical_keeps_its_closing_parenthesis_and_punctuation(
    text: str, written: str
) -> None:
    assert spans(text)[0][0] == written


def test_strip_trailing_is_balanced() -> None:
    assert strip_trailing("10.1/x(1)).") == "10.1/x(1)"
    assert strip_trailing("10.1016/S0140-6736(20)30183-5") == "10.1016/S0140-6736(20)30183-5"
    assert strip_trailing("x_(y)") == "x_(y)"
    assert strip_trailing("a]}>'\".;") == "a"


# ---------------------------------------------------------------- defect 5: formatting around


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("*10.1000/xyz*", "doi:10.1000/xyz"),
        ("**10.1000/xyz**", "doi:10.1000/xyz"),
        ("_10.1000/xyz_", "doi:10.1000/xyz"),
        ("__PMID: 123__", "PMID:123"),
        ("**https://pubmed.ncbi.nlm.nih.gov/123/**", "PMID:123"),
        ("_https://pubmed.ncbi.nlm.nih.gov/123/_", "PMID:123"),
        ("| 10.1000/xyz |", "doi:10.1000/xyz"),
        ("|10.1000/xyz|PMID:5|", "doi:10.1000/xyz"),
        ("`10.1000/xyz`", "doi:10.1000/xyz"),
        ("`https://doi.org/10.1000/XYZ`", "doi:10.1000/xyz"),
        ("<https://pubmed.ncbi.nlm.nih.gov/123/>", "PMID:123"),
        ("[the paper](https://pubmed.ncbi.nlm.nih.gov/123/)", "PMID:123"),
        ("[the paper](https://doi.org/10.1000/xyz)", "doi:10.1000/xyz"),
        ("见（doi:10.1000/xyz）。", "doi:10.1000/xyz"),
        ("「10.1000/xyz」，", "doi:10.1000/xyz"),
        ("【https://doi.org/10.1000/xyz】；", "doi:10.1000/xyz"),
        ("参见：PMC123。", "PMC123"),
        ("“https://pubmed.ncbi.nlm.nih.gov/123/”", "PMID:123"),
        ('"10.1000/xyz"', "doi:10.1000/xyz"),
    ],
)
def test_formatting_is_not_part_of_an_identifier(text: str, label: str) -> None:
    got = spans(text)
    assert got[0][1] == label
    written = got[0][0]
    assert not set(written) & set('*`|<>[]（）。，「」【】；“”"') and not written.endswith("_")


def test_underscores_inside_an_identifier_are_kept() -> None:
    assert spans("see https://example.org/a_b_") == [
        ("https://example.org/a_b_", "https://example.org/a_b_")
    ]
    assert spans("10.1000/a_b") == [("10.1000/a_b", "doi:10.1000/a_b")]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("**PMID:** 12345678", "PMID:12345678"),
        ("`10.1000/ABC`", "doi:10.1000/abc"),
        ("<https://doi.org/10.1000/abc>", "doi:10.1000/abc"),
        ("PMID:123)", "PMID:123"),
        ("（PMC55）", "PMC55"),
    ],
)
def test_canonical_drops_formatting_around_a_value(text: str, label: str) -> None:
    got = canonical(text)
    assert got is not None and got.label == label
    assert unwrap("**x**") == "x" and unwrap("_x_") == "x" and unwrap("a_") == "a_"


# ---------------------------------------------------------------- defect 7: spellings


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("PMID- 12345678", ["PMID:12345678"]),  # MEDLINE format
        ("PMID- 12345678\nOWN - NLM\nPMC - PMC7092803", ["PMID:12345678", "PMC7092803"]),
        ('<PMID Version="1">12345678</PMID>', ["PMID:12345678"]),
        ('<ArticleId IdType="pubmed">123</ArticleId>', ["PMID:123"]),
        ("**PMID:** 123", ["PMID:123"]),
        ("**PMID**: 123", ["PMID:123"]),
        ("PMID:123", ["PMID:123"]),
        ("PMID=123", ["PMID:123"]),
        ("PMID #123", ["PMID:123"]),
        ('{"pmid": "123"}', ["PMID:123"]),
        ("PubMed ID 123", ["PMID:123"]),
        ("PubMed ID: 123", ["PMID:123"]),
        ("PubMed identifier 123", ["PMID:123"]),
        ("PMIDs: 111, 222 and 333", ["PMID:111", "PMID:222", "PMID:333"]),
        ("PMIDs 111; 222, and 333.", ["PMID:111", "PMID:222", "PMID:333"]),
        ("PubMed IDs: 111 & 222", ["PMID:111", "PMID:222"]),
        ("PMCID: PMC123", ["PMC123"]),
        ("PMCID: 123", ["PMC123"]),
        ("pmcid: pmc99", ["PMC99"]),
        ("PMC123 and PMC0456", ["PMC123", "PMC456"]),
    ],
)
def test_identifier_spellings_are_read(text: str, labels: list[str]) -> None:
    assert [label for _, label in spans(text)] == labels


def test_a_list_gives_one_span_per_number() -> None:
    text = "PMIDs: 111, 222 and 333"
    assert [(text[a:b]) for a, b, _ in find_identifiers(text)] == ["PMIDs: 111", "222", "333"]


@pytest.mark.parametrize(
    "text",
    [
        "pmc1 knockout mice",  # a lower-case bare "pmc1" is no PMCID
        "the hPMC12 cells",
        "PMC1-KO line",
        "software version 10.1234/5 released",  # a version, not a DOI
        "a ratio of 10.1234/56",
        "10.12/abc",  # registrant of 2 digits
        "10.0123/abc",  # registrant with a leading zero
        "x10.1000/abc",  # inside a longer token
        "see 4444 and 12345678",  # bare numbers are never PMIDs
        "PMIDs were collected",
        "PMID: 0",
    ],
)
def test_false_positives_are_not_identifiers(text: str) -> None:
    assert spans(text) == []


def test_a_singular_label_reads_one_number() -> None:
    assert [label for _, label in spans("Smith J. PMID: 12345678, 2020.")] == ["PMID:12345678"]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("doi:10.1234/5", "doi:10.1234/5"),  # labelled: read as written
        ("10.2307/2529310", "doi:10.2307/2529310"),  # JSTOR: digits-only suffix
        ("10.1000/182", "doi:10.1000/182"),  # the DOI Handbook
        ("10.1186/1471-2458-8-155", "doi:10.1186/1471-2458-8-155"),
        ("10.1093/cid/ciaa344", "doi:10.1093/cid/ciaa344"),
        ("doi.org/10.1000/abc", "doi:10.1000/abc"),
        ("DOI 10.1000/abc", "doi:10.1000/abc"),
        ("10.48550/arXiv.2101.00001", "arXiv:2101.00001"),
    ],
)
def test_real_dois_still_read(text: str, label: str) -> None:
    assert [lb for _, lb in spans(text)] == [label]


# ---------------------------------------------------------------- links


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://europepmc.org/abstract/MED/123", Identifier("PMID", "123")),
        ("https://europepmc.org/article/MED/123/", Identifier("PMID", "123")),
        ("https://europepmc.org/article/PMC/PMC123", Identifier("PMCID", "PMC123")),
        ("https://europepmc.org/articles/PMC123", Identifier("PMCID", "PMC123")),
        ("https://pubmed.ncbi.nlm.nih.gov/123/?dopt=Abstract", Identifier("PMID", "123")),
        ("https://www.ncbi.nlm.nih.gov/pubmed/123?dopt=Abstract", Identifier("PMID", "123")),
        ("https://pubmed.ncbi.nlm.nih.gov/123/#affiliations", Identifier("PMID", "123")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/pdf/x.pdf", Identifier("PMCID", "PMC123")),
        ("https://pmc.ncbi.nlm.nih.gov/articles/PMC123/#sec2", Identifier("PMCID", "PMC123")),
        ("https://clinicaltrials.gov/study/NCT01234567?tab=results", Identifier("NCT", "NCT01234567")),
        ("https://www.nejm.org/doi/full/10.1056/NEJMoa2001017", Identifier("DOI", "10.1056/nejmoa2001017")),
        ("https://onlinelibrary.wiley.com/doi/10.1002/jmv.25678/full", Identifier("DOI", "10.1002/jmv.25678")),
        ("https://link.springer.com/article/10.1007/s10654-020-00601-y", Identifier("DOI", "10.1007/s10654-020-00601-y")),
        ("https://link.springer.com/content/pdf/10.1007/s00125-020-05151-y.pdf", Identifier("DOI", "10.1007/s00125-020-05151-y")),
        ("https://www.frontiersin.org/articles/10.3389/fmicb.2020.01234/full", Identifier("DOI", "10.3389/fmicb.2020.01234")),
        ("https://www.biorxiv.org/content/10.1101/2020.02.07.937862v1.full.pdf", Identifier("DOI", "10.1101/2020.02.07.937862")),
        ("https://www.medrxiv.org/content/10.1101/2020.03.03.20030593v2", Identifier("DOI", "10.1101/2020.03.03.20030593")),
        ("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0230405", Identifier("DOI", "10.1371/journal.pone.0230405")),
        ("https://www.escardio.org/guidelines", None),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/figure/F1/", Identifier("PMCID", "PMC123")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/bin/fig1.jpg", None),
    ],
)  # fmt: skip
def test_links_read_as_the_identifier_they_name(url: str, expected: Identifier | None) -> None:
    assert link_identifier(url) == expected
    got = canonical(url)
    assert got == expected if expected is not None else got is not None and got.scheme == "URL"


# ---------------------------------------------------------------- which URLs are cited papers


@pytest.mark.parametrize(
    ("url", "cited"),
    [
        ("https://www.ncbi.nlm.nih.gov/books/NBK554776/", True),  # NCBI Bookshelf
        ("https://pubmed.ncbi.nlm.nih.gov/?term=aspirin", True),
        ("https://europepmc.org/article/PPR/PPR123", True),  # a Europe PMC preprint page
        ("https://www.biorxiv.org/content/early/2020/01/01/xyz", True),
        ("https://arxiv.org/list/cs.CL/recent", True),
        ("https://www.escardio.org/guidelines", False),  # a society's website
        ("https://www.who.int/publications/i/item/123", False),
        ("https://pubmed.ncbi.nlm.nih.gov/", False),  # a home page
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/bin/fig1.jpg", False),  # an image
        ("https://www.nature.com/articles/s41586-020-2012-7", False),  # no DOI in the address
    ],
)
def test_scholarly_urls(url: str, cited: bool) -> None:
    ident = canonical(url)
    assert ident is not None and ident.scheme == "URL"
    assert is_cited_paper(ident) is cited
    assert is_cited_paper(Identifier("PMID", "1"))


def test_find_identifiers_keeps_web_pages_only_when_asked() -> None:
    text = (
        "Guidelines (https://www.escardio.org/guidelines) and a figure "
        "https://example.org/fig.png agree with https://pubmed.ncbi.nlm.nih.gov/123/ and "
        "https://www.ncbi.nlm.nih.gov/books/NBK1/; https://example.org/files/10.1234/abcd is a page."
    )
    assert [label for _, label in spans(text, urls="scholarly")] == [
        "PMID:123",
        "https://www.ncbi.nlm.nih.gov/books/NBK1",
    ]
    everything = [label for _, label in spans(text)]
    assert everything[0] == "https://www.escardio.org/guidelines" and len(everything) == 5
    assert "doi:10.1234/abcd" not in everything  # a piece of a web address is no bare DOI
    with pytest.raises(ConfigError):
        find_identifiers(text, urls="some")


# ---------------------------------------------------------------- DOI case


def test_doi_case_is_one_key() -> None:
    keys = {i.key for _, _, i in find_identifiers("10.1000/ABC and doi:10.1000/abc, 10.1000/Abc")}
    assert keys == {("DOI", "10.1000/abc")}
    assert canonical("10.1000/ABC") == canonical("https://doi.org/10.1000/abc")
    assert canonical("10.1000/ABC", "DOI") == canonical("DOI:10.1000/abc", "URL")
