"""SICI-style DOIs (``<issue::item>`` inside the suffix) are read whole, in prose, brackets and
reference lists; ``<...>`` around an identifier still is not part of it."""

from __future__ import annotations

import pytest

from kit.corpus.identifiers import find_identifiers
from kit.runs.citations import find_citations
from kit.runs.v2 import run_v2_from_dict

SICI = "10.1002/(SICI)1097-4636(199708)36:2<192::AID-JBM8>3.0.CO;2-B"
LABEL = "doi:" + SICI.lower()
BASE = {"format_version": 2, "run_id": "r1", "task_id": "t1", "model": "m"}


@pytest.mark.parametrize(
    "text",
    [
        f"Implants wear {SICI}.",
        f"Implants wear (doi:{SICI}).",
        f"Implants wear [{SICI}].",
        f"Implants wear (https://doi.org/{SICI}).",
        f"Implants wear [doi:{SICI}; PMID 12].",
    ],
)
def test_a_sici_doi_is_one_identifier_in_prose_and_brackets(text: str) -> None:
    labels = [i.label for _, _, i in find_identifiers(text)]
    assert labels[0] == LABEL
    cites = find_citations(text, frozenset())
    assert cites[0].refs == ("DOI:" + SICI.lower(),)


def test_angle_brackets_around_an_identifier_are_still_dropped() -> None:
    for text in ("<https://doi.org/10.1000/xyz>", "<i>10.1000/xyz</i>", "<doi:10.1000/xyz>"):
        [(a, b, ident)] = find_identifiers(text)
        assert ident.label == "doi:10.1000/xyz" and "<" not in text[a:b] and ">" not in text[a:b]
    assert [c.refs for c in find_citations("A <https://doi.org/10.1000/xyz>.", None)] == [
        ("DOI:10.1000/xyz",)
    ]


def test_a_sici_doi_in_a_reference_list_links_its_claim() -> None:
    answer = (
        f"Wear debris causes osteolysis [1].\n\nReferences\n1. Smith J. Wear. 1997. doi:{SICI}\n"
    )
    run = run_v2_from_dict({**BASE, "answer": answer})
    assert [(c.text, c.cites) for c in run.claims] == [("Wear debris causes osteolysis.", (LABEL,))]
