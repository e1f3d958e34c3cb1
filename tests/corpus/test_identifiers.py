"""Canonical identifiers and the declared-coverage decision (pure)."""

from __future__ import annotations

import pytest

from kit.core.errors import ConfigError
from kit.corpus.coverage import Coverage, Resolution, decide, parse_coverage
from kit.corpus.identifiers import Identifier, canonical, normalise_url, numeric


@pytest.mark.parametrize(
    ("text", "scheme", "value", "version"),
    [
        ("PMID:123", "PMID", "123", None),
        ("pmid: 0123", "PMID", "123", None),
        ("PMID 55", "PMID", "55", None),
        ("https://pubmed.ncbi.nlm.nih.gov/32445440/", "PMID", "32445440", None),
        ("http://www.ncbi.nlm.nih.gov/pubmed/32445440", "PMID", "32445440", None),
        ("PMC0012345", "PMCID", "PMC12345", None),
        ("pmcid: pmc99", "PMCID", "PMC99", None),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/", "PMCID", "PMC123", None),
        ("https://pmc.ncbi.nlm.nih.gov/articles/PMC123", "PMCID", "PMC123", None),
        ("10.1056/NEJMoa2007764", "DOI", "10.1056/nejmoa2007764", None),
        ("DOI: 10.1056/NEJMoa2007764", "DOI", "10.1056/nejmoa2007764", None),
        ("https://doi.org/10.1056/NEJMOA2007764.", "DOI", "10.1056/nejmoa2007764", None),
        ("http://dx.doi.org/10.1056%2FNEJMoa2007764", "DOI", "10.1056/nejmoa2007764", None),
        ("arXiv:2101.00001v2", "ARXIV", "2101.00001", 2),
        ("2101.00001", "ARXIV", "2101.00001", None),
        ("https://arxiv.org/abs/2101.00001", "ARXIV", "2101.00001", None),
        ("https://arxiv.org/pdf/2101.00001v3.pdf", "ARXIV", "2101.00001", 3),
        ("arXiv:hep-th/9901001v1", "ARXIV", "hep-th/9901001", 1),
        ("10.48550/arXiv.2101.00001", "ARXIV", "2101.00001", None),
        ("nct01234567", "NCT", "NCT01234567", None),
        ("https://clinicaltrials.gov/study/NCT01234567", "NCT", "NCT01234567", None),
        ("https://clinicaltrials.gov/ct2/show/nct01234567", "NCT", "NCT01234567", None),
        ("HTTPS://Example.COM:443/a/b/#frag", "URL", "https://example.com/a/b", None),
        ("http://example.com:8080/", "URL", "http://example.com:8080", None),
    ],
)
def test_canonical_forms(text: str, scheme: str, value: str, version: int | None) -> None:
    got = canonical(text)
    assert got == Identifier(scheme, value, version)
    assert canonical(got.label) == got  # the label reads back to itself


@pytest.mark.parametrize("text", ["", "hello", "12345", "PMID123", "PMID:0", "NCT123", "ftp://x"])
def test_not_identifiers(text: str) -> None:
    assert canonical(text) is None


def test_default_scheme_for_bare_values() -> None:
    assert canonical("00123", "PMID") == Identifier("PMID", "123")
    assert canonical("5101", "PMCID") == Identifier("PMCID", "PMC5101")
    assert canonical("10.1234/X", "DOI") == Identifier("DOI", "10.1234/x")
    assert canonical("2101.00001v1", "ARXIV") == Identifier("ARXIV", "2101.00001", 1)
    assert canonical("PMC7", "PMID") == Identifier("PMCID", "PMC7")  # a typed value keeps its type
    assert canonical("abc", "PMID") is None


def test_versions_share_one_key_and_numbers() -> None:
    a, b = canonical("arXiv:2101.00001v1"), canonical("arXiv:2101.00001v2")
    assert a != b and a.key == b.key == ("ARXIV", "2101.00001")
    assert (
        numeric(Identifier("PMCID", "PMC12")) == 12
        and numeric(Identifier("NCT", "NCT00000042")) == 42
    )
    assert numeric(Identifier("DOI", "10.1/x")) is None
    assert normalise_url("mailto:x@y") is None


def test_coverage_declarations() -> None:
    c = parse_coverage("PMID=complete:1-100", "the baseline")
    assert c.covers(Identifier("PMID", "100")) and not c.covers(Identifier("PMID", "101"))
    assert not c.covers(Identifier("PMCID", "PMC5"))
    s = parse_coverage("doi=sample")
    assert s == Coverage("DOI", "sample", "doi=sample") and not s.covers(
        Identifier("DOI", "10.1/x")
    )
    for bad in ("PMID", "PMID=complete", "PMID=complete:5-1", "PMID=sample:1-2", "XYZ=sample",
                "PMID=partial", "URL=complete:1-2"):  # fmt: skip
        with pytest.raises(ConfigError):
            parse_coverage(bad)


def test_decide_rules_in_order() -> None:
    full = (Coverage("PMID", "complete", "all", 1, 1000),)
    sample = (Coverage("PMID", "sample", "some"),)
    cov = {"a": sample, "b": full}
    i = Identifier("PMID", "7")
    absent = ("absent", "")
    # 1. the first corpus holding it resolves it
    got = decide(i, ("a", "b"), {"a": ("found", "PMID:7"), "b": ("found", "x")}, cov)
    assert got == Resolution("found", "a", "PMID:7")
    assert decide(i, ("b", "a"), {"a": ("found", "PMID:7"), "b": ("found", "x")}, cov).corpus == "b"
    # 2. a failed look-up anywhere: transient, even inside complete coverage
    assert decide(i, ("a", "b"), {"a": ("transient", ""), "b": absent}, cov).status == "transient"
    # 3. deleted: unchecked
    assert decide(i, ("a", "b"), {"a": ("deleted", ""), "b": absent}, cov).status == "unchecked"
    # 4. inside declared complete coverage: notfound, naming the corpus
    got = decide(i, ("a", "b"), {"a": absent, "b": absent}, cov)
    assert (got.status, got.corpus) == ("notfound", "b")
    # 5. outside every complete coverage: unchecked
    assert (
        decide(Identifier("PMID", "1001"), ("a", "b"), {"a": absent, "b": absent}, cov).status
        == "unchecked"
    )
    assert decide(i, ("a",), {"a": absent}, cov).status == "unchecked"
