"""Claim <-> reference linking for every marker family agents emit (kit.runs.keys,
kit.runs.extract, kit.runs.tool_lists): each claim cites exactly the identifiers its markers name
in the answer's own reference list; near-misses stay prose; ambiguous links are reported."""

from __future__ import annotations

import json
import time

import pytest

from kit.audit.claims import claim_rows
from kit.runs.citations import find_citations, parse_answer
from kit.runs.model import RunClaim
from kit.runs.v2 import run_v2_from_dict

BASE = {"format_version": 2, "run_id": "r1", "task_id": "t1", "model": "m"}
QIAN = (
    '"Neural network computation with DNA strand displacement cascades." Nature 475.7356 (2011): '
    "368-372. doi:10.1038/nature10262"
)


def claims(answer: str, **fields: object) -> list[tuple[str, tuple[str, ...], tuple, tuple]]:
    run = run_v2_from_dict({**BASE, "answer": answer, **fields})
    return [(c.text, c.cites, c.unresolved, getattr(c, "ambiguous", ())) for c in run.claims]


def linked(answer: str, **fields: object) -> list[tuple[str, tuple[str, ...]]]:
    return [(text, cites) for text, cites, _, _ in claims(answer, **fields)]


# ------------------------------------------------------------------ 1. PaperQA2 keys with pages

PAPERQA = (
    "DNA computes neural networks (Qian2011Neural pages 1-2, Qian2011Neural pages 15-16). "
    "Seesaw gates scale up (Qian2011Scaling pages 3-4). Cascades compute (Qian2011Neural).\n\n"
    "References\n\n"
    f"1. (Qian2011Neural pages 1-2): Qian, Lulu, Erik Winfree, and Jehoshua Bruck. {QIAN}\n"
    f"2. (Qian2011Neural pages 15-16): Qian, Lulu, Erik Winfree, and Jehoshua Bruck. {QIAN}\n"
    '3. (Qian2011Scaling pages 3-4): Qian, Lulu, and Erik Winfree. "Scaling up digital circuit '
    'computation." Science 332 (2011): 1196-1201. doi:10.1126/science.1200520\n'
)


def test_paperqa_keys_link_their_claims_not_only_the_reference_list() -> None:
    assert linked(PAPERQA) == [
        ("DNA computes neural networks.", ("doi:10.1038/nature10262",)),
        ("Seesaw gates scale up.", ("doi:10.1126/science.1200520",)),
        ("Cascades compute.", ("doi:10.1038/nature10262",)),
    ]


def test_paperqa_keys_case_insensitive_semicolons_and_a_missing_page_range() -> None:
    answer = (
        "Aspirin helps (smith2020 pages 3-4; Lee2019a pages 1-1). Coffee too (Lee2019a pages 9-9)."
        " Tea (Wu2018Tea pages 1-2).\n\nReferences\n"
        "1. (Smith2020 pages 3-4): Smith J. Aspirin. 2020. PMID: 111\n"
        "2. (Lee2019a pages 1-1): Lee K. Coffee. 2019. doi:10.1000/coffee\n"
    )
    assert claims(answer) == [
        ("Aspirin helps.", ("PMID:111", "doi:10.1000/coffee"), (), ()),
        ("Coffee too.", ("doi:10.1000/coffee",), (), ()),  # other pages of the one document
        ("Tea.", (), ("wu2018tea pages 1-2",), ()),  # no such document: kept, unresolved
    ]


def test_a_document_key_naming_two_papers_is_ambiguous() -> None:
    answer = (
        "Aspirin helps (Smith2020 pages 5-6). Statins (Smith2020 pages 1-2).\n\nReferences\n"
        "1. (Smith2020 pages 1-2): Smith J. Aspirin. 2020. PMID: 111\n"
        "2. (Smith2020 pages 3-4): Smith J. Statins. 2020. PMID: 222\n"
    )
    assert claims(answer) == [
        ("Aspirin helps.", (), (), ("smith2020 pages 5-6",)),
        ("Statins.", ("PMID:111",), (), ()),  # the pages tell them apart
    ]


# ------------------------------------------------------------------------- 2. author-year

VANCOUVER = (
    "\n\nReferences\n"
    "1. Smith J, Lee K. Aspirin and stroke. Lancet. 2020;12:1-9. doi:10.1000/aspirin\n"
    "2. Lee, K., & Park, J. (2019). Coffee. Journal, 12, 1-9. https://doi.org/10.1000/coffee\n"
    "[3] van der Berg J et al. Tea and sleep. 2018. PMID: 333\n"
    "- García-López M, Wu K. Statins 2021. PMID: 444\n"
    "- Smith J, Wu K. Statins again. 2021. PMID: 555\n"
)


@pytest.mark.parametrize(
    ("sentence", "text", "cites"),
    [
        ("Aspirin helps (Smith et al., 2020; Lee 2019).", "Aspirin helps.",
         ("doi:10.1000/aspirin", "doi:10.1000/coffee")),
        ("Aspirin helps (Smith et al. 2020).", "Aspirin helps.", ("doi:10.1000/aspirin",)),
        ("Aspirin helps (Smith & Lee, 2020).", "Aspirin helps.", ("doi:10.1000/aspirin",)),
        ("Both hold (Smith and Lee 2020, 2021).", "Both hold.",
         ("doi:10.1000/aspirin", "PMID:555")),
        ("Smith et al. (2020) showed it.", "Smith et al. showed it.", ("doi:10.1000/aspirin",)),
        ("Lee and Park (2019) found it.", "Lee and Park found it.", ("doi:10.1000/coffee",)),
        ("However, van der Berg et al. (2018) disagree.", "However, van der Berg et al. disagree.",
         ("PMID:333",)),
        ("Van der Berg et al. (2018) disagree.", "Van der Berg et al. disagree.", ("PMID:333",)),
        ("Statins work (see García-López et al., 2021).", "Statins work.", ("PMID:444",)),
        ("It was shown by Smith et al. (2020).", "It was shown by Smith et al.",
         ("doi:10.1000/aspirin",)),
        ("Smith et al. [3] found it.", "Smith et al. found it.", ("PMID:333",)),  # numeric [3]
    ],
)  # fmt: skip
def test_author_year_markers_link_by_first_author_and_year(
    sentence: str, text: str, cites: tuple[str, ...]
) -> None:
    assert linked(sentence + VANCOUVER) == [(text, cites)]


@pytest.mark.parametrize(
    "sentence",
    [
        "Aspirin helps (Smith 2020).",  # no reference list: prose
        "The cohort was large (n = 2020).",
        "It started in 2020 (Smith).",
        "Smith and colleagues (2020) agree.",
    ],
)
def test_author_year_near_misses_stay_prose(sentence: str) -> None:
    assert find_citations(sentence, frozenset()) == []
    assert linked(sentence) == [(sentence, ())]


def test_author_year_near_misses_with_a_list_stay_prose() -> None:
    answer = (
        "It started in 2020 (Smith). The cohort was large (n = 2020). Smith and Wu (2019) agree."
        " Jones (2018) disagrees.\n\nReferences\n1. Smith J. Aspirin. 2020. PMID: 1\n"
        "2. Wu K. Coffee. 2019. PMID: 2\n"
    )
    # "Smith and Wu (2019)": the first author is Smith; Wu 2019 is another paper
    assert [cites for _, cites in linked(answer)] == [(), (), (), ()]


def test_author_year_suffixes_and_ambiguity() -> None:
    two = "\n\nReferences\n1. Smith J. Aspirin. 2020. PMID: 1\n2. Smith K. Statins. 2020. PMID: 2\n"
    assert claims("Aspirin helps (Smith 2020). Smith et al. (2020) agree." + two) == [
        ("Aspirin helps.", (), (), ("smith 2020",)),
        ("Smith et al. agree.", (), (), ("smith 2020",)),
    ]
    apa = (  # plain lines, APA style: one entry each
        "\n\nReferences\nSmith, J. (2020a). Aspirin. Lancet, 1, 1-9. PMID: 1\n"
        "Smith, J. (2020b). Statins. Lancet, 2, 1-9. PMID: 2\n"
    )
    assert claims(
        "Aspirin (Smith 2020a). Statins (Smith et al., 2020b). Both (Smith 2020)." + apa
    ) == [
        ("Aspirin.", ("PMID:1",), (), ()),
        ("Statins.", ("PMID:2",), (), ()),
        ("Both.", (), (), ("smith 2020",)),
    ]
    assert claims("Other (Smith 2020c)." + apa) == [
        ("Other.", (), ("smith 2020c",), ()),  # the list uses suffixes: 2020c names none
    ]
    one = "\n\nReferences\n1. Smith J. Aspirin. 2020. PMID: 1\n"
    assert linked("Aspirin (Smith 2020a)." + one) == [("Aspirin.", ("PMID:1",))]


def test_the_same_paper_listed_twice_is_no_ambiguity() -> None:
    answer = (
        "Aspirin helps (Smith 2020).\n\nReferences\n1. Smith J. Aspirin. 2020. PMID: 1\n"
        "2. Smith J. Aspirin (reprint). 2020. PMID: 1\n"
    )
    assert claims(answer) == [("Aspirin helps.", ("PMID:1",), (), ())]


def test_a_listed_and_an_unlisted_author_year_piece() -> None:
    answer = "Aspirin helps (Smith 2020; Jones 2018).\n\nReferences\n1. Smith J. A. 2020. PMID: 1\n"
    assert claims(answer) == [("Aspirin helps.", ("PMID:1",), ("jones 2018",), ())]


def test_citations_keys_are_read_like_reference_entries() -> None:
    listed = [
        {"id": "10.1000/a", "scheme": "doi", "key": "Qian2011Neural"},
        {"id": "111", "scheme": "pmid", "key": "Smith 2020"},
        {"id": "222", "scheme": "pmid", "key": "Smith 2020"},
    ]
    got = claims("DNA computes (Qian2011Neural pages 1-2). Aspirin (Smith 2020).", citations=listed)
    assert got == [
        ("DNA computes.", ("doi:10.1000/a",), (), ()),
        ("Aspirin.", (), (), ("smith 2020",)),
    ]
    with pytest.raises(Exception, match="names several citations"):
        run_v2_from_dict(
            {**BASE, "answer": "A.", "citations": listed,
             "claims": [{"text": "A.", "cites": ["Smith 2020"]}]}
        )  # fmt: skip


# --------------------------------------------------------------------------- 3. footnotes


def test_footnotes_link_and_their_definitions_are_no_claims() -> None:
    answer = (
        "Aspirin lowers stroke risk.[^1] Coffee is safe[^note]. Tea is odd.[^9] Water.\n\n"
        "[^1]: Smith J. Aspirin. Lancet. 2020. PMID: 123\n"
        "[^note]: Lee K. Coffee. 2019.\n    https://doi.org/10.1000/coffee\n"
    )
    assert claims(answer) == [
        ("Aspirin lowers stroke risk.", ("PMID:123",), (), ()),
        ("Coffee is safe.", ("doi:10.1000/coffee",), (), ()),
        ("Tea is odd.", (), ("^9",), ()),
        ("Water.", (), (), ()),
    ]
    run = run_v2_from_dict({**BASE, "answer": answer})
    assert [c.label for c in run.cited] == ["PMID:123", "doi:10.1000/coffee"]


def test_footnote_definitions_in_the_middle_and_adjacent_markers() -> None:
    answer = "Aspirin helps.[^a][^b]\n\n[^a]: PMID: 1\n[^b]: PMID: 2\n\nMore text follows here."
    assert linked(answer) == [
        ("Aspirin helps.", ("PMID:1", "PMID:2")),
        ("More text follows here.", ()),
    ]


def test_footnote_markers_without_definitions_are_text() -> None:
    assert linked("Aspirin helps.[^1]") == [("Aspirin helps.[^1]", ())]
    assert find_citations("Aspirin helps.[^1]", None) == []


# ------------------------------------------------------------------ 4. [n] over a tool's list


def _call(text: str, status: str = "ok") -> dict:
    return {"tool": "search", "arguments": {"q": "x"}, "response_text": text, "status": status}


BRACKETS = "[1] Aspirin trial. PMID: 111\n[2] Coffee cohort. doi:10.1000/coffee\n[3] A note\n"


def test_numeric_markers_over_one_tool_list() -> None:
    got = claims(
        "Aspirin helps [1]. Coffee is fine [2]. Notes [3]. Made up [7].",
        tool_calls=[_call(BRACKETS)],
    )
    assert got == [
        ("Aspirin helps.", ("PMID:111",), (), ()),
        ("Coffee is fine.", ("doi:10.1000/coffee",), (), ()),
        ("Notes.", (), ("3",), ()),  # the entry names no identifier
        ("Made up.", (), ("7",), ()),
    ]


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("1. Aspirin trial. PMID: 111\n2. Coffee cohort. doi:10.1000/coffee\n", "A [1]. B [2]."),
        (
            "Document [1](Title: Aspirin) https://pubmed.ncbi.nlm.nih.gov/111/\n"
            "Document [2](Title: Coffee) doi:10.1000/coffee\n",
            "A [1]. B [2].",
        ),
        (json.dumps([{"title": "A", "pmid": "111"}, {"title": "B", "doi": "10.1000/coffee"}]),
         "A [1]. B [2]."),
        (json.dumps({"ctxs": [{"title": "A", "pmid": 111}, {"doi": "10.1000/coffee"}]}),
         "A [0]. B [1]."),
        ("[0] Aspirin. PMID: 111\n[1] Coffee. doi:10.1000/coffee\n", "A [0]. B [1]."),
    ],
)  # fmt: skip
def test_tool_list_forms_and_zero_based_markers(response: str, answer: str) -> None:
    assert [c for _, c in linked(answer, tool_calls=[_call(response)])] == [
        ("PMID:111",),
        ("doi:10.1000/coffee",),
    ]


def test_tool_lists_only_when_unambiguous() -> None:
    other = "[1] Other paper. PMID: 999\n"  # two lists disagree on [1]: nothing links
    assert claims("A [1].", tool_calls=[_call(BRACKETS), _call(other)]) == [("A.", (), ("1",), ())]
    assert linked("A [1].", tool_calls=[_call(BRACKETS), _call(BRACKETS)]) == [
        ("A.", ("PMID:111",))
    ]
    # a [0] marker against a list printed from 1: which base is meant? nothing links
    assert [c[1:] for c in claims("A [0]. B [1].", tool_calls=[_call(BRACKETS)])] == [
        ((), ("0",), ()),
        ((), ("1",), ()),
    ]
    # a failed call's text is no list; a run with its own list or citations ignores tools
    assert linked("A [1].", tool_calls=[_call(BRACKETS, "error")]) == [("A [1].", ())]
    own = "A [1].\n\nReferences\n1. Lee K. Coffee. PMID: 5\n"
    assert linked(own, tool_calls=[_call(BRACKETS)]) == [("A.", ("PMID:5",))]
    cited = [{"id": "PMID:7", "scheme": "pmid"}]
    assert linked("A [1].", tool_calls=[_call(BRACKETS)], citations=cited) == [("A [1].", ())]


def test_what_is_no_tool_list() -> None:
    from kit.runs.tool_lists import read_list  # here: the module is new

    assert read_list("Results: 1. Background text 2. Methods") is None  # one line, no ids
    assert read_list("1. Intro\n3. Methods PMID: 1\n") is None  # not consecutive
    assert read_list("2. A PMID: 1\n3. B PMID: 2\n") is None  # not from 0 or 1
    assert read_list("1. A\n2. B\n") is None  # no identifier at all
    both = "[1] A PMID: 1\n[2] B PMID: 2\n1. C PMID: 3\n2. D PMID: 4\n"
    assert read_list(both) is None  # two forms: which one is meant?
    assert read_list('{"a": [{"pmid": "1"}], "b": [{"pmid": "2"}]}') is None
    assert read_list("[not json") is None


# ------------------------------------------------------------------------ 5. audit counts


def test_the_audit_counts_ambiguous_markers() -> None:
    answer = (
        "Aspirin helps (Smith 2020). Coffee too [9].\n\nReferences\n"
        "1. Smith J. Aspirin. 2020. PMID: 1\n2. Smith K. Statins. 2020. PMID: 2\n"
    )
    run = run_v2_from_dict({**BASE, "answer": answer})
    found = claim_rows([run])
    assert (found.n_ambiguous, found.n_unresolved) == (1, 1)
    # an ambiguous marker is attached to neither entry: both are reference-list rows, claim 0
    assert sorted(zip(found.rows["citation"], found.rows["claim_no"], strict=True)) == [
        ("PMID:1", 0),
        ("PMID:2", 0),
    ]
    assert RunClaim("a", ()).ambiguous == ()


# ------------------------------------------------------------------------ linear time


def test_a_200_kb_answer_parses_in_well_under_a_second() -> None:
    unit = (
        "However, Smith, Lee and Wu (2019) saw it (Smith et al., 2020; Lee 2019a). "
        "Cascades (Qian2011Neural pages 1-2, Qian2011Neural pages 15-16). Note.[^1] "
        "The cohort (n = 2020) in 2020 (Smith) was large [1]. "
        + "A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P " * 3
        + "Van der Berg et al. (2018) agree. "
    )
    text = unit * (200_000 // len(unit) + 1)
    refs = frozenset({"smith 2020", "lee 2019", "van der berg 2018", "qian2011neural", "^1", "1"})
    start = time.perf_counter()
    got = parse_answer(text, refs)
    elapsed = time.perf_counter() - start
    assert len(text) >= 200_000 and got
    assert elapsed < 1.0, f"{elapsed:.2f} s"


def test_author_year_links_across_diacritics_and_apostrophes() -> None:
    """``(Garcia-Lopez et al., 2021)`` names the reference list's ``García-López`` entry, and
    ``O’Neill`` its ``O'Neill``: one author however the accents and apostrophes are typed."""
    from kit.runs.extract import claims_from_answer, reference_index, split_reference_section

    answer = (
        "Statins lowered LDL (Garcia-Lopez et al., 2021). Exercise helped (O’Neill, 2019).\n\n"
        "References\n1. García-López J, Lee K. Statins. J Synth. 2021. PMID: 31111111.\n"
        "2. O'Neill A. Exercise. J Synth. 2019. PMID: 32222222.\n"
    )
    _, refs = split_reference_section(answer)
    claims, _ = claims_from_answer(answer, reference_index([], refs))
    assert [c.cites for c in claims] == [("PMID:31111111",), ("PMID:32222222",)]
