"""Write examples/byo/logs/byo-example.eval: a real inspect_ai log of a SYNTHETIC agent.

The log is written by inspect_ai itself, offline: its ``mockllm/model`` plays a literature agent
that answers three questions about the invented compound ZX-17, fetching documents from
``examples/byo/docs/`` with a tool and citing them by DOI (the ``10.5555`` prefix is reserved
for examples and names no real paper). Every answer, document and finding is SYNTHETIC, written
for the kit's "Bring your own agent" walk-through; the answers are scripted so that the audit has
something to find: a supported claim, a claim its cited document contradicts, an off-topic
citation and a DOI outside the corpus.

Run from the repository root (needs the ``import`` extra, i.e. inspect-ai):

    .venv/bin/python examples/byo/make_log.py

The committed ``byo-example.eval`` is one output of this script; a rerun writes a new log with a
new eval id and timestamps (inspect_ai records them), the same samples and answers.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
OUT = HERE / "logs" / "byo-example.eval"

ANSWERS = {
    "q1": "ZX-17 reduced tumour volume by about 40% in mice after four weeks "
    "(doi:10.5555/byo.0001).",
    "q2": "ZX-17 improved overall survival in the phase-2 trial (doi:10.5555/byo.0002). "
    "It was well tolerated at doses up to 30 mg/kg [1].\n\n"
    "References\n[1] Dose-finding study of ZX-17. doi:10.5555/byo.0003",
    "q3": "Nitrogen-fixing soil bacteria limit the highest dose of ZX-17 "
    "(doi:10.5555/byo.0004). A confirmatory study found the same limit "
    "(doi:10.5555/byo.0099).",
}


def document_text(doi: str) -> str:
    """The text of the example document with this DOI (file names percent-encode the '/')."""
    path = DOCS / (doi.replace("/", "%2F") + ".txt")
    if not path.is_file():
        return f"No document with DOI {doi}."
    return path.read_text(encoding="utf-8")


def main() -> int:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    from kit.core import atomic

    @tool
    def fetch_document():
        async def execute(doi: str) -> str:
            """Fetch a document of the lab's corpus by DOI.

            Args:
                doi: the document's DOI
            """
            return document_text(doi)

        return execute

    model = "mockllm/model"
    outputs = [  # consumed in order: samples run one at a time (max_samples=1)
        ModelOutput.for_tool_call(model, "fetch_document", {"doi": "10.5555/byo.0001"}),
        ModelOutput.from_content(model, ANSWERS["q1"]),
        ModelOutput.from_content(model, ANSWERS["q2"]),
        ModelOutput.for_tool_call(model, "fetch_document", {"doi": "10.5555/byo.0004"}),
        ModelOutput.from_content(model, ANSWERS["q3"]),
    ]
    task = Task(
        name="byo-example",
        dataset=[
            Sample(id="q1", input="Does ZX-17 shrink tumours in animal models?", target="40%"),
            Sample(id="q2", input="Does ZX-17 improve survival, and at what dose?", target="30"),
            Sample(id="q3", input="What limits the dose of ZX-17?", target="liver"),
        ],
        solver=[use_tools(fetch_document()), generate()],
        scorer=includes(),
    )
    with tempfile.TemporaryDirectory() as tmp:
        # mockllm counts input tokens with tiktoken, which downloads its encoding on first use;
        # to stay offline the count is replaced by a constant (as in
        # tests/runs/importers/test_inspect_import.py).
        with mock.patch("inspect_ai.model._model.count_text_tokens", return_value=7):
            [log] = inspect_eval(
                task,
                model=get_model(model, custom_outputs=outputs),
                log_dir=tmp,
                log_format="eval",
                display="none",
                max_samples=1,
            )
        if log.status != "success":
            print(f"make_log: inspect_ai eval ended with status {log.status}", file=sys.stderr)
            return 1
        atomic.write_bytes(OUT, Path(log.location).read_bytes())
    print(f"make_log: wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
