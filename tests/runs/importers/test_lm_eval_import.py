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
from kit.core.errors import ConfigError, InputError
from kit.runs.importers.lm_eval import import_lm_eval_samples
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


# -- issue 36: the chosen option, one filter, null responses, several results files ----------
# Lines as lm-eval 0.4.13 writes them (their shape checked against a file lm-eval 0.4.13 wrote
# with its dummy model here: log-likelihoods as text pairs, one line per (doc, filter)); the
# harness-written corpus itself is tests/runs/importers/test_lm_eval_harness.py (slow).

MC_NAME = "samples_pqa_mc_2026-12-04T18-57-26.030034.jsonl"
GEN_NAME = "samples_pqa_gen_2026-12-04T18-57-26.030034.jsonl"
RESULTS = "results_2026-12-04T18-57-26.030034.json"
CHOICES = ["yes", "no", "maybe"]


def _mc_line(doc_id: int, lls: list[float]) -> dict:
    prompt = f"Question: q{doc_id}\nAnswer:"
    return {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}", "choices": CHOICES, "label": 0},
        "target": "0",
        "arguments": {
            f"gen_args_{i}": {"arg_0": prompt, "arg_1": f" {c}"} for i, c in enumerate(CHOICES)
        },
        "resps": [[[str(v), "False"]] for v in lls],
        "filtered_resps": [[str(v), "False"] for v in lls],
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": "d" * 64,
        "prompt_hash": "e" * 64,
        "target_hash": "f" * 64,
        "acc": 1.0,
    }


def _gen_line(doc_id: int, filt: str, text: str) -> dict:
    return _line(doc_id, text, 0.0) | {"filter": filt, "resps": [["raw"]]}


def _write(folder: Path, name: str, rows: list[dict], model: str = "org/m") -> Path:
    p = folder / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / RESULTS).write_text(json.dumps({"model_name": model}))
    return p


def test_multiple_choice_answer_is_the_chosen_option(tmp_path: Path) -> None:
    # by hand: doc 0 -> "no" (-0.2 is the largest), doc 1 -> "maybe", doc 2 -> "yes"
    lls = [[-0.9, -0.2, -0.5], [-1.5, -1.25, -0.75], [-0.1, -0.3, -2.0]]
    p = _write(tmp_path, MC_NAME, [_mc_line(i, v) for i, v in enumerate(lls)])
    out = tmp_path / "runs.jsonl"
    s = import_lm_eval_samples(p, out)
    assert (s.samples, s.written) == (3, 3)
    runs = read_runs(out).runs
    assert [r.answer for r in runs] == ["no", "maybe", "yes"]
    assert [r.metadata["choice"] for r in runs] == [1, 2, 0]
    assert runs[0].metadata["loglikelihoods"] == [-0.9, -0.2, -0.5]
    assert runs[0].metadata["choices"] == CHOICES


def test_two_filters_import_one_run_per_document(tmp_path: Path) -> None:
    texts = {0: "Aspirin lowers risk (PMID: 123).", 1: "Statins do (PMID: 456).", 2: "No."}
    rows = [_gen_line(i, "raw", t) for i, t in texts.items()]
    rows += [_gen_line(i, "upper", t.upper()) for i, t in texts.items()]
    p = _write(tmp_path, GEN_NAME, rows)
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "lm-eval", str(p), "--out", str(out), "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "filter 'raw' imported (3 runs); the lines of filter(s) upper" in r.output
    runs = read_runs(out).runs
    assert [x.run_id for x in runs] == ["pqa_gen:0:raw", "pqa_gen:1:raw", "pqa_gen:2:raw"]
    assert [x.answer for x in runs] == list(texts.values())
    assert sum(len(x.cited) for x in runs) == 2  # each citation once, not once per filter
    assert {x.metadata["filter"] for x in runs} == {"raw"}
    s = import_lm_eval_samples(p, out, filter_name="upper")
    assert (s.samples, s.written) == (6, 3)
    assert [x.answer for x in read_runs(out).runs] == [t.upper() for t in texts.values()]
    with pytest.raises(ConfigError, match="raw, upper"):
        import_lm_eval_samples(p, out, filter_name="strict")
    dup = _write(tmp_path, GEN_NAME, [*rows, rows[1]])
    with pytest.raises(InputError) as exc:
        import_lm_eval_samples(dup, out)
    assert (exc.value.reason, exc.value.where.row) == ("duplicate_run_id", 7)


@pytest.mark.parametrize("bad", [None, [], [None]])
def test_null_filtered_resps_is_refused_naming_file_line_and_field(
    tmp_path: Path, bad: object
) -> None:
    rows = [_gen_line(0, "none", "fine"), _gen_line(1, "none", "x") | {"filtered_resps": bad}]
    p = _write(tmp_path, GEN_NAME, rows)
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "lm-eval", str(p), "--out", str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{p}, row 2, column 'filtered_resps'" in r.output
    assert not out.exists()


def test_several_results_files_pick_the_same_run_or_refuse_naming_them(tmp_path: Path) -> None:
    p = _write(tmp_path, GEN_NAME, [_gen_line(0, "none", "fine")], model="same-run")
    (tmp_path / "results_2026-01-01T00-00-00.000001.json").write_text(
        json.dumps({"model_name": "older-run"})
    )
    out = tmp_path / "runs.jsonl"
    import_lm_eval_samples(p, out)
    assert read_runs(out).runs[0].model == "same-run"  # results_<the samples' timestamp>.json
    (tmp_path / RESULTS).unlink()
    (tmp_path / "results_2026-02-02T00-00-00.000002.json").write_text(
        json.dumps({"model_name": "third"})
    )
    with pytest.raises(ConfigError) as exc:
        import_lm_eval_samples(p, out)
    msg = str(exc.value)
    assert "results_2026-01-01T00-00-00.000001.json" in msg and "--model" in msg
    assert "results_2026-02-02T00-00-00.000002.json" in msg
    r = CliRunner().invoke(cli, ["import", "lm-eval", str(p), "--out", str(out)])
    assert r.exit_code == 2 and "none has its timestamp" in r.output
