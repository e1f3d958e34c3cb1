"""`kit import inspect-ai` on logs written by inspect_ai itself (its offline mockllm model).

The logs are produced inside the test: a tiny task whose mock model calls a tool, answers with
citations, and a sample whose solver fails. Nothing here is hand-written JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mock_inspect import write_mock_log

from kit.cli import cli
from kit.core.errors import InputError
from kit.runs.reader import read_runs

inspect_ai = pytest.importorskip("inspect_ai")

ANSWER_1 = (
    "Mitochondria surround the nucleus in lace plant PCD (PMID: 21645374). "
    "Doses in the range [10, 20] mg were not tested."
)
ANSWER_2 = (
    "The Snellen E overestimates visual acuity [1].\n\nReferences\n"
    "[1] Hered RW et al. (1997) Landolt C and Snellen E. PMID: 9488747"
)
TOOL_TEXT = "Abstract 21645374: mitochondria aggregate around the nucleus in lace plant PCD."


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import includes
    from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
    from inspect_ai.tool import tool

    @tool
    def pubmed_fetch():
        async def execute(pmid: str) -> str:
            """Fetch a PubMed abstract.

            Args:
                pmid: the PubMed id
            """
            return TOOL_TEXT.replace("21645374", pmid)

        return execute

    @solver
    def fail_on(sample_id: str):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.sample_id == sample_id:
                raise RuntimeError("tool server down")
            return state

        return solve

    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "pubmed_fetch", {"pmid": "21645374"}),
        ModelOutput.from_content("mockllm/model", ANSWER_1),
        ModelOutput.from_content("mockllm/model", ANSWER_2),
    ]
    task = Task(
        dataset=[
            Sample(input="What do mitochondria do in lace plant PCD?", target="nucleus", id="t1"),
            Sample(input="Snellen E or Landolt C?", target="overestimates", id="t2"),
            Sample(input="A sample whose tool server fails", target="x", id="t3"),
        ],
        solver=[fail_on("t3"), use_tools(pubmed_fetch()), generate()],
        scorer=includes(),
    )
    out = tmp_path_factory.mktemp("inspect_logs")
    eval_path = write_mock_log(task, outputs, out / "eval", max_samples=1, fail_on_error=False)
    json_path = out / "json" / (eval_path.stem + ".json")
    json_path.parent.mkdir()
    write_eval_log(read_eval_log(str(eval_path)), str(json_path), format="json")
    return {"eval": eval_path, "json": json_path}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_import_maps_answers_tool_results_scores_and_failures(
    logs: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(
        cli, ["import", "inspect-ai", str(logs[fmt]), "--out", str(out), "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    head, row = r.output.strip().splitlines()[-2:]
    summary = dict(zip(head.split(","), row.split(","), strict=True))
    assert (summary["samples"], summary["written"], summary["failed"]) == ("3", "3", "1")
    runs = {r.task_id: r for r in read_runs(out).runs}
    assert set(runs) == {"t1", "t2", "t3"}
    t1, t2, t3 = runs["t1"], runs["t2"], runs["t3"]
    assert t1.model == "mockllm/model" and t1.answer == ANSWER_1
    [call] = t1.tool_calls
    assert (call.tool, dict(call.arguments), call.status) == (
        "pubmed_fetch",
        {"pmid": "21645374"},
        "ok",
    )
    assert call.response_text == TOOL_TEXT
    assert [c.label for c in t1.cited] == ["PMID:21645374"]
    assert [c.cites for c in t1.claims] == [("PMID:21645374",), ()]  # [10, 20] mg is no citation
    assert t1.scores == {"includes": "C"} and t2.scores == {"includes": "C"}
    assert t1.prompt_tokens is not None and t1.completion_tokens is not None
    assert t1.metadata["harness"] == "inspect_ai" and t1.metadata["epoch"] == 1
    assert t1.metadata["harness_version"] == inspect_ai.__version__
    assert [c.label for c in t2.cited] == ["PMID:9488747"] and t2.tool_calls == ()
    assert t3.failed and "tool server down" in (t3.error or "") and t3.answer == ""
    raw = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(x["format_version"] == 2 for x in raw)


def test_limit_and_folder(logs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    args = ["import", "inspect-ai", str(logs["eval"].parent), "--out", str(out), "--limit", "2"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert len(read_runs(out).runs) == 2
    bad = CliRunner().invoke(cli, [*args[:-1], "0"])
    assert bad.exit_code == 2


def test_not_a_log_exits_2(tmp_path: Path) -> None:
    from kit.runs.importers.inspect_log import import_inspect_logs

    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    with pytest.raises(InputError) as exc:
        import_inspect_logs(p, tmp_path / "o.jsonl")
    assert exc.value.reason == "bad_inspect_log" and exc.value.where.file == str(p)
    r = CliRunner().invoke(
        cli, ["import", "inspect-ai", str(p), "--out", str(tmp_path / "o.jsonl")]
    )
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert not (tmp_path / "o.jsonl").exists()


def test_an_eval_that_errored_as_a_whole_counts_the_samples_it_never_ran(
    tmp_path: Path,
) -> None:
    """inspect_ai stops an eval at its first sample error (fail_on_error by default): the
    samples it had not run are absent from the log. Four samples x two epochs, one sample at a
    time, sample "b" raises: the log holds a (ok), b (error) and c (cancelled with it); the 5
    sample-epochs never run are imported as error runs naming the eval's fate, never dropped
    (the defect: 3 runs written, nothing said of the other 5)."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import includes
    from inspect_ai.solver import solver

    @solver
    def explode_on_b():  # type: ignore[no-untyped-def]
        async def solve(state, generate):  # type: ignore[no-untyped-def]
            if state.sample_id == "b":
                raise RuntimeError("solver exploded")
            return await generate(state)

        return solve

    task = Task(
        name="whole_error",
        dataset=[Sample(input="q", id=k) for k in "abcd"],
        solver=[explode_on_b()],
        scorer=includes(),
        epochs=2,
    )
    outputs = [ModelOutput.from_content("mockllm/model", "an answer")] * 8
    log = write_mock_log(task, outputs, tmp_path / "logs", max_samples=1)
    header = read_eval_log(str(log))
    assert header.status == "error"
    logged = {(s.id, s.epoch) for s in header.samples or []}
    assert len(logged) < 8
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "inspect-ai", str(log), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "never run" in r.output
    runs = {(x.task_id, x.metadata["epoch"]): x for x in read_runs(out).runs}
    assert set(runs) == {(k, e) for k in "abcd" for e in (1, 2)}  # every sample-epoch
    never = [x for key, x in runs.items() if key not in logged]
    assert len(never) == 8 - len(logged)
    assert all(x.status == "error" and x.metadata["not_run"] for x in never)
    assert all("solver exploded" in (x.error or "") for x in never)
    assert runs[("b", 1)].status == "error" and "not_run" not in runs[("b", 1)].metadata
    assert runs[("a", 1)].status == "ok"
