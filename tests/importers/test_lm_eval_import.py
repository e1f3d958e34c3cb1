"""`kit import lm-eval` on a samples file written from lm-eval's documented sample fields.

A real lm-eval run was not made here (see docs/runs.md): the fixture lines carry the fields
lm-eval's --log_samples writes (doc_id, doc, target, arguments, resps, filtered_resps, filter,
metrics and the metric values, doc_hash, prompt_hash, target_hash).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.errors import ConfigError, InputError
from kit.importers.lm_eval import import_lm_eval_samples
from kit.runs.reader import read_runs

NAME = "samples_pubmedqa_2026-01-02T03-04-05.678901.jsonl"


def _line(doc_id: int, answer: object, exact: float) -> dict:
    return {
        "doc_id": doc_id,
        "doc": {"QUESTION": f"q{doc_id}", "final_decision": "yes"},
        "target": "yes",
        "arguments": {"gen_args_0": {"arg_0": f"prompt {doc_id}", "arg_1": {"until": ["\n"]}}},
        "resps": [[answer]],
        "filtered_resps": [answer],
        "filter": "none",
        "metrics": ["exact_match"],
        "doc_hash": "a" * 64,
        "prompt_hash": "b" * 64,
        "target_hash": "c" * 64,
        "exact_match": exact,
    }


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    p = tmp_path / NAME
    rows = [
        _line(0, "yes. Aspirin lowers risk (PMID: 123). The range [10, 20] mg was safe.", 1.0),
        _line(1, "no", 0.0),
        _line(2, ["-1.25", True], 0.0),  # a log-likelihood response
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "results_2026-01-02T03-04-05.678901.json").write_text(
        json.dumps({"model_name": "org/model-7b", "results": {}})
    )
    return p


def test_import_maps_lines(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "lm-eval", str(samples), "--out", str(out)])
    assert r.exit_code == 0, r.output
    runs = read_runs(out).runs
    assert [x.run_id for x in runs] == ["pubmedqa:0:none", "pubmedqa:1:none", "pubmedqa:2:none"]
    first = runs[0]
    assert first.model == "org/model-7b" and first.task_id == "pubmedqa:0"
    assert [c.label for c in first.cited] == ["PMID:123"]
    assert [c.cites for c in first.claims] == [(), ("PMID:123",), ()]
    assert first.scores == {"exact_match": 1.0} and runs[1].scores == {"exact_match": 0.0}
    assert first.metadata["doc_hash"] == "a" * 64 and first.metadata["task"] == "pubmedqa"
    assert not first.tools_enabled and first.tool_calls == ()
    assert json.loads(runs[2].answer) == ["-1.25", True]


def test_limit_model_and_task_options(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    s = import_lm_eval_samples(samples, out, model="other", task="pqa", limit=1)
    assert (s.samples, s.written, s.failed) == (3, 1, 0)
    [run] = read_runs(out).runs
    assert (run.model, run.run_id) == ("other", "pqa:0:none")


def test_errors_name_line_and_field(samples: Path, tmp_path: Path) -> None:
    lines = samples.read_text().splitlines()
    bad = json.loads(lines[1])
    del bad["filtered_resps"]
    samples.write_text("\n".join([lines[0], json.dumps(bad)]) + "\n")
    with pytest.raises(InputError) as exc:
        import_lm_eval_samples(samples, tmp_path / "o.jsonl")
    assert (exc.value.where.row, exc.value.where.column) == (2, "filtered_resps")
    listed = json.loads(lines[0]) | {"metrics": ["exact_match", "f1"]}
    samples.write_text(json.dumps(listed) + "\n")
    with pytest.raises(InputError) as exc:
        import_lm_eval_samples(samples, tmp_path / "o.jsonl")
    assert (exc.value.where.row, exc.value.where.column) == (1, "f1")
    odd = tmp_path / "mine.jsonl"
    odd.write_text(lines[0] + "\n")
    with pytest.raises(ConfigError, match="--task"):
        import_lm_eval_samples(odd, tmp_path / "o.jsonl", model="m")
    (tmp_path / "results_2026-01-02T03-04-05.678901.json").unlink()
    with pytest.raises(ConfigError, match="--model"):
        import_lm_eval_samples(odd, tmp_path / "o.jsonl", task="t")
    r = CliRunner().invoke(cli, ["import", "lm-eval", str(odd), "--out", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 2 and "Traceback" not in r.output
