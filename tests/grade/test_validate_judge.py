"""Issue 40 part 3 for the checklist judge: `kit grade validate-judge` writes its validation
against people's verdicts on its card.

The judge runs behind the real loopback server (tests/llm_server.py), whose verdicts, replies and
usage counts are predicted from its documented rules; the people's verdicts are the server's own
with three changed, so the agreement is known; kappa is checked against statsmodels.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from llm_server import judge_verdict, prompt_tokens, serve
from test_llm_judge import CHECKLISTS, RUNS, import_judge, invoke, ref_kappa

from kit.core.schema import validate_json
from kit.grade.judge_prompt import DEFAULT_TEMPLATE, render
from kit.grade.llm_judge import load_judge_card


def _examples() -> tuple[list[dict], dict[str, dict]]:
    runs = [json.loads(x) for x in RUNS.read_text().splitlines()]
    cls = {}
    for line in CHECKLISTS.read_text().splitlines():
        obj = json.loads(line)
        cls[obj["task_id"]] = obj
    return runs, cls


def _people(runs: list[dict], cls: dict[str, dict]) -> tuple[pd.DataFrame, int, int]:
    """People's verdicts of the first four runs (the server's, three changed), and the prompt
    and completion tokens one pass over those runs costs."""
    rows, p_tok, c_tok = [], 0, 0
    for run in runs[:4]:
        cl = cls[run["task_id"]]
        for c in cl["criteria"]:
            v, reason = judge_verdict(c["text"], run["answer"])
            p_tok += prompt_tokens(
                render(DEFAULT_TEMPLATE, cl["question"], c["text"], run["answer"])
            )
            c_tok += len(f"{v}: {reason}".split())
            rows.append(
                {
                    "judge": "people",
                    "model": run["model"],
                    "task_id": run["task_id"],
                    "criterion_id": c["id"],
                    "verdict": v,
                }
            )
    people = pd.DataFrame(rows)
    for i, new in ((0, "not_met"), (3, "met"), (7, "partial")):
        people.loc[i, "verdict"] = new if people.loc[i, "verdict"] != new else "not_met"
    return people, p_tok, c_tok


def test_judge_card_validated_on_peoples_verdicts(tmp_path: Path) -> None:
    runs, cls = _examples()
    assert all(r.get("tools_enabled", True) for r in runs[:4])
    people, p_tok, c_tok = _people(runs, cls)
    gold = tmp_path / "people.csv"
    people.to_csv(gold, index=False)
    out = tmp_path / "validated"
    with serve() as srv:
        assert import_judge(srv.url, tmp_path / "judge").exit_code == 0
        before = srv.state.chat
        res = invoke(
            "grade",
            "validate-judge",
            RUNS,
            "--checklists",
            CHECKLISTS,
            "--judge",
            tmp_path / "judge",
            "--gold",
            gold,
            "--n-boot",
            "200",
            "--out",
            out,
        )
        assert res.exit_code == 0, res.output
        n = len(people)
        assert srv.state.chat - before == 2 * n  # two passes over the graded runs only
    card = json.loads((out / "card.json").read_text())
    orig = json.loads((tmp_path / "judge" / "card.json").read_text())
    validate_json(card, "llm_judge_card", "card.json")
    assert card["instrument_sha256"] == orig["instrument_sha256"]
    assert load_judge_card(out)["validation"]["summary"] == card["validated_on"]
    v = card["validation"]
    assert v["instrument"]["kind"] == "llm-judge"
    assert v["gold"]["n_items"] == n and v["gold"]["unit"] == "(model, task, criterion) verdicts"
    rows = {r["level"]: r for r in v["agreement"]}
    assert set(rows) == {"criterion_met", "criterion_credit", "solved"}
    judge = np.array(
        [
            judge_verdict(c["text"], r["answer"])[0]
            for r in runs[:4]
            for c in cls[r["task_id"]]["criteria"]
        ]
    )
    met_j, met_p = judge == "met", (people["verdict"] == "met").to_numpy()
    row = rows["criterion_met"]
    assert row["n"] == n and row["n_clusters"] == 4
    assert row["rate_instrument"] == pytest.approx(met_j.mean())
    assert row["base_rate_gold"] == pytest.approx(met_p.mean())
    assert row["kappa"] == pytest.approx(ref_kappa(met_j, met_p))
    assert row["ci_method"] == "cluster-bootstrap (answers)"
    sc = v["self_consistency"]
    assert (sc["n_compared"], sc["flipped"], sc["flip_share"]) == (n, 0, 0.0)
    cost = v["cost"]
    assert cost["items"] == n and cost["requests"] == n and cost["questions"] == n
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (p_tok, c_tok)
    assert f"criterion_met: n {n}, base rate (people)" in res.output
    assert invoke("verify", "receipts", out).exit_code == 0


def test_validate_judge_refuses_gold_without_runs(tmp_path: Path) -> None:
    people = pd.DataFrame(
        [
            {
                "judge": "people",
                "model": "nobody",
                "task_id": "t1",
                "criterion_id": "c1",
                "verdict": "met",
            }
        ]
    )
    gold = tmp_path / "people.csv"
    people.to_csv(gold, index=False)
    with serve() as srv:
        assert import_judge(srv.url, tmp_path / "judge").exit_code == 0
        res = invoke(
            "grade",
            "validate-judge",
            RUNS,
            "--checklists",
            CHECKLISTS,
            "--judge",
            tmp_path / "judge",
            "--gold",
            gold,
            "--out",
            tmp_path / "out",
        )
    assert res.exit_code == 2 and "no_graded_runs" in res.output, res.output
    assert not (tmp_path / "out").exists()
