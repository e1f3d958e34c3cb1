"""A second scripted task of the inspect_ai regression corpus: answers that cite in every
spelling a lab's agent writes, a search tool that prints several records with the DOI LAST, a
title-only record, an uncited answer, a claim that contradicts its paper -- written at test time
by inspect_ai's own ``eval()`` with its offline ``mockllm/model`` (issue 36).

The search tool's records are real PubMedQA PQA-L items read from the registry at test time
(:func:`pubmedqa_records`: the PMID, the question as the title, the abstract as the kit's
PubMedQA corpus joins it), so the audit's PubMedQA corpus resolves their PMIDs. PubMedQA has no
DOIs: each record's DOI ``10.5555/<pmid>`` is SYNTHETIC (10.5555 is the DOI test prefix), as is
the title-only record (PMID :data:`TITLE_ONLY` is in no PubMedQA item) and the PMC id
:data:`PMC_UNREAD` (cited, read nowhere). Every tool response is :func:`format_records` of
:data:`SEARCH_ORDER` plus the title-only record::

    PMID: 21645374
    Title: <question>
    Abstract: <abstract>
    DOI: 10.5555/21645374

    PMID: 16418930
    ...
    PMID: 99999901
    Title: Bathing syncope in toddlers: a title-only record (synthetic)

Per log, one epoch of eight samples (the citations each answer gives, by hand):

=========== =============================================== ====== =========================
sample      answer cites (spelling)                         status citations
=========== =============================================== ====== =========================
s_bracket   [PMID: 21645374]; a PubMed URL in prose for     ok     2 PMID (both in the tool
            16418930 -- a claim that NEGATES an abstract           response)
            sentence of 16418930
s_legacy    the legacy ncbi.nlm.nih.gov/pubmed URL of        ok     1 PMID, 1 DOI (both read)
            9488747; a doi.org URL of 10.5555/17208539
s_same      (PMID: 17208539) and the bare DOI               ok     1 PMID, 1 DOI: ONE claim,
            10.5555/17208539 in one sentence                       ONE record (DOI last)
s_unread    [PMID: 23831910] (PubMedQA, not in the tool);   ok     2 PMID, 1 PMCID
            [PMID: 99999901] (the title-only record);
            (PMC9999901) (read nowhere)
s_refs      marker [1]; a References list whose entry is    ok     1 PMID (not in the tool)
            the PubMed URL of 10808977
s_uncited   no citation at all                              ok     0
s_outage    searches; the tool raises RuntimeError          error  none read
s_loop      searches again after every result               limit  none read (message limit)
=========== =============================================== ====== =========================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mock_inspect import write_mock_log

MESSAGE_LIMIT = 6
OUTAGE_MESSAGE = "search backend unavailable"

LACE, SNELLEN, BATH, PULL = "21645374", "16418930", "9488747", "17208539"  # in every response
ENTEROSCOPY, MAMMO = "23831910", "10808977"  # PubMedQA items the tool never prints
SEARCH_ORDER = (LACE, SNELLEN, BATH, PULL)
TITLE_ONLY = "99999901"  # SYNTHETIC: no PubMedQA item; the tool prints its title only
TITLE_ONLY_TITLE = "Bathing syncope in toddlers: a title-only record (synthetic)"
PMC_UNREAD = "PMC9999901"  # SYNTHETIC: cited, in no response and no corpus


def synthetic_doi(pmid: str) -> str:
    """The SYNTHETIC DOI the tool prints for a PubMedQA item (PubMedQA has no DOIs)."""
    return f"10.5555/{pmid}"


# the sentence of 16418930's abstract that the s_bracket answer negates ("small" -> "large")
NEGATED_SENTENCE = "Differences between Landolt C acuity (LR) and Snellen E acuity (SE) were small."
CONTRADICTION = "Differences between Landolt C acuity and Snellen E acuity were large"

QUESTIONS = {
    "s_bracket": "How do mitochondria behave in lace plant PCD, and do Landolt C and Snellen E "
    "acuity differ?",
    "s_legacy": "What explains syncope during bathing in infants, and how was continence "
    "after pull-through studied?",
    "s_same": "Is continence better after the abdominal or the transanal pull-through?",
    "s_unread": "Is double balloon enteroscopy safe in a community setting?",
    "s_refs": "Can tailored interventions increase mammography use?",
    "s_uncited": "What shapes the perforations of lace plant leaves?",
    "s_outage": "What does the outage study report?",
    "s_loop": "Keep searching: what does the loop study report?",
}

ANSWERS = {
    "s_bracket": "Mitochondria and chloroplasts move on transvacuolar strands during "
    f"programmed cell death in the lace plant [PMID: {LACE}]. {CONTRADICTION}, see "
    f"https://pubmed.ncbi.nlm.nih.gov/{SNELLEN}/.",
    "s_legacy": "Infants who turned pale and hypotonic on immersion in the bath may have a "
    f"pediatric form of aquagenic urticaria (https://www.ncbi.nlm.nih.gov/pubmed/{BATH}). "
    "The long-term outcome of the transanal pull-through was compared with the abdominal "
    f"approach in 41 patients, https://doi.org/{synthetic_doi(PULL)}.",
    "s_same": "The continence score was significantly better after the abdominal pull-through "
    f"than after the transanal one (PMID: {PULL}); its DOI is {synthetic_doi(PULL)}.",
    "s_unread": "Double balloon enteroscopy appears equally safe in a community setting "
    f"[PMID: {ENTEROSCOPY}]. Toddlers fainted in the bath [PMID: {TITLE_ONLY}]. Aquagenic "
    f"urticaria was also described in adults ({PMC_UNREAD}).",
    "s_refs": "Telephone counselling raised on-schedule mammography more than tailored print "
    "communications [1].\n\nReferences\n"
    f"1. Tailored interventions and mammography use. https://pubmed.ncbi.nlm.nih.gov/{MAMMO}/",
    "s_uncited": "Programmed cell death at the centre of each areole shapes the perforations "
    "of lace plant leaves.",
}


def pubmedqa_records(raw: Path) -> list[dict[str, str]]:
    """The search tool's records (module doc): PubMedQA items from the registry folder ``raw``
    with a SYNTHETIC DOI, then the SYNTHETIC title-only record."""
    from kit.grade.pubmedqa_corpus import build_corpus
    from kit.registry.loaders import pubmedqa_tables

    t = pubmedqa_tables(raw)
    corpus = build_corpus(t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"])
    title = dict(zip(t["pubmedqa_items"]["pmid"], t["pubmedqa_items"]["question"], strict=True))
    records = [
        {
            "PMID": p,
            "Title": title[p],
            "Abstract": corpus.abstract[p],
            "DOI": synthetic_doi(p),
        }
        for p in SEARCH_ORDER
    ]
    return [*records, {"PMID": TITLE_ONLY, "Title": TITLE_ONLY_TITLE}]


def format_records(records: list[dict[str, str]]) -> str:
    """The tool's response: one ``Key: value`` block per record, the DOI last."""
    return "\n\n".join("\n".join(f"{k}: {v}" for k, v in r.items()) for r in records)


def scripted_agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """mockllm's model: search first, then answer with :data:`ANSWERS`; s_loop searches again
    after every result (so it meets the message limit)."""
    from inspect_ai.model import ModelOutput

    question = messages[0].text
    if messages[-1].role == "user" or question.startswith("Keep searching"):
        return ModelOutput.for_tool_call("mockllm/model", "pubmed_search", {"query": question})
    sample = next(k for k, q in QUESTIONS.items() if q == question)
    return ModelOutput.from_content("mockllm/model", ANSWERS[sample])


def spellings_task(records: list[dict[str, str]], scorer: Any = None) -> Any:
    """The task (module doc), scored by ``scorer`` (default inspect_ai's ``includes()``)."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    response = format_records(records)

    @tool
    def pubmed_search():
        async def execute(query: str) -> str:
            """Search PubMed; returns PMID, Title, Abstract and DOI of each record.

            Args:
                query: the search terms
            """
            if "outage" in query:
                raise RuntimeError(OUTAGE_MESSAGE)
            return response

        return execute

    return Task(
        name="pubmed_spellings",
        dataset=[Sample(input=q, target="PMID", id=k) for k, q in QUESTIONS.items()],
        solver=[use_tools(pubmed_search()), generate()],
        scorer=includes() if scorer is None else scorer,
        message_limit=MESSAGE_LIMIT,
    )


def write_spellings_log(
    log_dir: Path, raw: Path, scorer: Any = None
) -> tuple[Path, list[dict[str, str]]]:
    """One eval of :func:`spellings_task` (scored by ``scorer``) written by inspect_ai into
    ``log_dir``; the log and the records its tool printed."""
    records = pubmedqa_records(raw)
    task = spellings_task(records, scorer)
    log = write_mock_log(task, scripted_agent, log_dir, fail_on_error=False)
    return log, records
