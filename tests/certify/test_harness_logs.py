"""`kit certify LOGS`: a certified comparison straight from harness logs (docs/certify.md,
"From harness logs").

The inspect_ai logs are written inside the tests by inspect_ai's own ``eval()`` with its offline
``mockllm`` provider playing three scripted SYNTHETIC models (examples/certify/harness_logs.py:
40 questions of 10 papers, 2 epochs, ``match()``; expected scores written down there by hand:
syn-strong 0.90, syn-mid 0.75 with half-right samples, syn-weak 0.20 with one errored sample).
The lm-eval samples files are written to the shape lm-eval 0.4.13 writes (as in
tests/runs/importers/test_lm_eval_import.py), with a results_<timestamp>.json per run.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kit.certify.design import Design
from kit.certify.run import CertifyRequest, LogRequest, certify_input
from kit.cli import cli
from kit.core.errors import ConfigError

pytest.importorskip("inspect_ai")

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "examples" / "certify" / "design_logs.yaml"
STRONG, MID, WEAK = "mockllm/syn-strong", "mockllm/syn-mid", "mockllm/syn-weak"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location(
        "harness_logs_example", ROOT / "examples" / "certify" / "harness_logs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three models' logs (one folder), and one variant log of syn-weak per refusal."""
    root = tmp_path_factory.mktemp("harness")
    base = dict(zip(EXAMPLE.MODELS, EXAMPLE.write_logs(root / "base"), strict=True))
    out = {"base": root / "base"}
    variants = {
        "samples": {"changed": 5},  # one target rewritten: the datasets' samples differ
        "scorer": {"scorer": "includes"},
        "name": {"dataset_name": "syn_paper_qa_v2"},
    }
    for key, variant in variants.items():
        folder = root / key
        folder.mkdir()
        for model in ("syn-strong", "syn-mid"):
            shutil.copy(base[model], folder / base[model].name)
        EXAMPLE.write_logs(folder, ("syn-weak",), **variant)
        out[key] = folder
    return out


def _certify(args: list[str]) -> Any:
    return CliRunner().invoke(cli, ["certify", *args, "--design", str(DESIGN), "--no-figure"])


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _pair(rows: list[dict[str, str]], a: str, b: str, readout: str) -> dict[str, str]:
    a, b = sorted((a, b))
    return next(r for r in rows if (r["system_a"], r["system_b"], r["readout"]) == (a, b, readout))


def test_three_models_certify_in_one_command(logs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "cert"
    r = _certify([str(logs["base"]), "--cluster-column", "paper", "--out", str(out)])
    assert r.exit_code == 0, r.output
    for name in ("pairs.csv", "ranks.csv", "ranks.md", "ranks.tex", "means.csv", "unpaired.csv"):
        assert (out / name).is_file(), name
    pairs = _rows(out / "pairs.csv")
    assert len(pairs) == 6  # 3 pairs x (match + composite)
    for readout in ("match", "composite"):
        big = _pair(pairs, STRONG, WEAK, readout)  # the planted large difference
        assert (big["verdict"], big["winner"], big["reason"]) == ("certified", STRONG, "exact")
        assert big["n_clusters"] == "10"
    ranks = {r["system"]: (r["rank_lo"], r["rank_hi"]) for r in _rows(out / "ranks.csv")}
    assert ranks[WEAK] == ("3", "3")
    unpaired = _rows(out / "unpaired.csv")
    assert {"p_unpaired", "se_unpaired", "significant_unpaired", "verdict", "gap_paired"} <= set(
        unpaired[0]
    )
    assert all(r["readout"] == "match" for r in unpaired) and len(unpaired) == 3
    means = {r["system"]: r for r in _rows(out / "means.csv")}
    assert {s: means[s]["mean"][:5] for s in means} == {
        STRONG: "0.9",
        MID: "0.75",
        WEAK: "0.205",  # 8 right of the 39 scored samples
    }
    assert "samples independent" in means[STRONG]["method"]
    assert "beside conventional (unpaired z, samples independent)" in r.output
    assert "clusters from sample metadata field 'paper': K = 10" in r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pairs refused from declared conditions"] == 0


def test_epochs_are_averaged_and_a_failed_sample_is_counted(logs: dict[str, Path]) -> None:
    board = certify_input(
        [logs["base"]], Design(), None, None, CertifyRequest(), LogRequest(score="match")
    )
    f = board.frame.set_index(["system", "task_id"])
    assert f.loc[(MID, "q00"), "score"] == 1.0  # right in both epochs
    assert f.loc[(MID, "q01"), "score"] == 0.5  # right in its first epoch only
    assert bool(f.loc[(WEAK, "q39"), "failed"])  # its model raised: error in both epochs
    assert int(board.frame["failed"].sum()) == 1
    pairs = board.result.pairs
    row = pairs[(pairs["system_a"] == MID) & (pairs["system_b"] == WEAK)].iloc[0]
    assert (row["n_failed_b"], row["n_common"]) == (1, 39)
    assert board.harness is not None
    logs_table = board.harness.logs.set_index("system")
    assert logs_table.loc[WEAK, "n_error"] == 2 and logs_table.loc[WEAK, "epochs"] == 2
    assert any("mean of its epochs" in n for n in board.notes)
    assert any("each sample is its own cluster (K = 40)" in n for n in board.notes)


def test_a_pair_whose_datasets_differ_is_refused_naming_the_field(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cert"
    r = _certify([str(logs["samples"]), "--cluster-column", "paper", "--out", str(out)])
    assert r.exit_code == 0, r.output
    pairs = _rows(out / "pairs.csv")
    for other in (STRONG, MID):
        row = _pair(pairs, other, WEAK, "match")
        assert row["verdict"] == "refused"
        assert row["reason"].startswith("condition_differs: dataset.samples")
        assert "1 of 40 common samples differ, first 'q05'" in row["reason"]
        assert f"{WEAK} = sha256 " in row["reason"] and f"{other} = sha256 " in row["reason"]
    assert _pair(pairs, STRONG, MID, "match")["reason"] == "exact"
    assert "refused before any score was read: condition_differs: dataset.samples" in r.output


def test_a_pair_whose_scorers_differ_is_refused_naming_both(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cert"
    r = _certify([str(logs["scorer"]), "--out", str(out), "--score", "match"])
    # syn-weak's log has no scorer 'match': the score named is not in every log
    assert r.exit_code == 2 and "names no scorer" in r.output and "includes" in r.output
    board = certify_input(
        sorted(logs["scorer"].iterdir()), Design(), None, None, CertifyRequest(), LogRequest()
    )
    pairs = board.result.pairs
    refused = pairs[pairs["verdict"] == "refused"]
    assert len(refused) == 4  # (strong, weak) and (mid, weak), each readout
    assert set(refused["readout"]) == {"score", "composite"}  # each log's only scorer
    reason = str(refused["reason"].iloc[0])
    assert reason.startswith("condition_differs: scorers: ")
    assert '"name": "includes"' in reason and '"name": "match"' in reason
    assert any("the logs' scorers differ (includes, match)" in n for n in board.notes)


def test_a_folder_mixing_datasets_exits_2_naming_the_field(logs: dict[str, Path]) -> None:
    r = _certify([str(logs["name"]), "--out", "unused"])
    assert r.exit_code == 2, r.output
    assert "dataset.name differs" in r.output and "'syn_paper_qa_v2'" in r.output
    assert "None" in r.output and "Traceback" not in r.output


def test_log_options_on_a_score_table_exit_2(tmp_path: Path) -> None:
    table = ROOT / "examples" / "certify" / "plain_scores.csv"
    r = _certify([str(table), "--score", "match", "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "--score" in r.output
    with pytest.raises(ConfigError, match="2 score tables"):
        certify_input([table, table], Design(), None, None, CertifyRequest())


# -- lm-evaluation-harness --------------------------------------------------------------------

STAMP = "2026-12-04T18-57-26.030034"
N_DOCS = 30


def _lm_config(num_fewshot: int) -> dict[str, Any]:
    """configs[task] of a results_*.json, as lm-eval 0.4 writes it (the fields kit reads)."""
    return {
        "task": "pqa_mc",
        "dataset_path": "json",
        "dataset_name": None,
        "test_split": "test",
        "doc_to_text": "Question: {{question}}\nAnswer:",
        "doc_to_target": "{{label}}",
        "doc_to_choice": "{{choices}}",
        "description": "",
        "target_delimiter": " ",
        "fewshot_delimiter": "\n\n",
        "num_fewshot": num_fewshot,
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "output_type": "multiple_choice",
        "repeats": 1,
        "metadata": {"version": 1.0},
    }


def _lm_line(doc_id: int, acc: float) -> dict[str, Any]:
    choices = ["yes", "no"]
    prompt = f"Question: q{doc_id}\nAnswer:"
    lls = [-0.1, -2.0] if acc else [-2.0, -0.1]
    return {
        "doc_id": doc_id,
        "doc": {
            "question": f"q{doc_id}",
            "choices": choices,
            "label": 0,
            "source": f"s{doc_id % 6}",
        },
        "target": "0",
        "arguments": {
            f"gen_args_{i}": {"arg_0": prompt, "arg_1": f" {c}"} for i, c in enumerate(choices)
        },
        "resps": [[[str(v), "False"]] for v in lls],
        "filtered_resps": [[str(v), "False"] for v in lls],
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": f"{doc_id:064x}",
        "prompt_hash": f"{doc_id + 1000:064x}",
        "target_hash": "f" * 64,
        "acc": acc,
    }


def _lm_run(root: Path, model: str, right: int, num_fewshot: int = 0) -> None:
    """lm-eval's output folder of one model: samples_pqa_mc_<stamp>.jsonl (the first ``right``
    documents answered right) and results_<stamp>.json."""
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True)
    lines = [_lm_line(i, 1.0 if i < right else 0.0) for i in range(N_DOCS)]
    (folder / f"samples_pqa_mc_{STAMP}.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    results = {
        "results": {"pqa_mc": {"alias": "pqa_mc", "acc,none": right / N_DOCS}},
        "configs": {"pqa_mc": _lm_config(num_fewshot)},
        "versions": {"pqa_mc": 1.0},
        "n-shot": {"pqa_mc": num_fewshot},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
    }
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results))


def test_lm_eval_samples_certify_and_refuse_a_fewshot_change(tmp_path: Path) -> None:
    root = tmp_path / "lm"
    _lm_run(root, "org/big", 28)
    _lm_run(root, "org/mid", 20)
    _lm_run(root, "org/small", 6, num_fewshot=5)  # another protocol: 5-shot
    out = tmp_path / "cert"
    r = _certify([str(root), "--cluster-column", "source", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "3 lm-eval logs of task 'pqa_mc', score 'acc'" in r.output
    pairs = _rows(out / "pairs.csv")
    assert _pair(pairs, "org/big", "org/mid", "acc")["reason"] == "exact"
    for other in ("org/big", "org/mid"):
        row = _pair(pairs, other, "org/small", "acc")
        assert row["verdict"] == "refused"
        assert row["reason"] == (
            f"condition_differs: solver.num_fewshot: {other} = 0, org/small = 5"
        )
    big = _pair(pairs, "org/big", "org/small", "acc")
    assert big["n_common"] == "30" and big["n_clusters"] == "6"
    means = {m["system"]: float(m["mean"]) for m in _rows(out / "means.csv")}
    assert means == pytest.approx({"org/big": 28 / 30, "org/mid": 20 / 30, "org/small": 0.2})
    conditions = _rows(out / "conditions.csv")
    assert {c["field"] for c in conditions if c["all_equal"] == "False"} == {"solver"}


def test_one_folder_or_file_and_bad_inputs_exit_2(logs: dict[str, Path], tmp_path: Path) -> None:
    """SCORES is one path (a folder of logs, one log, or a score table): several paths are a
    usage error (put the logs in one folder); the folder is recorded in context.json, its
    files' sha256 in logs.csv."""
    files = sorted(str(p) for p in logs["base"].iterdir())
    r = _certify([*files[:2], "--out", str(tmp_path / "two")])
    assert r.exit_code == 2 and not (tmp_path / "two").exists(), r.output
    out = tmp_path / "cert"
    r = _certify([str(logs["base"]), "--out", str(out)])
    assert r.exit_code == 0, r.output
    context = json.loads((out / "context.json").read_text())
    assert context["parameters"]["scores"] == str(logs["base"])
    listed = (out / "logs.csv").read_text()
    assert all(Path(f).name in listed for f in files)
    r = _certify([str(logs["base"]), "--cluster-column", "chapter", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "no usable metadata field 'chapter'" in r.output
    assert ".eval" in r.output  # the file is named
    again = tmp_path / "again"
    again.mkdir()
    for f in files[:2]:
        shutil.copy(f, again / Path(f).name)
    shutil.copy(files[0], again / "copy.eval")
    r = _certify([str(again), "--out", str(tmp_path / "y")])
    assert r.exit_code == 2 and "has two logs" in r.output
