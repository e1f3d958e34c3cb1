"""A third scripted task of the inspect_ai regression corpus (issue 57): every marker family a
literature agent writes, over every record format a literature tool answers in -- written at
test time by inspect_ai's own ``eval()`` with its offline ``mockllm/model``.

**Records.** Each sample's tool prints three records of real PubMedQA PQA-L items read from the
registry at test time (PMID, the question as the title, the abstract as the kit's PubMedQA corpus
joins it, the item's year): records 1 and 3 with their abstract, record 2 (the middle one) as a
title only, so a parser that shifts records by one reads a wrong abstract or none. The authors,
journals, DOIs (``10.5555/<pmid>``: the DOI test prefix), PaperQA2 page ranges and OpenAlex /
Semantic Scholar ids are SYNTHETIC. Every answer cites records 1 and 3, one claim each; the
claim's text is the first sentence of the item's own conclusion (``LONG_ANSWER``), so every
planted citation is construction-labelled "supported".

**Formats** (:data:`FORMATS`, each one tool of the task, laid out as the real service prints
it): NCBI efetch ``rettype=abstract`` text (ids after the abstract), efetch ``rettype=medline``,
efetch XML, Europe PMC search JSON, Semantic Scholar search JSON, OpenAlex works JSON (the
abstract as ``abstract_inverted_index``), a markdown result list, ``Key: value`` blocks with the
PMID last, and OpenScholar-style numbered retrieved contexts (``[0] Title: ...``, 0-based).

**Spellings** (:data:`SPELLINGS`): numeric ``[1]`` with a Vancouver reference list;
``[PMID: n]`` / ``(PMID: n)``; parenthetical author-year ``(Smith et al., 2011)`` with APA
references (plain lines, DOIs); narrative author-year ``Smith et al. (2011) reported ...``;
PaperQA2 keys ``(Smith2011Do pages 1-2)`` with its ``1. (key pages): ...`` references (DOIs, one
paper in two contexts); markdown footnotes ``[^1]`` (before and after the period). Every spelling
runs over every format (one sample each); STORM / OpenScholar ``[n]`` over the tool's own
numbered list (no reference list in the answer) runs over the two formats that number their
records (efetch abstract text, 1-based; retrieved contexts, 0-based).

Expected outcomes are by construction (:func:`planted`): each planted citation is on its claim
(``claim_no`` 1 or 2), read from its own record (``evidence`` tool_response, the text holding its
own abstract and no other), and L1 ``found`` for a PMID (a PubMedQA item) or ``unchecked`` for a
DOI (no DOI corpus; PubMedQA declares a sample).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mock_inspect import write_mock_log

FORMATS = (
    "pubmed-abstract",
    "medline",
    "pubmed-xml",
    "europepmc-json",
    "semantic-scholar-json",
    "openalex-json",
    "markdown",
    "key-value",
    "numbered",
)
SPELLINGS = ("numeric", "pmid", "author-year", "narrative", "paperqa", "footnote")
TOOL_LIST = (("tool-list", "pubmed-abstract"), ("tool-list", "numbered"))
TOOL = {f: "search_" + f.replace("-", "_") for f in FORMATS}
# SYNTHETIC first authors (distinct within a sample: 3 records a sample, 12 names), second
# authors and journals
SURNAMES = (
    "Smith",
    "García-López",
    "Okafor",
    "Müller",
    "Nakamura",
    "O'Neill",
    "Lindqvist",
    "Haddad",
    "Kowalski",
    "Chen",
    "Dubois",
    "Ferreira",
)
SECOND = ("Lee", "Patel", "Rossi", "Ivanova", "Kim", "Brown")
GIVEN = ("Jane", "Tomas", "Ada", "Felix", "Mei", "Omar")
JOURNALS = ("J Synth Med", "Synth Clin Rev", "Arch Synth Res")
_CLEAN = re.compile(r"^[A-Za-z][A-Za-z0-9 ,'%-]{40,220}$")


@dataclass(frozen=True)
class Paper:
    """One PubMedQA item as the tools print it (authors, journal and DOI SYNTHETIC)."""

    pmid: str
    title: str
    abstract: str
    year: str
    claim: str  # the first sentence of the item's conclusion, without its period
    surname: str
    second: str
    given: str
    journal: str

    @property
    def doi(self) -> str:
        return f"10.5555/{self.pmid}"

    @property
    def initial(self) -> str:
        return self.given[0]


@dataclass(frozen=True)
class SampleSpec:
    """One sample: its id, the spelling of its answer, the format of its tool's response and
    the three papers that response prints (the middle one as a title only)."""

    id: str
    spelling: str
    format: str
    papers: tuple[Paper, Paper, Paper]

    @property
    def question(self) -> str:
        return f"[{self.id}] What is known about {self.papers[0].title.rstrip('?')}?"

    @property
    def cited(self) -> tuple[Paper, Paper]:
        return self.papers[0], self.papers[2]


def _first_sentence(text: str) -> str | None:
    head = text.split(". ", 1)[0].rstrip(".")
    return head if _CLEAN.match(head) else None


def pubmedqa_papers(raw: Path, n: int) -> list[Paper]:
    """The first ``n`` PubMedQA items (PMID order) with a year whose conclusion opens with a
    plain sentence (letters, digits, commas: no parenthesis, bracket or inner period a marker
    could meet), with SYNTHETIC authors and journal."""
    from kit.grade.pubmedqa_corpus import build_corpus
    from kit.registry.loaders import pubmedqa_tables

    t = pubmedqa_tables(raw)
    corpus = build_corpus(t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"])
    items = t["pubmedqa_items"].assign(pmid=lambda d: d["pmid"].astype(str))
    items = items.sort_values("pmid", key=lambda s: s.astype(int))
    out: list[Paper] = []
    for row in items.itertuples(index=False):
        claim = _first_sentence(str(row.long_answer))
        if claim is None or not str(row.year).isdigit():
            continue
        i = len(out)
        out.append(
            Paper(
                pmid=row.pmid,
                title=str(row.question),
                abstract=corpus.abstract[row.pmid],
                year=str(row.year),
                claim=claim,
                surname=SURNAMES[i % len(SURNAMES)],
                second=SECOND[i % len(SECOND)],
                given=GIVEN[i % len(GIVEN)],
                journal=JOURNALS[i % len(JOURNALS)],
            )
        )
        if len(out) == n:
            break
    return out


def sample_specs(raw: Path) -> list[SampleSpec]:
    """Every spelling over every format, then the tool-list spelling over its two formats."""
    combos = [(s, f) for s in SPELLINGS for f in FORMATS] + list(TOOL_LIST)
    papers = pubmedqa_papers(raw, 3 * len(combos))
    return [
        SampleSpec(f"{s}__{f}", s, f, (papers[3 * i], papers[3 * i + 1], papers[3 * i + 2]))
        for i, (s, f) in enumerate(combos)
    ]


# ------------------------------------------------------------------------------ answers


def paperqa_key(p: Paper) -> str:
    """PaperQA2's docname: the first author's surname, the year, the title's first word."""
    return re.sub(r"[^A-Za-z]", "", p.surname) + p.year + re.sub(r"\W", "", p.title.split()[0])


def vancouver(p: Paper) -> str:
    return (
        f"{p.surname} {p.initial}, {p.second} K. {p.title} {p.journal}. {p.year};12(3):101-9. "
        f"PMID: {p.pmid}."
    )


def apa(p: Paper) -> str:
    return (
        f"{p.surname}, {p.initial}., & {p.second}, K. ({p.year}). {p.title} {p.journal}, 12(3), "
        f"101-109. https://doi.org/{p.doi}"
    )


def paperqa_entry(n: int, p: Paper, pages: str) -> str:
    return (
        f"{n}. ({paperqa_key(p)} pages {pages}): {p.surname}, {p.given}, and {p.second}, Kim. "
        f'"{p.title}" {p.journal} 12.3 ({p.year}): 101-109. doi:{p.doi}'
    )


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def answer(spec: SampleSpec) -> str:
    """The answer of one sample: two claims (records 1 and 3) in its spelling."""
    a, c = spec.cited
    s = spec.spelling
    if s == "numeric":
        return f"{a.claim} [1]. {c.claim} [2].\n\nReferences\n1. {vancouver(a)}\n2. {vancouver(c)}"
    if s == "pmid":
        return f"{a.claim} [PMID: {a.pmid}]. {c.claim} (PMID: {c.pmid})."
    if s == "author-year":
        return (
            f"{a.claim} ({a.surname} et al., {a.year}). {c.claim} ({c.surname} & {c.second}, "
            f"{c.year}).\n\nReferences\n\n{apa(a)}\n{apa(c)}"
        )
    if s == "narrative":
        return (
            f"{a.surname} et al. ({a.year}) reported that {lower_first(a.claim)}. {c.surname} and "
            f"{c.second} ({c.year}) found that {lower_first(c.claim)}.\n\nReferences\n"
            f"1. {vancouver(a)}\n2. {vancouver(c)}"
        )
    if s == "paperqa":
        ka, kc = paperqa_key(a), paperqa_key(c)
        refs = [paperqa_entry(1, a, "1-2"), paperqa_entry(2, c, "2-3"), paperqa_entry(3, c, "5-6")]
        return (
            f"{a.claim} ({ka} pages 1-2). {c.claim} ({kc} pages 2-3, {kc} pages 5-6).\n\n"
            "References\n\n" + "\n\n".join(refs)
        )
    if s == "footnote":
        return f"{a.claim}[^1]. {c.claim}.[^2]\n\n[^1]: {vancouver(a)}\n[^2]: {vancouver(c)}"
    if s == "tool-list":
        first = 0 if spec.format == "numbered" else 1  # OpenScholar counts from 0
        return f"{a.claim} [{first}]. {c.claim} [{first + 2}]."
    raise ValueError(s)


# ------------------------------------------------------------------------------ formats


def _wrap(text: str, width: int, indent: str) -> list[str]:
    lines, cur = [], ""
    for w in text.split():
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return [*lines[:1], *(indent + ln for ln in [*lines[1:], cur])] if lines else [cur]


def _authors(p: Paper) -> str:
    return f"{p.surname} {p.initial}(1), {p.second} K(2)."


def pubmed_abstract(papers: tuple[Paper, ...]) -> str:
    """NCBI efetch ``db=pubmed rettype=abstract retmode=text``: numbered records, the
    citation line, title, authors, author information, abstract, copyright, then the ids."""
    out = []
    for i, p in enumerate(papers, 1):
        doi = f" doi: {p.doi}." if i == 1 else ""  # the citation line gives it or not
        lines = [f"{i}. {p.journal}. {p.year} Mar;12(3):101-9.{doi} Epub {p.year} Jan 4.", ""]
        lines += [p.title, "", _authors(p), ""]
        if i == 1:  # older records print no affiliations
            lines += [
                "Author information:",
                "(1)Department of Synthetic Medicine, Example University, Exampletown.",
                "(2)Institute of Examples, Exampletown.",
                "",
            ]
        if i != 2:
            lines += ["\n".join(_wrap(p.abstract, 80, "")), ""]
            if i == 1:
                lines += [f"Copyright © {p.year} The Authors.", ""]
            else:
                lines += ["Conflict of interest statement: None declared.", ""]
        lines += [f"DOI: {p.doi}", f"PMID: {p.pmid}  [Indexed for MEDLINE]"]
        out.append("\n".join(lines))
    return "\n\n\n".join(out) + "\n"


def medline(papers: tuple[Paper, ...]) -> str:
    """efetch ``rettype=medline``: ``TAG - value`` lines, continuations indented 6 spaces."""
    out = []
    for i, p in enumerate(papers, 1):
        lines = [f"PMID- {p.pmid}", "OWN - NLM", "STAT- MEDLINE", f"DP  - {p.year} Mar"]
        lines += _tagged("TI", p.title)
        lines += ["PG  - 101-9", f"LID - {p.doi} [doi]"]
        if i != 2:
            lines += _tagged("AB", p.abstract)
        lines += [
            f"FAU - {p.surname}, {p.given}",
            f"AU  - {p.surname} {p.initial}",
            f"FAU - {p.second}, Kim",
            f"AU  - {p.second} K",
            "LA  - eng",
            f"TA  - {p.journal}",
            f"AID - {p.doi} [doi]",
            f"SO  - {p.journal}. {p.year} Mar;12(3):101-9. doi: {p.doi}.",
        ]
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def _tagged(tag: str, text: str) -> list[str]:
    lines = _wrap(text, 82, "      ")
    return [f"{tag:<4}- {lines[0]}", *lines[1:]]


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pubmed_xml(papers: tuple[Paper, ...]) -> str:
    """efetch ``retmode=xml``: a ``PubmedArticleSet``."""
    arts = []
    for i, p in enumerate(papers, 1):
        abstract = f"<Abstract><AbstractText>{_xml(p.abstract)}</AbstractText></Abstract>"
        arts.append(
            '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
            f'<PMID Version="1">{p.pmid}</PMID><Article PubModel="Print"><Journal>'
            f"<Title>{p.journal}</Title><JournalIssue><PubDate><Year>{p.year}</Year></PubDate>"
            f"</JournalIssue></Journal><ArticleTitle>{_xml(p.title)}</ArticleTitle>"
            f"{abstract if i != 2 else ''}<AuthorList><Author><LastName>{p.surname}</LastName>"
            f"<Initials>{p.initial}</Initials></Author></AuthorList></Article></MedlineCitation>"
            "<PubmedData><ArticleIdList>"
            f'<ArticleId IdType="pubmed">{p.pmid}</ArticleId>'
            f'<ArticleId IdType="doi">{p.doi}</ArticleId>'
            "</ArticleIdList></PubmedData></PubmedArticle>"
        )
    return (
        '<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + "\n".join(arts) + "\n</PubmedArticleSet>\n"
    )


def europepmc_json(papers: tuple[Paper, ...]) -> str:
    rows = []
    for i, p in enumerate(papers, 1):
        row = {
            "id": p.pmid,
            "source": "MED",
            "pmid": p.pmid,
            "doi": p.doi,
            "title": p.title,
            "authorString": f"{p.surname} {p.initial}, {p.second} K.",
            "journalTitle": p.journal,
            "pubYear": p.year,
        }
        if i != 2:
            row["abstractText"] = p.abstract
        rows.append(row)
    return json.dumps({"version": "6.9", "hitCount": len(rows), "resultList": {"result": rows}})


def semantic_scholar_json(papers: tuple[Paper, ...]) -> str:
    rows = []
    for i, p in enumerate(papers, 1):
        rows.append(
            {
                "paperId": f"{int(p.pmid):040x}",
                "externalIds": {"PubMed": p.pmid, "DOI": p.doi},
                "title": p.title,
                "abstract": p.abstract if i != 2 else None,
                "year": int(p.year),
                "authors": [{"authorId": "1", "name": f"{p.given} {p.surname}"}],
            }
        )
    return json.dumps({"total": len(rows), "offset": 0, "data": rows})


def _inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, w in enumerate(text.split()):
        index.setdefault(w, []).append(i)
    return index


def openalex_json(papers: tuple[Paper, ...]) -> str:
    rows = []
    for i, p in enumerate(papers, 1):
        rows.append(
            {
                "id": f"https://openalex.org/W{p.pmid}",
                "doi": f"https://doi.org/{p.doi}",
                "title": p.title,
                "display_name": p.title,
                "publication_year": int(p.year),
                "ids": {
                    "openalex": f"https://openalex.org/W{p.pmid}",
                    "doi": f"https://doi.org/{p.doi}",
                    "pmid": f"https://pubmed.ncbi.nlm.nih.gov/{p.pmid}",
                },
                "authorships": [
                    {
                        "author_position": "first",
                        "author": {"display_name": f"{p.given} {p.surname}"},
                    }
                ],
                "abstract_inverted_index": _inverted(p.abstract) if i != 2 else None,
            }
        )
    return json.dumps({"meta": {"count": len(rows), "page": 1}, "results": rows})


def markdown(papers: tuple[Paper, ...]) -> str:
    out = [f"Found {len(papers)} results.\n"]
    for i, p in enumerate(papers, 1):
        out.append(
            f"### {i}. {p.title}\n*{p.surname} {p.initial}, {p.second} K. {p.journal}, "
            f"{p.year}.* PMID: [{p.pmid}](https://pubmed.ncbi.nlm.nih.gov/{p.pmid}/) · "
            f"DOI: [{p.doi}](https://doi.org/{p.doi})\n" + (f"\n{p.abstract}\n" if i != 2 else "")
        )
    return "\n".join(out)


def key_value(papers: tuple[Paper, ...]) -> str:
    """``Key: value`` blocks with the PMID LAST (the ids closing each block)."""
    out = []
    for i, p in enumerate(papers, 1):
        lines = [
            f"Title: {p.title}",
            f"Authors: {p.surname} {p.initial}, {p.second} K",
            f"Year: {p.year}",
        ]
        if i != 2:
            lines.append(f"Abstract: {p.abstract}")
        lines += [f"DOI: {p.doi}", f"PMID: {p.pmid}"]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def numbered(papers: tuple[Paper, ...]) -> str:
    """OpenScholar-style retrieved contexts, 0-based."""
    out = []
    for i, p in enumerate(papers):
        lines = [f"[{i}] Title: {p.title}", f"PMID: {p.pmid} | DOI: {p.doi}"]
        if i != 1:
            lines.append(f"Text: {p.abstract}")
        out.append("\n".join(lines))
    return "\n\n".join(out)


RENDER = {
    "pubmed-abstract": pubmed_abstract,
    "medline": medline,
    "pubmed-xml": pubmed_xml,
    "europepmc-json": europepmc_json,
    "semantic-scholar-json": semantic_scholar_json,
    "openalex-json": openalex_json,
    "markdown": markdown,
    "key-value": key_value,
    "numbered": numbered,
}


# ------------------------------------------------------------------------------ truth


@dataclass(frozen=True)
class Planted:
    """One planted citation, by construction: its sample, claim number, citation label, the
    L1 the PubMedQA corpus gives it, the record format its passage is read from and the paper
    whose abstract that passage is."""

    sample: str
    spelling: str
    format: str
    claim_no: int
    citation: str
    l1: str
    paper: Paper


def planted(specs: list[SampleSpec]) -> list[Planted]:
    """Every planted citation: two per sample (records 1 and 3), a DOI for the spellings whose
    reference lists give DOIs (author-year APA, PaperQA2), else the PMID."""
    out = []
    for s in specs:
        for no, p in enumerate(s.cited, 1):
            doi = s.spelling in ("author-year", "paperqa")
            label, l1 = (f"doi:{p.doi}", "unchecked") if doi else (f"PMID:{p.pmid}", "found")
            out.append(Planted(s.id, s.spelling, s.format, no, label, l1, p))
    return out


# ------------------------------------------------------------------------------ the task


def scripted_agent(specs: list[SampleSpec]) -> Any:
    from inspect_ai.model import ModelOutput

    by_question = {s.question: s for s in specs}

    def agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        spec = by_question[messages[0].text]
        if messages[-1].role == "user":
            args = {"query": spec.question}
            return ModelOutput.for_tool_call("mockllm/model", TOOL[spec.format], args)
        return ModelOutput.from_content("mockllm/model", answer(spec))

    return agent


def _search_tool(fmt: str, responses: dict[str, str]) -> Any:
    from inspect_ai.tool import ToolDef

    async def execute(query: str) -> str:
        return responses[query]

    return ToolDef(
        execute,
        name=TOOL[fmt],
        description=f"Search the literature; answers in the {fmt} format.",
        parameters={"query": "the search terms"},
    ).as_tool()


def formats_task(specs: list[SampleSpec]) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools

    tools = []
    for fmt in FORMATS:
        responses = {s.question: RENDER[fmt](s.papers) for s in specs if s.format == fmt}
        tools.append(_search_tool(fmt, responses))
    return Task(
        name="literature_formats",
        dataset=[Sample(input=s.question, target="PMID", id=s.id) for s in specs],
        solver=[use_tools(*tools), generate()],
        scorer=includes(),
        message_limit=6,
    )


def write_formats_log(log_dir: Path, raw: Path) -> tuple[Path, list[SampleSpec]]:
    """One eval of :func:`formats_task` written by inspect_ai into ``log_dir``; the log and the
    samples' specifications."""
    specs = sample_specs(raw)
    log = write_mock_log(formats_task(specs), scripted_agent(specs), log_dir)
    return log, specs
