"""Logs written by inspect_ai itself (offline mockllm): PaperQA2 keys and OpenScholar [0] markers
over a search tool's list reach the citation table on their claims (claim_no > 0), not only as
reference-list rows (claim_no 0) -- the measured defect: 75 of 75 PaperQA2 keys at claim_no 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from mock_inspect import write_mock_log

from kit.audit.claims import claim_rows
from kit.runs.importers.inspect_log import import_inspect_logs
from kit.runs.reader import read_runs

pytest.importorskip("inspect_ai")

PAPERQA = (
    "DNA computes neural networks (Qian2011Neural pages 1-2, Qian2011Neural pages 15-16). "
    "Seesaw gates scale up (Qian2011Scaling pages 3-4).\n\nReferences\n\n"
    '1. (Qian2011Neural pages 1-2): Qian, Lulu, Erik Winfree, and Jehoshua Bruck. "Neural '
    'network computation." Nature 475.7356 (2011): 368-372. doi:10.1038/nature10262\n'
    '2. (Qian2011Neural pages 15-16): Qian, Lulu, Erik Winfree, and Jehoshua Bruck. "Neural '
    'network computation." Nature 475.7356 (2011): 368-372. doi:10.1038/nature10262\n'
    '3. (Qian2011Scaling pages 3-4): Qian, Lulu, and Erik Winfree. "Scaling up." Science 332 '
    "(2011): 1196-1201. doi:10.1126/science.1200520\n"
)
OPENSCHOLAR = "Aspirin lowers stroke risk [0]. Coffee is safe [1]."
SEARCH = "[0] Aspirin and stroke. PMID: 111\n[1] Coffee and health. PMID: 222\n"


def test_paperqa_and_openscholar_markers_reach_their_claims(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def search():
        async def execute(query: str) -> str:
            """Search the literature.

            Args:
                query: what to search for
            """
            return SEARCH

        return execute

    outputs = [
        ModelOutput.from_content("mockllm/model", PAPERQA),
        ModelOutput.for_tool_call("mockllm/model", "search", {"query": "aspirin"}),
        ModelOutput.from_content("mockllm/model", OPENSCHOLAR),
    ]
    task = Task(
        dataset=[Sample(input="DNA?", id="paperqa"), Sample(input="Aspirin?", id="openscholar")],
        solver=[use_tools(search()), generate()],
    )
    log = write_mock_log(task, outputs, tmp_path, max_samples=1)
    out = tmp_path / "runs.jsonl"
    import_inspect_logs(log, out)
    rows = claim_rows(read_runs(out).runs).rows
    got = sorted(zip(rows["task_id"], rows["claim_no"], rows["citation"], strict=True))
    assert got == [
        ("openscholar", 1, "PMID:111"),
        ("openscholar", 2, "PMID:222"),
        ("paperqa", 1, "doi:10.1038/nature10262"),
        ("paperqa", 2, "doi:10.1126/science.1200520"),
    ]
