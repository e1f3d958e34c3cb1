"""Behaviour rates, the replay cache (miss behaviour), frozen core and churn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kit.core.errors import IntegrityError
from kit.grade.behaviour import behaviour_rates, lexical_non_attempt, run_behaviour
from kit.grade.frozen_core import all_roster_fail, churn, decode_agreement
from kit.grade.replay import (
    ReplayMiss,
    ReplayTools,
    load_cache,
    replay_coverage,
    request_key,
    save_cache,
)
from kit.runs.model import AgentRun, Citation, ToolCall


def _run(
    rid: str,
    model: str,
    calls: int,
    enabled: bool = True,
    answer: str = "A long and substantive answer about aspirin and stroke.",
    cited: bool = True,
    diff: str = "core",
) -> AgentRun:
    tc = tuple(ToolCall("pubmed_search", {"q": str(i)}, None, "ok") for i in range(calls))
    return AgentRun(
        rid,
        "t" + rid,
        model,
        answer,
        (Citation("PMID", "1"),) if cited else (),
        tc,
        enabled,
        difficulty=diff,
    )


def test_behaviour_rates_and_tool_disabled_arm() -> None:
    runs = [
        _run("1", "m", 0),
        _run("2", "m", 3),
        _run("3", "m", 0, answer="I cannot answer this question.", cited=False),
        _run("4", "m", 1, diff="easy"),
        _run("5", "m", 0, enabled=False),
        _run("6", "m", 0, enabled=False, cited=False),
    ]
    per = run_behaviour(runs)
    assert per["zero_tool"].tolist() == [True, False, True, False, False, False]
    rates = behaviour_rates(per).set_index(["model", "difficulty", "arm"])
    tools = rates.loc[("m", "all", "tools")]
    assert tools.n_runs == 4 and tools.zero_tool_k == 2 and tools.zero_tool_rate == 0.5
    assert tools.non_attempt_rate == 0.25 and tools.cites_rate == 0.75
    assert tools.tool_calls_mean == 1.0 and tools.tool_calls_median == 0.5
    off = rates.loc[("m", "all", "no_tools")]
    assert off.n_runs == 2 and np.isnan(off.zero_tool_rate)  # not "agents that skipped tools"
    assert off.cites_rate == 0.5
    assert rates.loc[("m", "core", "tools")].n_runs == 3


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("", True),
        ("Too short.", True),
        ("I was unable to find relevant information on this question at all.", True),
        ("No relevant evidence was found in the literature for this question.", True),
        ("Aspirin reduces recurrent stroke risk by about a fifth in secondary prevention.", False),
    ],
)
def test_non_attempt_detector(answer: str, want: bool) -> None:
    assert lexical_non_attempt(answer) is want


def test_replay_record_then_replay_and_loud_miss(tmp_path: Path) -> None:
    live_calls = []

    def live(tool: str, args: dict) -> dict:
        live_calls.append((tool, args))
        return {"hits": [args["q"].upper()]}

    rec = ReplayTools("record", live=live)
    assert rec("search", {"q": "aspirin", "n": 5}) == {"hits": ["ASPIRIN"]}
    assert rec("search", {"n": 5, "q": "aspirin"}) == {"hits": ["ASPIRIN"]}  # same key
    assert len(live_calls) == 1 and rec.hits == 1
    path = save_cache(tmp_path / "cache.jsonl", rec.cache)
    rep = ReplayTools("replay", load_cache(path))
    assert rep("search", {"q": "aspirin", "n": 5}) == {"hits": ["ASPIRIN"]}
    with pytest.raises(ReplayMiss) as ei:
        rep("search", {"q": "statins", "n": 5})
    msg = ei.value.message
    assert (
        "'search'" in msg
        and '"q":"statins"' in msg
        and request_key("search", {"q": "statins", "n": 5}) in msg
    )
    assert len(live_calls) == 1  # replay never calls live tools


def test_cache_integrity_and_coverage(tmp_path: Path) -> None:
    rec = ReplayTools("record", live=lambda t, a: {"ok": True})
    rec("fetch", {"pmid": "1"})
    path = save_cache(tmp_path / "c.jsonl", rec.cache)
    text = path.read_text().replace('"pmid":"1"', '"pmid":"2"')
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(IntegrityError, match="not the hash of its request"):
        load_cache(bad)
    from kit.grade.replay import response_sha256

    run = AgentRun(
        "r",
        "t",
        "m",
        "a",
        (),
        (
            ToolCall("fetch", {"pmid": "1"}, response_sha256({"ok": True}), "ok"),
            ToolCall("fetch", {"pmid": "3"}, None, "ok"),
        ),
        True,
    )
    cov = replay_coverage([run], load_cache(path))
    assert cov["in_cache"].tolist() == [True, False]
    assert cov["response_match"].tolist()[0] is True and pd.isna(cov["response_match"].iloc[1])


def test_frozen_core_and_churn() -> None:
    roster = ["a", "b", "c"]
    rows = []
    scores = {
        "q1": (0.1, 0.2, 0.3),
        "q2": (0.6, 0.1, 0.1),
        "q3": (0.49, 0.0, 0.4999),
        "q4": (0.5, 0.0, 0.0),
    }
    for q, v in scores.items():
        rows += [{"task_id": q, "model": m, "score": s} for m, s in zip(roster, v, strict=True)]
    rows.append({"task_id": "q5", "model": "a", "score": 0.0})  # incomplete
    core = all_roster_fail(pd.DataFrame(rows), roster)
    assert core.members == ("q1", "q3") and core.n_incomplete == 1 and core.n_tasks == 5
    ch = churn(core.members, ("q3", "q4", "q6"))
    assert (ch.n_both, ch.only_a, ch.only_b) == (1, ("q1",), ("q4", "q6"))
    assert ch.jaccard == pytest.approx(1 / 4) and ch.retention == 0.5 and ch.flip_rate == 0.75
    assert np.isnan(churn((), ()).jaccard)
    first = pd.DataFrame(rows[:12])
    second = first.assign(score=first["score"].where(first["task_id"] != "q2", 0.0))
    ag = decode_agreement(first, second).set_index("model")
    assert ag.loc["a", "fail_agreement"] == 0.75 and ag.loc["a", "mean_abs_delta"] == pytest.approx(
        0.15
    )


def test_unfinished_runs_are_counted_apart_never_as_non_attempts() -> None:
    from dataclasses import replace

    runs = [
        _run("1", "m", 2),
        _run("2", "m", 0, answer="I cannot answer this question.", cited=False),
        replace(_run("3", "m", 1, answer="", cited=False), status="error", error="boom"),
        replace(
            _run("4", "m", 5, answer="tool call", cited=False), status="limit", limit="message"
        ),
        replace(_run("5", "m", 0, answer="", cited=False), status="error", error="early"),
    ]
    per = run_behaviour(runs)
    assert per["status"].tolist() == ["ok", "ok", "error", "limit", "error"]
    assert per["non_attempt"].tolist() == [False, True, False, False, False]
    assert per["zero_tool"].tolist() == [False, True, False, False, False]
    tools = (
        behaviour_rates(per).set_index(["model", "difficulty", "arm"]).loc[("m", "all", "tools")]
    )
    assert (tools.n_runs, tools.n_error, tools.n_limit) == (5, 2, 1)
    # by hand: over the 2 finished runs, 1 non-attempt, 1 zero-tool, 1 citing, calls 2 and 0
    assert tools.non_attempt_rate == 0.5 and tools.zero_tool_rate == 0.5 and tools.cites_rate == 0.5
    assert tools.tool_calls_mean == 1.0
    only_failed = behaviour_rates(run_behaviour(runs[2:3])).iloc[0]
    assert only_failed.n_runs == 1 and np.isnan(only_failed.non_attempt_rate)
