"""An inspect_ai task scored by the kit's citation scorer, runnable offline (docs/inspect.md).

The model is inspect_ai's ``mockllm/model`` driven by a scripted agent (no network, no API key):
for each question it calls a PubMed search tool once, then answers. The tool prints two records
whose PMIDs are PubMedQA items (so the kit's built-in PubMedQA corpus resolves them); their
text is abridged from PubMedQA PQA-L (MIT). One answer cites the right paper for one claim and a
wrong, on-topic-elsewhere paper for another; one answer cites nothing. SYNTHETIC answers.

    inspect eval examples/inspect/citation_task.py -T verifier=DIR --log-dir LOGS

``-T`` passes the scorer's options (the names of ``kit audit``'s options): ``verifier`` (a card
folder or a built-in name), ``n_cal``, ``alpha``, ``corpus``, ``calibration``, ``seed``.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, tool

from kit.inspect_ext import citation_support

LACE, SNELLEN = "21645374", "16418930"  # PubMedQA PQA-L items
RECORDS = (
    f"PMID: {LACE}\n"
    "Title: Do mitochondria play a role in remodelling lace plant leaves during programmed cell "
    "death?\n"
    "Abstract: The lace plant (Aponogeton madagascariensis) produces perforations in its leaves "
    "through programmed cell death (PCD). PCD occurs in the cells at the center of the areoles "
    "and progresses outwards. Mitochondrial dynamics were followed during developmentally "
    "regulated PCD in vivo; mitochondria aggregated around the nucleus on transvacuolar strands "
    "before the cells died.\n\n"
    f"PMID: {SNELLEN}\n"
    "Title: Landolt C and snellen e acuity: differences in strabismus amblyopia?\n"
    "Abstract: Visual acuity measured with the Snellen E was compared to the Landolt C acuity in "
    "100 patients with various eye disorders, among them 39 with amblyopia due to strabismus."
)
QUESTIONS = {
    "lace": "How do lace plant leaves get their perforations?",
    "uncited": "What is an areole?",
}
ANSWERS = {
    "lace": "Lace plant leaves are perforated by programmed cell death that starts at the centre "
    f"of each areole [PMID: {LACE}]. Mitochondria aggregate around the nucleus before the cells "
    f"die [PMID: {SNELLEN}].",
    "uncited": "An areole is the space enclosed by the veins of a leaf.",
}


def scripted_agent(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """Search first, then answer the question with :data:`ANSWERS`. Each output states its
    token usage, so mockllm never counts tokens itself (its tokenizer would be downloaded)."""
    question = messages[0].text
    if messages[-1].role == "user":
        out = ModelOutput.for_tool_call("mockllm/model", "pubmed_search", {"query": question})
    else:
        sample = next(k for k, q in QUESTIONS.items() if q == question)
        out = ModelOutput.from_content("mockllm/model", ANSWERS[sample])
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


@tool
def pubmed_search() -> Tool:
    async def execute(query: str) -> str:
        """Search PubMed; returns the PMID, title and abstract of each record.

        Args:
            query: the search terms
        """
        return RECORDS

    return execute


@task
def citation_task(
    verifier: str = "minilm-nli",
    n_cal: int = 200,
    alpha: float | None = None,
    corpus: str = "pubmedqa",
    calibration: str = "pubmedqa-neighbours",
    seed: int = 0,
) -> Task:
    """Two questions, a search tool, the kit's citation scorer."""
    return Task(
        dataset=[Sample(input=q, id=k) for k, q in QUESTIONS.items()],
        solver=[use_tools(pubmed_search()), generate()],
        scorer=citation_support(
            verifier=verifier,
            n_cal=n_cal,
            alpha=alpha,
            corpus=corpus,
            calibration=calibration,
            seed=seed,
        ),
        model=get_model("mockllm/model", custom_outputs=scripted_agent),
    )
