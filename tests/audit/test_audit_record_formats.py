"""Tool output in the formats the real literature APIs return, cut into per-paper records
(issue 36, the review's defects 1-3 and 6-9).

Europe PMC REST search JSON (``resultList.result[]``, resultType core and lite), Semantic
Scholar Graph API JSON (search ``data[]``, a single-paper fetch with ``references``), NCBI
E-utilities esummary JSON (``result.uids``), efetch ``rettype=abstract`` text and MEDLINE
text, full-text markdown fetches, markdown link lists. The field names and layouts are those
the services print; the paper set is SYNTHETIC (construction-labelled): the PMIDs are real
PubMedQA ids, the titles, abstracts, names, addresses and DOIs (test prefix 10.5555) are
written here."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from kit.audit.evidence import agent_read, argument_keys, response_segment
from kit.audit.records import has_passage, split_records
from kit.grade.citation_audit import AgentRead
from kit.runs.model import Citation
from kit.runs.v2 import run_v2_from_dict

LACE = "Mitochondria move to the nucleus during developmental programmed cell death in lace plant."
SNELLEN = "Snellen charts overestimate visual acuity compared with Landolt C."
P_LACE, PMC_LACE, DOI_LACE = "21645374", "PMC3120501", "10.5555/lace.1"
P_SNELLEN, DOI_SNELLEN = "9488747", "10.5555/snellen.2"
P_TITLE, DOI_TITLE = "32445440", "10.5555/title.3"
TITLE_LACE = "Mitochondrial dynamics in lace plant programmed cell death"
TITLE_SNELLEN = "Snellen and Landolt C acuity in amblyopic children"
TITLE_ONLY = "A paper listed by its title only"

LACE_IDS = [Citation("PMID", P_LACE), Citation("PMCID", PMC_LACE), Citation("DOI", DOI_LACE)]
SNELLEN_IDS = [Citation("PMID", P_SNELLEN), Citation("DOI", DOI_SNELLEN)]
TITLE_IDS = [Citation("PMID", P_TITLE), Citation("DOI", DOI_TITLE)]


def _run(text: str, arguments: dict[str, Any] | None = None) -> Any:
    call = {"tool": "t", "arguments": arguments or {"q": "x"}, "response_text": text}
    return run_v2_from_dict(
        {
            "format_version": 2,
            "run_id": "r",
            "task_id": "t",
            "model": "m",
            "answer": "A claim.",
            "tool_calls": [call],
        }
    )


def _reads_own_passage(text: str, ids: list[Citation], own: str, others: list[str]) -> None:
    """Every identifier of one paper reads the same record, holding ``own``, none of
    ``others``, with a passage."""
    run = _run(text)
    reads = [agent_read(run, c) for c in ids]
    first = reads[0]
    assert first is not None and own in first.text, (ids[0], first)
    assert all(r == first for r in reads), reads
    assert not any(o in first.text for o in others), first.text


def _title_only(text: str, ids: list[Citation], arguments: dict[str, Any] | None = None) -> None:
    run = _run(text, arguments)
    for c in ids:
        assert agent_read(run, c) == AgentRead("", (0,)), (c, agent_read(run, c))


# ----------------------------------------------------------------------------- defect 1

DOI_URL = "https://doi.org/"


def _epmc_core(pmid: str, doi: str, title: str, abstract: str | None, pmcid: str = "") -> dict:
    """One Europe PMC ``resultType=core`` result (the fields the REST API prints)."""
    rec: dict[str, Any] = {
        "id": pmid,
        "source": "MED",
        "pmid": pmid,
        "doi": doi,
        "title": title,
        "authorString": "Lord CE, Wertman JN, Lane S, Gunawardena AH.",
        "authorList": {
            "author": [
                {
                    "fullName": "Lord CE",
                    "firstName": "Christina E",
                    "lastName": "Lord",
                    "initials": "CE",
                    "authorId": {"type": "ORCID", "value": "0000-0002-1825-0097"},
                },
                {
                    "fullName": "Wertman JN",
                    "firstName": "Jaime N",
                    "lastName": "Wertman",
                    "initials": "JN",
                },
            ]
        },
        "journalInfo": {
            "volume": "11",
            "journalIssueId": 1790562,
            "dateOfPublication": "2011 Jun",
            "monthOfPublication": 6,
            "yearOfPublication": 2011,
            "printPublicationDate": "2011-06-01",
            "journal": {
                "title": "BMC Plant Biology",
                "medlineAbbreviation": "BMC Plant Biol",
                "isoabbreviation": "BMC Plant Biol",
                "nlmid": "100967807",
                "issn": "1471-2229",
                "essn": "1471-2229",
            },
        },
        "pubYear": "2011",
        "pageInfo": "102",
        "fullTextUrlList": {
            "fullTextUrl": [
                {
                    "availability": "Open access",
                    "availabilityCode": "OA",
                    "documentStyle": "html",
                    "site": "Europe_PMC",
                    "url": f"https://europepmc.org/articles/{pmcid or 'PMC1'}",
                },
                {
                    "availability": "Open access",
                    "availabilityCode": "OA",
                    "documentStyle": "pdf",
                    "site": "Europe_PMC",
                    "url": f"https://europepmc.org/articles/{pmcid or 'PMC1'}?pdf=render",
                },
                {
                    "availability": "Subscription required",
                    "availabilityCode": "S",
                    "documentStyle": "doi",
                    "site": "DOI",
                    "url": DOI_URL + doi,
                },
            ]
        },
        "isOpenAccess": "Y",
        "inEPMC": "Y",
        "inPMC": "Y",
        "hasPDF": "Y",
        "hasBook": "N",
        "citedByCount": 38,
        "hasReferences": "Y",
        "hasTextMinedTerms": "Y",
        "hasDbCrossReferences": "N",
        "hasLabsLinks": "Y",
        "firstIndexDate": "2011-06-09",
        "firstPublicationDate": "2011-06-07",
    }
    if pmcid:
        rec["pmcid"] = pmcid
        rec["fullTextIdList"] = {"fullTextId": [pmcid]}
    if abstract is not None:
        rec["abstractText"] = abstract
    return rec


EPMC_SEARCH = json.dumps(
    {
        "version": "6.9",
        "hitCount": 3,
        "nextCursorMark": "AoIIQG7+kCg0NTUyNjQ0Mg==",
        "nextPageUrl": "https://www.ebi.ac.uk/europepmc/webservices/rest/search?query=lace"
        "&cursorMark=AoIIQG7%2BkCg0NTUyNjQ0Mg%3D%3D&resultType=core&format=json",
        "request": {
            "queryString": "lace plant",
            "resultType": "core",
            "cursorMark": "*",
            "pageSize": 25,
            "sort": "",
            "synonym": False,
        },
        "resultList": {
            "result": [
                _epmc_core(P_LACE, DOI_LACE, TITLE_LACE, LACE, PMC_LACE),
                _epmc_core(P_SNELLEN, DOI_SNELLEN, TITLE_SNELLEN, SNELLEN),
                _epmc_core(P_TITLE, DOI_TITLE, TITLE_ONLY, None),
            ]
        },
    }
)


def _s2(pmid: str, doi: str, title: str, abstract: str | None, pmc: str = "", **more: Any) -> dict:
    """One Semantic Scholar Graph API paper (fields=title,abstract,externalIds,url,venue,year,
    openAccessPdf,authors)."""
    ext: dict[str, Any] = {
        "MAG": "2117735401",
        "DOI": doi,
        "CorpusId": 5473920 + len(title),
        "PubMed": pmid,
    }
    if pmc:
        ext["PubMedCentral"] = pmc
    paper_id = hashlib.sha1(title.encode()).hexdigest()  # a Semantic Scholar paperId (hex)
    return {
        "paperId": paper_id,
        "externalIds": ext,
        "url": f"https://www.semanticscholar.org/paper/{paper_id}",
        "title": title,
        "abstract": abstract,
        "venue": "BMC Plant Biology",
        "year": 2011,
        "openAccessPdf": {
            "url": f"https://bmcplantbiol.biomedcentral.com/counter/pdf/{doi}",
            "status": "GOLD",
            "license": "CCBY",
        },
        "authors": [
            {"authorId": "4127513", "name": "Christina E. Lord"},
            {"authorId": "6522981", "name": "Jaime N. Wertman"},
        ],
        **more,
    }


S2_SEARCH = json.dumps(
    {
        "total": 3,
        "offset": 0,
        "next": 3,
        "data": [
            _s2(P_LACE, DOI_LACE, TITLE_LACE, LACE, "3120501"),
            _s2(P_SNELLEN, DOI_SNELLEN, TITLE_SNELLEN, SNELLEN),
            _s2(P_TITLE, DOI_TITLE, TITLE_ONLY, None),
        ],
    }
)
REFERENCES = [
    {"pmid": P_SNELLEN, "doi": DOI_SNELLEN, "title": TITLE_SNELLEN},
    {"pmid": P_TITLE, "doi": DOI_TITLE, "title": TITLE_ONLY},
]
# a single-paper fetch (a literature tool's fetch_article) that lists the paper's references
FETCH_WITH_REFERENCES = json.dumps(
    {
        "pmid": P_LACE,
        "pmcid": PMC_LACE,
        "doi": DOI_LACE,
        "title": TITLE_LACE,
        "abstract": LACE,
        "journal": "BMC Plant Biol",
        "year": 2011,
        "references": REFERENCES,
    }
)
S2_FETCH_WITH_REFERENCES = json.dumps(
    {
        k: v
        for k, v in _s2(P_LACE, DOI_LACE, TITLE_LACE, LACE, "3120501").items()
        if k != "openAccessPdf"
    }
    | {
        "references": [
            {
                "paperId": "a" * 40,
                "externalIds": {"PubMed": P_SNELLEN, "DOI": DOI_SNELLEN},
                "title": TITLE_SNELLEN,
            },
            {
                "paperId": "b" * 40,
                "externalIds": {"PubMed": P_TITLE, "DOI": DOI_TITLE},
                "title": TITLE_ONLY,
            },
        ]
    }
)


def test_europe_pmc_results_with_full_text_url_lists_are_the_records() -> None:
    """Before: a result naming two URLs (its fullTextUrlList) rejected the results list and
    the records were the fullTextUrl entries -- no PMID or DOI had a record."""
    _reads_own_passage(EPMC_SEARCH, LACE_IDS, LACE, [SNELLEN])
    _reads_own_passage(EPMC_SEARCH, SNELLEN_IDS, SNELLEN, [LACE])
    _title_only(EPMC_SEARCH, TITLE_IDS)
    recs = split_records(EPMC_SEARCH)
    assert len(recs) == 3 and all(len(r.keys) >= 2 for r in recs)


def test_semantic_scholar_papers_keep_their_abstract() -> None:
    """Before: externalIds and openAccessPdf were taken as two records of each paper -- the
    DOI read ``DOI: ...`` without the abstract (no_passage), PubMed ids were not read."""
    lace = [*LACE_IDS[:2], LACE_IDS[2]]  # externalIds.PubMed, .PubMedCentral, .DOI
    _reads_own_passage(S2_SEARCH, lace, LACE, [SNELLEN])
    _reads_own_passage(S2_SEARCH, SNELLEN_IDS, SNELLEN, [LACE])
    _title_only(S2_SEARCH, TITLE_IDS)  # paperId hex, venue, author names are no passage


@pytest.mark.parametrize("text", [FETCH_WITH_REFERENCES, S2_FETCH_WITH_REFERENCES])
def test_a_single_paper_fetch_listing_references_is_that_papers_record(text: str) -> None:
    """Before: the references list was taken as the records -- the paper's own PMID had
    none. Its references are records of their own (titles: no passage), out of its text."""
    _reads_own_passage(text, LACE_IDS, LACE, [TITLE_SNELLEN, TITLE_ONLY])
    _title_only(text, SNELLEN_IDS + TITLE_IDS)


# ----------------------------------------------------------------------------- defect 2

FULL_TEXT = f"""\
# {TITLE_LACE}

Christina E. Lord, Jaime N. Wertman, Stephanie Lane, Arunika H. Gunawardena

BMC Plant Biology 2011, 11:102 · PMCID: {PMC_LACE} · PMID: {P_LACE} · DOI: {DOI_LACE}

## Abstract

{LACE} The study asked three questions:
1) where do mitochondria move,
2) when do they move, and
3) what drives the movement.

## Introduction

Programmed cell death (PCD) shapes the perforations of lace plant leaves.

## Methods

Leaves were imaged by time-lapse confocal microscopy at five developmental stages.

## Results

Mitochondria aggregated around the nucleus on transvacuolar strands in late stages.
"""
REFERENCES_MD = """
## References

1. Gunawardena AH, Greenwood JS, Dengler NG. Programmed cell death remodels lace plant leaf \
shape during development. Plant Cell. 2004;16(1):60-73. doi:10.5555/ref.7
2. Wertman J, Lord CE, Dauphinee AN. The pathway of cell dismantling during programmed cell \
death in lace plant leaves. BMC Plant Biol. 2012;12:115. doi:10.5555/ref.8
"""


@pytest.mark.parametrize("text", [FULL_TEXT, FULL_TEXT + REFERENCES_MD])
def test_a_full_text_fetch_is_one_record_not_cut_at_its_headings(text: str) -> None:
    """Before: cut at its ``##`` headings (and at the numbered lines of its abstract), the
    paper's identifiers read its title line only."""
    for c in LACE_IDS:
        seg = response_segment(text, c)
        assert seg is not None and "time-lapse confocal" in seg and "3) what drives" in seg
        assert "Plant Cell. 2004" not in seg  # a reference list entry is another paper's
    if "References" in text:
        _title_only(text, [Citation("DOI", "10.5555/ref.7")])  # a numbered citation line


def test_arguments_asking_for_the_paper_read_the_whole_response() -> None:
    """Before: a record naming the identifier (the title line, cut at the headings) took
    precedence over "the call asked for this paper"."""
    read = agent_read(_run(FULL_TEXT, {"pmcid": PMC_LACE}), LACE_IDS[1])
    assert read is not None and read.text == FULL_TEXT.strip()


def test_numbered_lines_inside_an_abstract_do_not_cut_it() -> None:
    text = (
        f"PMID: {P_LACE}\nTitle: {TITLE_LACE}\nAbstract: {LACE} We asked:\n"
        "1) where mitochondria move;\n2) when they move.\nDOI: " + DOI_LACE + "\n"
    )
    [rec] = split_records(text)
    assert rec.passage and {("PMID", P_LACE), ("DOI", DOI_LACE)} <= rec.keys
    assert "2) when they move" in rec.text


def test_web_results_keyed_by_their_links_stay_apart() -> None:
    """Several results each keyed by one URL name several papers (links count there)."""
    text = (
        "Title: Lace plant leaves\nURL: https://example.org/a\nContent: " + LACE + "\n\n"
        "Title: Acuity charts\nURL: https://example.org/b\nContent: " + SNELLEN + "\n"
    )
    a = response_segment(text, Citation("URL", "https://example.org/a"))
    assert a is not None and LACE in a and SNELLEN not in a


# ----------------------------------------------------------------------------- defect 3

EFETCH_ABSTRACT = f"""\
1. Plant J. 2011 Jun 7;11:102. doi: {DOI_LACE}.

{TITLE_LACE} (Aponogeton 
madagascariensis).

Lord CE(1), Wertman JN, Lane S, Gunawardena AH.

Author information: 
(1)Department of Biology, Dalhousie University, Halifax, Nova Scotia, Canada.

{LACE} The perforations form between the veins of 
the leaf blade in a predictable pattern.

DOI: {DOI_LACE}
PMCID: {PMC_LACE}
PMID: {P_LACE}  [Indexed for MEDLINE]


2. Eye (Lond). 1998;12 ( Pt 1):24-7.

{TITLE_SNELLEN}.

Smith A(1), Jones B.

Author information: 
(1)Department of Ophthalmology, Synthetic Eye Hospital, Leeds, UK.

BACKGROUND: Acuity charts differ in their optotypes.
RESULTS: {SNELLEN}

DOI: {DOI_SNELLEN}
PMID: {P_SNELLEN}  [Indexed for MEDLINE]


3. J Synth Test. 2020;1:1-2. doi: {DOI_TITLE}.

{TITLE_ONLY}.

Dunn C(1), Evans D.

Author information: 
(1)Department of Synthesis, Test University, Test City, Testland.

DOI: {DOI_TITLE}
PMID: {P_TITLE}
"""  # noqa: W291  (efetch prints trailing spaces)


def test_pubmed_abstract_format_is_cut_at_its_numbered_entries() -> None:
    """Before: cut at the repeated ``Author information:`` field, each abstract went with the
    next entry's citation line (its DOI) and its own PMID with the next title."""
    _reads_own_passage(EFETCH_ABSTRACT, LACE_IDS, LACE, [SNELLEN, TITLE_SNELLEN])
    _reads_own_passage(EFETCH_ABSTRACT, SNELLEN_IDS, SNELLEN, [LACE, TITLE_ONLY])
    _title_only(EFETCH_ABSTRACT, TITLE_IDS)  # citation, title, authors, addresses only


def test_pubmed_abstract_format_fetched_by_id_is_read_whole_without_its_title() -> None:
    one, title_only = EFETCH_ABSTRACT.split("\n\n\n2. ")[0], EFETCH_ABSTRACT.split("\n\n\n3. ")[1]
    args = {"db": "pubmed", "id": P_LACE, "rettype": "abstract", "retmode": "text"}
    read = agent_read(_run(one, args), LACE_IDS[0])
    assert read is not None and read.text == one.strip()
    _title_only("3. " + title_only, TITLE_IDS[:1], {"db": "pubmed", "id": P_TITLE})


# ----------------------------------------------------------------------------- defect 6


def _epmc_lite(pmid: str, doi: str, title: str) -> dict:
    return {
        "id": pmid,
        "source": "MED",
        "pmid": pmid,
        "doi": doi,
        "title": title,
        "authorString": "Lord CE, Wertman JN, Lane S, Gunawardena AH.",
        "journalTitle": "BMC Plant Biol",
        "issue": "",
        "journalVolume": "11",
        "pubYear": "2011",
        "journalIssn": "1471-2229",
        "pageInfo": "102",
        "pubType": "research-article; journal article",
        "isOpenAccess": "Y",
        "inEPMC": "Y",
        "inPMC": "N",
        "hasPDF": "N",
        "hasBook": "N",
        "hasSuppl": "N",
        "citedByCount": 38,
        "hasReferences": "Y",
        "hasTextMinedTerms": "Y",
        "hasDbCrossReferences": "N",
        "hasLabsLinks": "Y",
        "firstIndexDate": "2011-06-09",
        "firstPublicationDate": "2011-06-07",
    }


def _esummary(pmid: str, doi: str, title: str, pmc: str = "") -> dict:
    ids = [
        {"idtype": "pubmed", "idtypen": 1, "value": pmid},
        {"idtype": "doi", "idtypen": 3, "value": doi},
        {"idtype": "pii", "idtypen": 4, "value": doi.split("/")[1]},
    ]
    if pmc:
        ids += [
            {"idtype": "pmc", "idtypen": 8, "value": pmc},
            {"idtype": "pmcid", "idtypen": 5, "value": f"pmc-id: {pmc};"},
        ]
    return {
        "uid": pmid,
        "pubdate": "2011 Jun 7",
        "epubdate": "2011 Jun 7",
        "source": "Plant J",
        "authors": [
            {"name": "Lord CE", "authtype": "Author", "clusterid": ""},
            {"name": "Gunawardena AH", "authtype": "Author", "clusterid": ""},
        ],
        "lastauthor": "Gunawardena AH",
        "title": title,
        "sorttitle": title.lower(),
        "volume": "11",
        "issue": "",
        "pages": "102",
        "lang": ["eng"],
        "nlmuniqueid": "100967807",
        "issn": "",
        "essn": "1471-2229",
        "pubtype": ["Journal Article"],
        "recordstatus": "PubMed - indexed for MEDLINE",
        "pubstatus": "3",
        "articleids": ids,
        "history": [{"pubstatus": "received", "date": "2011/01/20 00:00"}],
        "references": [],
        "attributes": ["Has Abstract"],
        "pmcrefcount": 25,
        "fulljournalname": "The Plant journal : for cell and molecular biology",
        "elocationid": f"doi: {doi}",
        "doctype": "citation",
        "booktitle": "",
        "sortpubdate": "2011/06/07 00:00",
        "sortfirstauthor": "Lord CE",
    }


ESUMMARY = json.dumps(
    {
        "header": {"type": "esummary", "version": "0.3"},
        "result": {
            "uids": [P_LACE, P_SNELLEN],
            P_LACE: _esummary(P_LACE, DOI_LACE, TITLE_LACE, PMC_LACE),
            P_SNELLEN: _esummary(P_SNELLEN, DOI_SNELLEN, TITLE_SNELLEN),
        },
    }
)
MEDLINE = f"""\
PMID- {P_LACE}
OWN - NLM
STAT- MEDLINE
DCOM- 20111024
LR  - 20211020
IS  - 1471-2229 (Electronic)
VI  - 11
DP  - 2011 Jun 7
TI  - {TITLE_LACE} (Aponogeton
      madagascariensis).
PG  - 102
LID - {DOI_LACE} [doi]
AB  - {LACE} The perforations form between the veins of the leaf blade in a
      predictable pattern.
FAU - Lord, Christina E
AU  - Lord CE
AD  - Department of Biology, Dalhousie University, Halifax, Nova Scotia, Canada.
LA  - eng
PT  - Journal Article
TA  - Plant J
JT  - The Plant journal : for cell and molecular biology
PMC - {PMC_LACE}
AID - {DOI_LACE} [doi]
SO  - Plant J. 2011 Jun 7;11:102. doi: {DOI_LACE}.

PMID- {P_TITLE}
OWN - NLM
STAT- Publisher
DP  - 2020 Jan
TI  - {TITLE_ONLY}: a synthetic record without an abstract
      in the MEDLINE format.
PG  - 1-2
FAU - Dunn, Carol
AU  - Dunn C
AD  - Department of Synthesis, Test University, Test City, Testland.
LA  - eng
PT  - Journal Article
TA  - J Synth Test
JT  - Journal of synthetic tests
AID - {DOI_TITLE} [doi]
SO  - J Synth Test. 2020 Jan;1:1-2. doi: {DOI_TITLE}.
"""
NUMBERED_CITATIONS = f"""\
Top matches:
1. Lord CE, Wertman JN, Lane S, Gunawardena AH. {TITLE_LACE}. Plant J. 2011;11:102. \
PMID: {P_LACE}
2. Smith A, Jones B. {TITLE_SNELLEN}. Eye (Lond). 1998;12(Pt 1):24-7. PMID: {P_SNELLEN}
"""
LINK_LIST = f"""\
Related articles in PubMed:

- [{TITLE_LACE}](https://pubmed.ncbi.nlm.nih.gov/{P_LACE}/)
- [{TITLE_SNELLEN}](https://pubmed.ncbi.nlm.nih.gov/{P_SNELLEN}/)
- [{TITLE_ONLY}](https://pubmed.ncbi.nlm.nih.gov/{P_TITLE}/)
"""
S2_KEY_VALUE = f"""\
Paper ID: 649def34f8be52c8b66281af98ae884c09aef38b
Title: {TITLE_LACE}
Venue: BMC Plant Biology
Authors: Christina E. Lord, Jaime N. Wertman
DOI: {DOI_LACE}

Paper ID: 0f7b7cd4a1e9b20c56d3e2f1a0b9c8d7e6f5a4b3
Title: {TITLE_SNELLEN}
Venue: Eye
Authors: Alan Smith, Beth Jones
DOI: {DOI_SNELLEN}
"""
UNAVAILABLE = f"""\
PMID: {P_LACE}
Title: {TITLE_LACE}
Abstract: Abstract unavailable for this record

PMID: {P_SNELLEN}
Title: {TITLE_SNELLEN}
Abstract: {SNELLEN}
"""
MCP_MARKDOWN = f"""\
## Search results (2)

### 1. {TITLE_LACE}
- **PMID:** {P_LACE}
- **Journal:** Plant J (2011)
- **Abstract:** {LACE}

### 2. {TITLE_SNELLEN}
- **PMID:** {P_SNELLEN}
- **Journal:** Eye (Lond) (1998)
- **Abstract:** Not available
"""
TITLE_ONLY_CASES = {
    "markdown heading numbered, abstract not available": (
        MCP_MARKDOWN,
        [Citation("PMID", P_SNELLEN)],
    ),
    "Europe PMC lite: journalTitle, authorString": (
        json.dumps(
            {
                "version": "6.9",
                "hitCount": 2,
                "resultList": {
                    "result": [
                        _epmc_lite(P_LACE, DOI_LACE, TITLE_LACE),
                        _epmc_lite(P_SNELLEN, DOI_SNELLEN, TITLE_SNELLEN),
                    ]
                },
            }
        ),
        [Citation("PMID", P_LACE), Citation("DOI", DOI_SNELLEN)],
    ),
    "esummary: fulljournalname, sorttitle": (
        ESUMMARY,
        [Citation("PMID", P_LACE), Citation("PMCID", PMC_LACE), Citation("DOI", DOI_SNELLEN)],
    ),
    "MEDLINE: TI and its wrapped line": (MEDLINE, TITLE_IDS),
    "hex paper ids": (S2_KEY_VALUE, [Citation("DOI", DOI_LACE), Citation("DOI", DOI_SNELLEN)]),
    "abstract unavailable for this record": (UNAVAILABLE, [Citation("PMID", P_LACE)]),
    "numbered citation lines": (NUMBERED_CITATIONS, [Citation("PMID", P_LACE)]),
    "markdown link list": (LINK_LIST, [Citation("PMID", P_SNELLEN), Citation("PMID", P_TITLE)]),
}


@pytest.mark.parametrize("case", sorted(TITLE_ONLY_CASES))
def test_a_title_and_metadata_are_no_passage(case: str) -> None:
    """Before: three words of a journal name, an author string, a hex id or a note were a
    passage, and the claim was scored against a title."""
    text, ids = TITLE_ONLY_CASES[case]
    _title_only(text, ids)


def test_passages_still_count() -> None:
    _reads_own_passage(MEDLINE, LACE_IDS, LACE, [TITLE_ONLY])  # MEDLINE AB
    _reads_own_passage(UNAVAILABLE, SNELLEN_IDS[:1], SNELLEN, [TITLE_LACE])
    _reads_own_passage(MCP_MARKDOWN, LACE_IDS[:1], LACE, [TITLE_SNELLEN])
    assert has_passage(["Leaves were imaged at five developmental stages."])  # free text
    assert has_passage(["Title: Lace plant", "mitochondria surround the nucleus"])
    assert not has_passage(["Title: Lace plant", "Journal: Plant J", "Year: 2011"])


# ----------------------------------------------------------------------------- defect 7


def test_esummary_uids_and_articleids_are_read() -> None:
    """Before: esummary's ``uid`` and ``articleids`` {idtype: pubmed} were not read -- the PMID
    had no record; the PMC id and DOI read the record only through ``elocationid``."""
    recs = {k: r for r in split_records(ESUMMARY) for k in r.keys}
    lace = recs[("PMID", P_LACE)]
    assert recs[("PMCID", PMC_LACE)] is lace and recs[("DOI", DOI_LACE)] is lace
    assert recs[("PMID", P_SNELLEN)].text != lace.text and TITLE_SNELLEN not in lace.text
    pmc_db = json.dumps(
        {
            "result": {
                "uids": ["3120501"],
                "3120501": {
                    "uid": "3120501",
                    "title": TITLE_LACE,
                    "articleids": [
                        {"idtype": "pmid", "value": P_LACE},
                        {"idtype": "pmcid", "value": PMC_LACE},
                    ],
                },
            }
        }
    )
    [rec] = split_records(pmc_db)  # db=pmc: the uid is the PMC number, not a PMID
    assert rec.keys == {("PMID", P_LACE), ("PMCID", PMC_LACE)}


def test_semantic_scholar_external_ids_are_read() -> None:
    [rec] = split_records(json.dumps(_s2(P_LACE, DOI_LACE, TITLE_LACE, LACE, "3120501")))
    assert {("PMID", P_LACE), ("PMCID", PMC_LACE), ("DOI", DOI_LACE)} <= rec.keys
    assert rec.passage and LACE in rec.text


def test_an_eutilities_fetch_names_its_ids() -> None:
    """Before: ``{"db": "pubmed", "id": "123"}`` named nothing (a bare number under ``id``)."""
    assert argument_keys({"db": "pubmed", "id": P_LACE}) == {("PMID", P_LACE)}
    assert argument_keys({"db": "pubmed", "id": f"{P_LACE},{P_SNELLEN}"}) == {
        ("PMID", P_LACE),
        ("PMID", P_SNELLEN),
    }
    assert argument_keys({"db": "pmc", "id": "3120501"}) == {("PMCID", PMC_LACE)}
    assert argument_keys({"pmids": [P_LACE, P_SNELLEN]}) == {("PMID", P_LACE), ("PMID", P_SNELLEN)}
    assert argument_keys({"id": P_LACE}) == set()  # no database: a bare number is no guess
    # an esummary of one paper fetched by id is read whole (it names no passage)
    one = json.dumps(
        {
            "header": {"type": "esummary"},
            "result": {"uids": [P_LACE], P_LACE: _esummary(P_LACE, DOI_LACE, TITLE_LACE)},
        }
    )
    _title_only(one, [Citation("PMID", P_LACE)], {"db": "pubmed", "id": P_LACE})


def test_a_batch_fetch_reads_each_papers_record() -> None:
    """A call asking for several papers reads each one's record, not the whole response."""
    run = _run(EFETCH_ABSTRACT, {"db": "pubmed", "id": f"{P_LACE},{P_SNELLEN},{P_TITLE}"})
    read = agent_read(run, Citation("PMID", P_LACE))
    assert read is not None and LACE in read.text and SNELLEN not in read.text


# ----------------------------------------------------------------------------- defect 8

BULLET_IDS = f"""\
Similar articles:
* {TITLE_LACE} - PMID {P_LACE}
* {TITLE_SNELLEN} - PMID {P_SNELLEN}
* {TITLE_ONLY} - PMID {P_TITLE}
"""


@pytest.mark.parametrize("text", [LINK_LIST, BULLET_IDS])
def test_bullet_lists_give_one_record_per_bullet(text: str) -> None:
    """Before: cut at each identifier, each title joined the previous bullet's record."""
    for pmid, title in ((P_LACE, TITLE_LACE), (P_SNELLEN, TITLE_SNELLEN), (P_TITLE, TITLE_ONLY)):
        seg = response_segment(text, Citation("PMID", pmid))
        assert seg is not None and title in seg
        others = {TITLE_LACE, TITLE_SNELLEN, TITLE_ONLY} - {title}
        assert not any(o in seg for o in others), seg


# ----------------------------------------------------------------------------- defect 9

MENTION = f"""\
PMID: {P_LACE}
Title: {TITLE_LACE}
Abstract: {LACE} Acuity charts were used as reported earlier (PMID {P_SNELLEN}).
DOI: {DOI_LACE}

PMID: {P_SNELLEN}
Title: {TITLE_SNELLEN}
Abstract: {SNELLEN}
DOI: {DOI_SNELLEN}
"""


def test_a_pmid_mentioned_in_another_papers_abstract_is_not_its_record() -> None:
    """Before: the lace record, mentioning PMID 9488747 in its abstract, was keyed to it too."""
    seg = response_segment(MENTION, Citation("PMID", P_SNELLEN))
    assert seg is not None and SNELLEN in seg and LACE not in seg
    epmc = json.loads(EPMC_SEARCH)
    epmc["resultList"]["result"][0]["abstractText"] += f" As reported earlier (PMID {P_SNELLEN})."
    seg = response_segment(json.dumps(epmc), Citation("PMID", P_SNELLEN))
    assert seg is not None and SNELLEN in seg and LACE not in seg
    # a record with no id field at all is keyed by the identifiers of its prose
    prose = f"{LACE} (PMID {P_LACE})\n\n{SNELLEN} (PMID {P_SNELLEN})"
    assert response_segment(prose, Citation("PMID", P_SNELLEN)) == f"{SNELLEN} (PMID {P_SNELLEN})"
