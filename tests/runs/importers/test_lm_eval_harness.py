"""`kit import lm-eval` on samples files written by lm-evaluation-harness itself (slow).

lm-eval 0.4.13 (the optional ``lm-eval`` extra) runs, offline and in this process, two local
tasks over a tiny SYNTHETIC data set with a scripted model (:class:`ScriptedLM`, a subclass of
lm-eval's own ``LM``), and writes ``samples_<task>_<timestamp>.jsonl`` and
``results_<timestamp>.json`` with its own ``EvaluationTracker`` (what ``lm_eval --log_samples``
does). Expected counts, written down by hand:

* ``pqa_mc`` (multiple choice yes / no / maybe; the model gives the choice the question names
  the highest log-likelihood): 3 lines, 3 runs, answers ``yes``, ``maybe``, ``no``;
* ``pqa_gen`` (generation, two filters ``raw`` and ``upper``): 6 lines, 3 runs per import (one
  filter: ``raw`` by default, ``upper`` with --filter), one citation per run, 3 in all (not 6).

slow: 23-35 s measured on this shared 2-core machine (lm-eval's import and task loading dominate).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.runs.importers.lm_eval import import_lm_eval_samples
from kit.runs.reader import read_runs

pytestmark = pytest.mark.slow

# SYNTHETIC documents: the answer each question names, and what the model writes for it
DOCS = [
    {"question": "Pick yes: does aspirin lower risk?", "pick": "yes", "pmid": "21645374"},
    {"question": "Pick maybe: do statins cause X?", "pick": "maybe", "pmid": "9488747"},
    {"question": "Pick no: is Y linked to Z?", "pick": "no", "pmid": "21645374"},
]
CHOICES = ["yes", "no", "maybe"]
EXPECTED_MC = ["yes", "maybe", "no"]


def _answer(question: str) -> str:
    doc = next(d for d in DOCS if d["question"] in question)
    return f"{doc['pick'].capitalize()}: the trial reports it (PMID: {doc['pmid']})."


def _tasks(folder: Path) -> Path:
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d | {"choices": CHOICES}) + "\n" for d in DOCS))
    common = (
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\n'
    )
    (folder / "pqa_mc.yaml").write_text(
        "task: pqa_mc\n" + common + "output_type: multiple_choice\n"
        'doc_to_choice: "{{choices}}"\n'
        'doc_to_target: "{{choices.index(pick)}}"\n'
        "metric_list:\n  - metric: acc\n"
    )
    (folder / "pqa_gen.yaml").write_text(
        "task: pqa_gen\n" + common + "output_type: generate_until\n"
        'doc_to_target: "{{pick}}"\n'
        "generation_kwargs:\n  until: ['\\n']\n"
        "filter_list:\n"
        "  - name: raw\n    filter:\n      - function: take_first\n"
        "  - name: upper\n    filter:\n      - function: uppercase\n"
        "      - function: take_first\n"
        "metric_list:\n  - metric: exact_match\n"
    )
    return folder


def _run_lm_eval(root: Path) -> None:
    """lm-eval's simple_evaluate of both tasks with :class:`ScriptedLM`, saved by its own
    EvaluationTracker into ``root / "out"`` (what ``lm_eval --log_samples`` does)."""
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    class ScriptedLM(LM):
        """Deterministic: the choice the question names scores -0.1, the others -2.0; a
        generation answers the question's pick, citing the document's PMID."""

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            out = []
            for r in requests:
                context, continuation = r.args
                pick = next(d["pick"] for d in DOCS if d["question"] in context)
                out.append((-0.1 if continuation.strip() == pick else -2.0, False))
            return out

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            return [_answer(r.args[0]) for r in requests]

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> Any:
            raise NotImplementedError

    (root / "tasks").mkdir()
    tracker = EvaluationTracker(output_path=str(root / "out"))
    results = simple_evaluate(
        model=ScriptedLM(),
        tasks=["pqa_mc", "pqa_gen"],
        task_manager=TaskManager(include_path=str(_tasks(root / "tasks"))),
        log_samples=True,
        evaluation_tracker=tracker,
        bootstrap_iters=0,
    )
    assert results is not None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for name in results["configs"]:
        tracker.save_results_samples(task_name=name, samples=samples[name])


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("lm_eval")
    root = tmp_path_factory.mktemp("lm_eval")
    with pytest.MonkeyPatch.context() as mp:  # offline: the data set is a local JSON file
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        mp.setenv("HF_HUB_OFFLINE", "1")
        _run_lm_eval(root)
    files = sorted((root / "out").rglob("*.json*"))
    return {
        key: next(p for p in files if p.name.startswith(prefix))
        for key, prefix in (
            ("mc", "samples_pqa_mc_"),
            ("gen", "samples_pqa_gen_"),
            ("results", "results_"),
        )
    }


def test_multiple_choice_runs_answer_the_chosen_option(
    written: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "runs.jsonl"
    s = import_lm_eval_samples(written["mc"], out)
    assert (s.samples, s.written, s.failed) == (3, 3, 0)
    runs = read_runs(out).runs
    assert [r.answer for r in runs] == EXPECTED_MC
    model = json.loads(written["results"].read_text())["model_name"]
    assert all(r.model == model for r in runs)  # results_<same timestamp>.json
    assert [r.metadata["choice"] for r in runs] == [CHOICES.index(a) for a in EXPECTED_MC]
    assert all(r.scores == {"acc": 1.0} for r in runs)  # lm-eval agrees on the choice


def test_two_filters_give_one_run_per_document(written: dict[str, Path], tmp_path: Path) -> None:
    lines = written["gen"].read_text().splitlines()
    assert len(lines) == 6  # lm-eval wrote one line per (document, filter)
    out = tmp_path / "runs.jsonl"
    s = import_lm_eval_samples(written["gen"], out)
    assert (s.samples, s.written) == (6, 3) and "filter 'raw' imported" in s.notes[0]
    runs = read_runs(out).runs
    assert [r.answer for r in runs] == [_answer(d["question"]) for d in DOCS]
    assert sum(len(r.cited) for r in runs) == 3
    assert [c.label for r in runs for c in r.cited] == [f"PMID:{d['pmid']}" for d in DOCS]
    s = import_lm_eval_samples(written["gen"], out, filter_name="upper")
    assert (s.samples, s.written) == (6, 3)
    assert [r.answer for r in read_runs(out).runs] == [_answer(d["question"]).upper() for d in DOCS]
