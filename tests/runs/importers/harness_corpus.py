"""A regression corpus of real harness outputs, written at test time by the harness itself.

:func:`write_inspect_corpus` runs a literature-review task with inspect_ai's own ``eval()`` and
its offline ``mockllm/model`` driven by a scripted agent (:func:`scripted_agent`), twice (a
rerun of the same task: two logs in one folder, as a lab's ``logs/`` holds). The agent calls a
PubMed-search-like tool whose records (PMID, Title, Abstract, DOI) come from
:data:`RECORDS`, a tiny SYNTHETIC set (construction-labelled: the PMIDs are real PubMedQA ids,
the titles, abstracts and DOIs are written here), then answers citing what it read.

Per log, four samples x 2 epochs = 8 runs; the expected fate of each, written down by hand:

=========== ============================================== ========= ======================
sample      what the scripted agent does                   status    answer / citations
=========== ============================================== ========= ======================
q_lace      searches, answers citing PMID 21645374         ok        ANSWERS["q_lace"]
q_snellen   searches, answers citing PMID 9488747          ok        ANSWERS["q_snellen"]
q_outage    searches; the tool raises RuntimeError         error     none read
q_loop      searches again after every result              limit     none read (message
                                                                     limit 6)
=========== ============================================== ========= ======================

so a log holds 4 ok, 2 error and 2 limit runs, and the folder of two logs 8, 4 and 4 (16 runs).
Citation spellings, records cut from the tool output and evidence kinds are exercised by the
second scripted task, :mod:`harness_spellings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mock_inspect import write_mock_log

MESSAGE_LIMIT = 6
EPOCHS = 2
OUTAGE_MESSAGE = "search backend unavailable"

# SYNTHETIC records (real PubMedQA PMIDs; titles, abstracts and DOIs written for this test)
RECORDS = {
    "lace": [
        {
            "PMID": "21645374",
            "Title": "Mitochondrial dynamics in lace plant programmed cell death",
            "Abstract": "Mitochondria aggregate around the nucleus on transvacuolar strands "
            "during developmental programmed cell death in the lace plant.",
            "DOI": "10.9999/synthetic.lace.1",
        }
    ],
    "snellen": [
        {
            "PMID": "9488747",
            "Title": "Landolt C and Snellen E acuity in amblyopic children",
            "Abstract": "Visual acuity measured with the Snellen E is higher than with the "
            "Landolt C: the Snellen E overestimates acuity.",
            "DOI": "10.9999/synthetic.snellen.2",
        }
    ],
}

QUESTIONS = {
    "q_lace": "What do mitochondria do in lace plant programmed cell death?",
    "q_snellen": "Does the Snellen E overestimate visual acuity compared with the Landolt C?",
    "q_outage": "What does the outage study report?",
    "q_loop": "Keep searching: what does the loop study report?",
}

ANSWERS = {
    "q_lace": "Mitochondria aggregate around the nucleus on transvacuolar strands during "
    "programmed cell death in the lace plant (PMID: 21645374).",
    "q_snellen": "The Snellen E overestimates visual acuity compared with the Landolt C "
    "(PMID: 9488747).",
}

# hand-written expectations (see the module docstring)
EXPECTED_PER_LOG = {"ok": 4, "error": 2, "limit": 2}
EXPECTED_CITED = {"q_lace": ["PMID:21645374"], "q_snellen": ["PMID:9488747"]}


def format_records(records: list[dict[str, str]]) -> str:
    """The tool's response: one block per record, as a PubMed search tool prints them."""
    return "\n\n".join(
        "\n".join(f"{k}: {r[k]}" for k in ("PMID", "Title", "Abstract", "DOI")) for r in records
    )


def _topic(query: str) -> str:
    return "lace" if "lace" in query else "snellen" if "Snellen" in query else "none"


def scripted_agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """mockllm's model: search first; then answer from what was read, except the q_loop
    question, which searches again after every result (so it meets the message limit)."""
    from inspect_ai.model import ModelOutput

    question = messages[0].text
    if messages[-1].role == "user" or question.startswith("Keep searching"):
        return ModelOutput.for_tool_call("mockllm/model", "pubmed_search", {"query": question})
    sample = next(k for k, q in QUESTIONS.items() if q == question)
    return ModelOutput.from_content("mockllm/model", ANSWERS[sample])


def review_task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def pubmed_search():
        async def execute(query: str) -> str:
            """Search PubMed; returns PMID, Title, Abstract and DOI of each record.

            Args:
                query: the search terms
            """
            if "outage" in query:
                raise RuntimeError(OUTAGE_MESSAGE)
            return format_records(RECORDS.get(_topic(query), []))

        return execute

    return Task(
        name="pubmed_review",
        dataset=[Sample(input=q, target="PMID", id=k) for k, q in QUESTIONS.items()],
        solver=[use_tools(pubmed_search()), generate()],
        scorer=includes(),
        message_limit=MESSAGE_LIMIT,
        epochs=EPOCHS,
    )


def write_inspect_corpus(log_dir: Path, runs: int = 2) -> list[Path]:
    """``runs`` evals of :func:`review_task` (reruns) written by inspect_ai into ``log_dir``."""
    return [
        write_mock_log(review_task(), scripted_agent, log_dir, fail_on_error=False)
        for _ in range(runs)
    ]
