"""One parser per record format (kit/audit/record_formats): each format in its real layout,
three records or more, one without an abstract; per record its format, its own identifiers
(PMID, PMCID, DOI), its passage flag, and that each identifier reads its own abstract -- a
sentence of record k is in k's text and not in k+1's.

The layouts are those NCBI E-utilities (efetch rettype=abstract / medline / retmode=xml,
esummary XML), Europe PMC, Semantic Scholar and OpenAlex print; the contents are SYNTHETIC
(construction-labelled): PubMedQA-like PMIDs, titles, abstracts, names and DOIs (test prefix
10.5555) written here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kit.audit.evidence import agent_read
from kit.audit.record_formats.eutils_xml import safe_parse
from kit.audit.record_formats.json_records import inverted_abstract
from kit.audit.records import Record, split_records, whole_record
from kit.grade.citation_audit import AgentRead
from kit.runs.model import Citation
from kit.runs.v2 import run_v2_from_dict

# the papers: (pmid, pmcid or "", doi, title, a sentence of its abstract or None)
A = (
    "21645374",
    "PMC3120501",
    "10.5555/lace.1",
    "Mitochondrial dynamics in lace plant",
    "Mitochondria move to the nucleus during programmed cell death in lace plant leaves.",
)
B = (
    "9488747",
    "",
    "10.5555/snellen.2",
    "Snellen and Landolt C acuity",
    "Snellen charts overestimate visual acuity compared with Landolt C rings.",
)
C = ("32445440", "", "10.5555/news.3", "A news item on acuity charts", None)
D = (
    "25433161",
    "PMC4251234",
    "",
    "Statins and delirium after cardiac surgery",
    "Preoperative statin use was associated with less delirium after cardiac surgery.",
)
PAPERS = (A, B, C, D)  # fmt: skip


def _keys(p: tuple) -> set[tuple[str, str]]:
    pmid, pmc, doi = p[:3]
    return (
        {("PMID", pmid)} | ({("PMCID", pmc)} if pmc else set()) | ({("DOI", doi)} if doi else set())
    )


def _run(text: str, arguments: dict[str, Any] | None = None) -> Any:
    call = {"tool": "t", "arguments": arguments or {"q": "x"}, "response_text": text}
    return run_v2_from_dict(
        {"format_version": 2, "run_id": "r", "task_id": "t", "model": "m", "answer": "A claim.",
         "tool_calls": [call]}
    )  # fmt: skip


def _check(text: str, fmt: str, papers: tuple = PAPERS) -> list[Record]:
    """Each paper: one record of ``fmt`` with exactly its own ids and its passage flag; every
    id reads its own abstract sentence, never the next paper's."""
    recs = [r for r in split_records(text) if r.keys]
    assert [r.format for r in recs] == [fmt] * len(papers), [r.format for r in recs]
    run = _run(text)
    for k, p in enumerate(papers):
        own = {key for key in recs[k].keys if key[0] != "URL"}  # OpenAlex's own W-id URL
        assert own == _keys(p), (k, recs[k].keys)
        assert recs[k].passage == (p[4] is not None), (k, recs[k])
        for scheme, value in sorted(_keys(p)):
            read = agent_read(run, Citation(scheme, value))
            assert read is not None and read.record_format == fmt, (scheme, value, read)
            if p[4] is None:
                assert read == AgentRead("", (0,)), read  # title only: no_passage
                continue
            assert p[4] in read.text, (scheme, value, read.text)
            for q in papers[k + 1 : k + 2]:
                if q[4] is not None:
                    assert q[4] not in read.text, (scheme, value, read.text)
    return recs


# ----------------------------------------------------------------------------- pubmed-abstract

PUBMED_ABSTRACT = f"""\
1. Plant J. 2011 Jun 7;11:102. doi: {A[2]}.

{A[3]} (Aponogeton 
madagascariensis).

Lord CE(1), Wertman JN(2), Lane S(1).

Author information: 
(1)Department of Biology, Synthetic University, Halifax, Canada.
(2)Institute of Plant Things, Test City, Canada.

BACKGROUND: Lace plant leaves form perforations by programmed cell death. METHODS: 
Leaves were imaged at five stages; we asked
1) where mitochondria move and 2) when. RESULTS: {A[4]}

Copyright © 2011 The Authors.

DOI: {A[2]}
PMCID: {A[1]}
PMID: {A[0]}  [Indexed for MEDLINE]


2. Eye (Lond). 1998;12 ( Pt 1):24-7.

{B[3]}.

Smith A, Jones B.

{B[4]} Earlier charts were
2. compared in PMID 32445440 and found wanting.

Comment in
    Eye (Lond). 1999;13 ( Pt 2):270.

Erratum in
    Eye (Lond). 1998;12(Pt 3):560.

PMID: {B[0]}


3. Nature. 2020 Jan 3;577(7788):12-13. doi: {C[2]}. Epub 2020 Jan 2.

{C[3]}.

No authors listed.

DOI: {C[2]}
PMID: {C[0]}  [Indexed for MEDLINE]


4. J Synth Card. 2014 Dec;3(4):200-9. Epub 2014 Nov 30.

{D[3]}.

Dunn C(1), Evans D(1).

Author information: 
(1)Department of Synthesis, Test University, Test City, Testland.

{D[4]} The effect held after adjustment.

Conflict of interest statement: The authors declare no competing interests.

PMCID: {D[1]}
PMID: {D[0]}
"""  # noqa: W291  (efetch prints trailing spaces)


def test_pubmed_abstract_records_end_at_their_pmid_line() -> None:
    """Before: cut before each ``PMID:`` (the first repeated id field), each paper's PMID was
    joined with the next paper's abstract -- the shift measured on real inspect_ai logs."""
    b_no_doi = (B[0], B[1], "", *B[3:])  # an older record: no DOI line, none in its citation
    recs = _check(PUBMED_ABSTRACT, "pubmed-abstract", (A, b_no_doi, C, D))
    assert "2. compared in PMID 32445440" in recs[1].text  # a numbered abstract line starts none
    assert "No authors listed" in recs[2].text and not recs[2].passage
    assert "Conflict of interest" in recs[3].text


def test_a_numbered_abstract_line_naming_another_id_starts_no_record() -> None:
    """Before: the line ``2. compared in PMID 32445440`` opened a record keyed to that PMID,
    so the news item's PMID read the acuity abstract."""
    read = agent_read(_run(PUBMED_ABSTRACT), Citation("PMID", C[0]))
    assert read == AgentRead("", (0,)) and B[4] not in read.text


def test_pubmed_abstract_fetched_by_id_is_read_whole_with_its_passage_flag() -> None:
    one = PUBMED_ABSTRACT.split("\n\n\n3. ")[1]
    rec = whole_record("3. " + one.split("\n\n\n4. ")[0])
    assert rec.format == "pubmed-abstract" and not rec.passage  # a news item: no abstract


# ----------------------------------------------------------------------------- medline


def _medline(p: tuple, extra: str = "") -> str:
    pmid, pmc, doi, title, abstract = p
    lines = [f"PMID- {pmid}", "OWN - NLM", "STAT- MEDLINE", "DP  - 2011 Jun 7",
             f"TI  - {title} in a synthetic", "      MEDLINE record.", "PG  - 102"]  # fmt: skip
    if doi:
        lines.append(f"LID - {doi} [doi]")
    if abstract:
        lines += [f"AB  - {abstract} The finding was", "      replicated in a second cohort."]
    lines += ["FAU - Lord, Christina E", "AU  - Lord CE",
              "AD  - Department of Biology, Synthetic University, Halifax, Canada.",
              "LA  - eng", "PT  - Journal Article", "TA  - Synth J"]  # fmt: skip
    if pmc:
        lines.append(f"PMC - {pmc}")
    if doi:
        lines += [f"AID - {doi} [doi]", "AID - S0000-0000(11)00001-1 [pii]"]
    lines.append(f"SO  - Synth J. 2011 Jun 7;11:102. {extra}")
    return "\n".join(lines)


MEDLINE = "\n\n".join(_medline(p) for p in PAPERS) + "\n"


def test_medline_records_start_at_pmid_and_read_ab() -> None:
    recs = _check(MEDLINE, "medline")
    assert "replicated in a second cohort" in recs[0].text


# ----------------------------------------------------------------------------- pubmed-xml


def _article(p: tuple) -> str:
    pmid, pmc, doi, title, abstract = p
    ab = (
        f'<Abstract><AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Charts '
        f'<i>differ</i>.</AbstractText><AbstractText Label="RESULTS">{abstract}'
        "</AbstractText></Abstract>"
        if abstract
        else ""
    )
    ids = f'<ArticleId IdType="pubmed">{pmid}</ArticleId>'
    ids += f'<ArticleId IdType="doi">{doi}</ArticleId>' if doi else ""
    ids += f'<ArticleId IdType="pmc">{pmc}</ArticleId>' if pmc else ""
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID><Article PubModel="Print"><Journal><Title>Synth J'
        "</Title><JournalIssue><PubDate><Year>2011</Year></PubDate></JournalIssue></Journal>"
        f"<ArticleTitle>{title}.</ArticleTitle>{ab}<AuthorList><Author><LastName>Lord"
        "</LastName></Author></AuthorList></Article><CommentsCorrectionsList>"
        '<CommentsCorrections RefType="CommentIn"><PMID Version="1">11111111</PMID>'
        "</CommentsCorrections></CommentsCorrectionsList></MedlineCitation><PubmedData>"
        f"<ArticleIdList>{ids}</ArticleIdList><ReferenceList><Reference><Citation>Other."
        '</Citation><ArticleIdList><ArticleId IdType="pubmed">22222222</ArticleId>'
        "</ArticleIdList></Reference></ReferenceList></PubmedData></PubmedArticle>"
    )


PUBMED_XML = (
    '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
    '1st January 2024//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n'
    "<PubmedArticleSet>\n" + "\n".join(_article(p) for p in PAPERS) + "\n</PubmedArticleSet>\n"
)


def test_pubmed_xml_reads_own_ids_not_references_or_comments() -> None:
    recs = _check(PUBMED_XML, "pubmed-xml")
    assert "BACKGROUND: Charts differ." in recs[0].text


def _docsum(p: tuple) -> str:
    pmid, pmc, doi, title, _ = p
    ids = f'<Item Name="pubmed" Type="String">{pmid}</Item>'
    ids += f'<Item Name="doi" Type="String">{doi}</Item>' if doi else ""
    ids += f'<Item Name="pmc" Type="String">{pmc}</Item>' if pmc else ""
    return (
        f'<DocSum><Id>{pmid}</Id><Item Name="PubDate" Type="Date">2011 Jun 7</Item>'
        f'<Item Name="Source" Type="String">Synth J</Item><Item Name="Title" Type="String">'
        f'{title}</Item><Item Name="ArticleIds" Type="List">{ids}</Item>'
        + (f'<Item Name="DOI" Type="String">{doi}</Item>' if doi else "")
        + "</DocSum>"
    )


def test_esummary_xml_names_ids_and_holds_no_passage() -> None:
    text = (
        "<?xml version='1.0'?>\n<eSummaryResult>"
        + "".join(map(_docsum, PAPERS))
        + "</eSummaryResult>"
    )
    no_abstracts = tuple((*p[:4], None) for p in PAPERS)
    _check(text, "esummary-xml", no_abstracts)


@pytest.mark.parametrize(
    "text",
    [
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><PubmedArticleSet>&a;</PubmedArticleSet>',
        "<!DOCTYPE PubmedArticleSet SYSTEM 'http://x/y.dtd'><PubmedArticleSet><!ENTITY b 'c'>",
        "<PubmedArticleSet><PubmedArticle><MedlineCitation>unclosed",
    ],
)
def test_unsafe_or_bad_xml_is_not_parsed_and_falls_to_the_text_rules(text: str) -> None:
    assert safe_parse(text) is None
    assert all(r.format not in ("pubmed-xml", "esummary-xml") for r in split_records(text))


# ----------------------------------------------------------------------------- JSON flavours


def _inverted(text: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, w in enumerate(text.split()):
        out.setdefault(w, []).append(i)
    return out


def _openalex(p: tuple) -> dict[str, Any]:
    pmid, pmc, doi, title, abstract = p
    ids: dict[str, Any] = {"openalex": f"https://openalex.org/W{pmid}",
                           "pmid": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"}  # fmt: skip
    if doi:
        ids["doi"] = f"https://doi.org/{doi}"
    if pmc:
        ids["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmc}"
    return {
        "id": f"https://openalex.org/W{pmid}",
        "doi": f"https://doi.org/{doi}" if doi else None,
        "title": title,
        "display_name": title,
        "publication_year": 2011,
        "ids": ids,
        "authorships": [{"author": {"id": "https://openalex.org/A1", "display_name": "C Lord"}}],
        "abstract_inverted_index": _inverted(abstract) if abstract else None,
        "cited_by_count": 38,
    }


def _s2(p: tuple) -> dict[str, Any]:
    pmid, pmc, doi, title, abstract = p
    ext: dict[str, Any] = {"PubMed": pmid, "CorpusId": int(pmid)}
    ext |= {"DOI": doi} if doi else {}
    ext |= {"PubMedCentral": pmc[3:]} if pmc else {}
    return {"paperId": f"{int(pmid):040x}", "externalIds": ext, "title": title,
            "abstract": abstract, "venue": "Synth J", "year": 2011}  # fmt: skip


def _epmc(p: tuple) -> dict[str, Any]:
    pmid, pmc, doi, title, abstract = p
    out: dict[str, Any] = {"id": pmid, "source": "MED", "pmid": pmid, "title": title,
                           "authorString": "Lord CE, Wertman JN.", "pubYear": "2011"}  # fmt: skip
    out |= {"doi": doi} if doi else {}
    out |= {"pmcid": pmc} if pmc else {}
    out |= {"abstractText": abstract} if abstract else {}
    return out


def _esummary(p: tuple) -> dict[str, Any]:
    pmid, pmc, doi, title, _ = p
    ids = [{"idtype": "pubmed", "value": pmid}]
    ids += [{"idtype": "doi", "value": doi}] if doi else []
    ids += [{"idtype": "pmc", "value": pmc}] if pmc else []
    return {"uid": pmid, "title": title, "source": "Synth J", "articleids": ids}


def _plain(p: tuple) -> dict[str, Any]:
    pmid, pmc, doi, title, abstract = p
    return {"pmid": pmid, "pmcid": pmc or None, "doi": doi or None, "title": title,
            "abstract": abstract}  # fmt: skip


NO_ABSTRACTS = tuple((*p[:4], None) for p in PAPERS)
JSON_CASES = {
    "openalex-json": ({"meta": {"count": 4}, "results": [_openalex(p) for p in PAPERS]}, PAPERS),
    "semantic-scholar-json": ({"total": 4, "data": [_s2(p) for p in PAPERS]}, PAPERS),
    "europepmc-json": ({"hitCount": 4, "resultList": {"result": [_epmc(p) for p in PAPERS]}},
                       PAPERS),
    "esummary-json": (
        {"header": {"type": "esummary"},
         "result": {"uids": [p[0] for p in PAPERS]} | {p[0]: _esummary(p) for p in PAPERS}},
        NO_ABSTRACTS,
    ),
    "json": ({"count": 4, "items": [_plain(p) for p in PAPERS]}, PAPERS),
}  # fmt: skip


@pytest.mark.parametrize("fmt", sorted(JSON_CASES))
def test_json_flavours_are_named_and_read_per_record(fmt: str) -> None:
    obj, papers = JSON_CASES[fmt]
    _check(json.dumps(obj), fmt, papers)


def test_openalex_inverted_index_is_rebuilt_in_word_order() -> None:
    assert inverted_abstract({"move": [1], "Mitochondria": [0], "fast": [3], "very": [2]}) == (
        "Mitochondria move very fast"
    )
    assert inverted_abstract({"a": ["x"]}) is None and inverted_abstract(None) is None
    [rec] = split_records(json.dumps(_openalex(A)))
    assert A[4] in rec.text and rec.passage and rec.format == "openalex-json"


# ----------------------------------------------------------------------------- key-value


def _kv_ids_last(p: tuple) -> str:
    pmid, pmc, doi, title, abstract = p
    link = f"[{title}](https://example.org/paper/{pmid})"  # a link's text is a title: no passage
    body = f"{link}\n{abstract or 'No abstract available.'}"
    ids = [f"DOI: {doi}"] if doi else []
    ids += [f"PMCID: {pmc}"] if pmc else []
    return body + "\n\n" + "\n".join([*ids, f"PMID: {pmid}"])


KV_IDS_LAST = "\n\n".join(_kv_ids_last(p) for p in PAPERS) + "\n"
KV_IDS_FIRST = "\n\n".join(
    "\n".join(
        [f"PMID: {p[0]}", *([f"PMCID: {p[1]}"] if p[1] else []), f"Title: {p[3]}",
         *([f"Abstract: {p[4]}"] if p[4] else []), *([f"DOI: {p[2]}"] if p[2] else [])]
    )
    for p in PAPERS
) + "\n"  # fmt: skip


def test_key_value_ids_closing_each_block_end_it() -> None:
    """Before: the repeated ``DOI:`` / ``PMID:`` field was read as opening each block, so each
    paper's ids went with the next paper's title and abstract."""
    _check(KV_IDS_LAST, "key-value")


def test_key_value_ids_opening_each_block_start_it() -> None:
    _check(KV_IDS_FIRST, "key-value")


def test_id_less_blocks_stay_records_of_their_own() -> None:
    """Before: the response named one paper, so it was one record and the one PMID read the
    other two blocks' abstracts as its own."""
    text = (
        f"Title: {A[3]}\nAbstract: {A[4]}\n\n"
        f"Title: {B[3]}\nAbstract: {B[4]}\nPMID: {B[0]}\n\n"
        f"Title: {D[3]}\nAbstract: {D[4]}\n"
    )
    recs = split_records(text)
    assert len(recs) == 3 and [bool(r.keys) for r in recs] == [False, True, False]
    read = agent_read(_run(text), Citation("PMID", B[0]))
    assert read is not None and B[4] in read.text
    assert A[4] not in read.text and D[4] not in read.text


# ----------------------------------------------------------------------------- bare id arguments


@pytest.mark.parametrize("value", [int(A[0]), A[0]])
def test_a_bare_id_argument_reads_the_record_naming_that_number(value: Any) -> None:
    """Before: ``{"id": 21645374}`` with no ``db`` named nothing, and a record keyed only by
    a bare ``id`` number had no identifier: the agent's read was lost."""
    text = json.dumps({"id": int(A[0]), "title": A[3], "abstract": A[4]})
    read = agent_read(_run(text, {"id": value}), Citation("PMID", A[0]))
    assert read is not None and A[4] in read.text


def test_a_bare_pmc_number_reads_as_the_pmc_id_its_record_names() -> None:
    text = f"PMCID: {D[1]}\nTitle: {D[3]}\nAbstract: {D[4]}\n\nSee also: {B[3]}\n"
    read = agent_read(_run(text, {"id": D[1][3:]}), Citation("PMCID", D[1]))
    assert read is not None and read.text == text.strip()  # the whole response: asked for it


def test_a_read_over_several_calls_names_each_format_in_call_order() -> None:
    calls = [
        {"tool": "efetch", "arguments": {"q": "x"}, "response_text": t}
        for t in (MEDLINE, PUBMED_XML, MEDLINE)
    ]
    run = run_v2_from_dict(
        {"format_version": 2, "run_id": "r", "task_id": "t", "model": "m", "answer": "A claim.",
         "tool_calls": calls}
    )  # fmt: skip
    read = agent_read(run, Citation("PMID", A[0]))
    assert read is not None and read.calls == (0, 1, 2)
    assert read.record_format == "medline+pubmed-xml"


def test_a_markdown_byline_is_no_passage() -> None:
    """A markdown result list's italic byline (authors, journal, year, then the ids as links)
    is metadata: a record with a heading and a byline only has no passage; one with an abstract
    paragraph under it has (SYNTHETIC records)."""
    from kit.audit.records import split_records

    text = (
        "### 1. Does X help?\n*Smith J, Lee K. J Synth Med, 2011.* PMID: "
        "[31111111](https://pubmed.ncbi.nlm.nih.gov/31111111/) · DOI: [10.5555/31111111](https://doi.org/10.5555/31111111)\n\n"
        "### 2. Does Y help?\n*Chen M, Kim K. J Synth Med, 2012.* PMID: "
        "[32222222](https://pubmed.ncbi.nlm.nih.gov/32222222/) · DOI: 10.5555/32222222\n\n"
        "We asked whether Y helps adults and found that it did in a randomised trial.\n"
    )
    recs = {min(v for s, v in r.keys if s == "PMID"): r for r in split_records(text)}
    assert (recs["31111111"].passage, recs["32222222"].passage) == (False, True)
    assert {r.format for r in recs.values()} == {"markdown"}
