"""Issue 40 part 1: LLM verifiers selected by card, through a real loopback OpenAI-compatible server.

The server (tests/llm_server.py) is a real ThreadingHTTPServer on 127.0.0.1 speaking the
chat-completions protocol with log-probabilities; its synthetic judge's P(yes) is a word-overlap
share, so every score is predicted independently here (:func:`expected`).
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from llm_server import MODEL, p_yes, serve

from kit.cli import cli
from kit.core.errors import ConfigError
from kit.core.schema import validate_json
from kit.guard.scoring.windows import passage_windows
from kit.guard.verifiers.llm.client import backoff_schedule
from kit.guard.verifiers.llm.instrument import instrument_sha256
from kit.guard.verifiers.llm.prompt import (
    DEFAULT_TEMPLATE,
    check_template,
    render,
    yes_probability,
    yes_share,
)
from kit.guard.verifiers.llm.verifier import LLM_WINDOW, PINNED, LlmVerifier
from kit.guard.verifiers.load import load_verifier

TOPICS = [
    ("aspirin", "stroke", "adults"),
    ("metformin", "glucose", "diabetes"),
    ("statins", "cholesterol", "patients"),
    ("vaccination", "measles", "children"),
    ("exercise", "depression", "elderly"),
    ("smoking", "cancer", "lungs"),
    ("vitamin", "fractures", "women"),
    ("insulin", "ketoacidosis", "teenagers"),
    ("antibiotics", "pneumonia", "infants"),
    ("caffeine", "alertness", "students"),
    ("melatonin", "insomnia", "workers"),
    ("lithium", "suicide", "bipolar"),
]


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def pair_table(path: Path) -> Path:
    """Synthetic labelled pairs: each claim with its own passage (entailment) and with another
    topic's passage (neutral)."""
    rows = []
    for i, (drug, outcome, who) in enumerate(TOPICS):
        claim = f"{drug.capitalize()} reduces {outcome} in {who}."
        own = (
            f"We studied {who} in a cohort. {drug.capitalize()} reduced {outcome} markedly. "
            f"The effect held across sites."
        )
        d2, o2, w2 = TOPICS[(i + 5) % len(TOPICS)]
        other = f"We studied {w2} in a cohort. {d2.capitalize()} changed {o2}. Nothing else."
        rows.append({"pair_id": f"p{i}", "claim": claim, "passage": own, "label": "entailment"})
        rows.append({"pair_id": f"n{i}", "claim": claim, "passage": other, "label": "neutral"})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def expected(claim: str, passage: str) -> float:
    return max(p_yes(claim, w) for w in passage_windows(passage, LLM_WINDOW))


def import_card(url: str, out: Path, *extra: object) -> Result:
    return invoke(
        "guard", "import-verifier", "--base-url", url, "--model", MODEL, "--out", out, *extra
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- pure rules


def test_yes_probability_normalises_over_yes_and_no_case_insensitively() -> None:
    top = [
        {"token": "Yes", "logprob": math.log(0.5)},
        {"token": " yes", "logprob": math.log(0.1)},
        {"token": "NO.", "logprob": math.log(0.2)},
        {"token": "maybe", "logprob": math.log(0.2)},
    ]
    assert yes_probability(top) == pytest.approx(0.6 / 0.8)
    assert yes_probability([{"token": "Sorry", "logprob": -0.1}]) is None  # refused
    assert yes_probability([]) is None
    assert yes_share(["Yes.", "no", "yes, it does", "I cannot"]) == pytest.approx(2 / 3)
    assert yes_share(["I cannot", ""]) is None
    assert backoff_schedule(3, 0.5) == (0.5, 1.0, 2.0)


def test_prompt_slots_are_filled_once_and_braces_stay_text() -> None:
    text = render(DEFAULT_TEMPLATE, "a {passage} claim", "a {claim} passage")
    assert "Claim: a {passage} claim\n\nPassage: a {claim} passage\n" in text
    assert render("{passage}|{claim}", "c", "p") == "p|c"
    with pytest.raises(ConfigError, match="exactly once"):
        check_template("Claim: {claim}")


# ----------------------------------------------------------------------------- import


def test_import_pins_model_endpoint_prompt_decoding_and_rule_never_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_KEY", "sk-secret-123")
    with serve() as srv:
        res = import_card(srv.url, tmp_path / "card", "--api-key-env", "LAB_KEY")
        assert res.exit_code == 0, res.output
        assert srv.state.models == 1 and srv.state.chat == 1  # one probe, one question
        assert srv.state.auth == {"Bearer sk-secret-123"}
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    validate_json(card, "llm_verifier_card")
    assert card["kind"] == "llm" and card["model"] == MODEL and card["base_url"] == srv.url
    assert card["prompt_template"] == DEFAULT_TEMPLATE
    assert card["prompt_sha256"] == hashlib.sha256(DEFAULT_TEMPLATE.encode()).hexdigest()
    assert card["decoding"] == {"temperature": 0, "max_tokens": 3, "top_logprobs": 20}
    assert card["answer_rule"]["method"] == "logprobs"
    assert "P(yes) / (P(yes) + P(no))" in card["answer_rule"]["rule"]
    assert card["api_key_env"] == "LAB_KEY"
    assert card["instrument_sha256"] == instrument_sha256(card, PINNED)
    for p in (tmp_path / "card").rglob("*"):
        if p.is_file():
            assert b"sk-secret" not in p.read_bytes(), p
    shown = invoke("guard", "card", "--verifier", tmp_path / "card")
    assert shown.exit_code == 0, shown.output
    assert card["instrument_sha256"] in shown.output and "sk-secret" not in shown.output
    shown = invoke("guard", "card", "--verifier", tmp_path / "card", "--format", "json")
    assert json.loads(shown.stdout)["card"]["model"] == MODEL
    # the sha256 covers every pinned field: another prompt is another instrument
    alt = tmp_path / "alt.txt"
    alt.write_text(DEFAULT_TEMPLATE.replace("one word", "a single word"))
    with serve() as srv2:
        srv_url = srv2.url
        assert import_card(srv_url, tmp_path / "card2", "--prompt", alt).exit_code == 0
    card2 = json.loads((tmp_path / "card2" / "card.json").read_text())
    assert card2["prompt_sha256"] != card["prompt_sha256"]
    assert card2["instrument_sha256"] != card["instrument_sha256"]
    # an edited pinned field is refused at load
    card["decoding"]["max_tokens"] = 9
    (tmp_path / "card" / "card.json").write_text(json.dumps(card))
    from kit.core.errors import IntegrityError

    with pytest.raises(IntegrityError, match="instrument sha256"):
        load_verifier(tmp_path / "card")


def test_unreachable_endpoint_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    res = import_card(url, tmp_path / "card")
    assert res.exit_code == 2 and "cannot be reached" in res.output, res.output
    assert not (tmp_path / "card").exists()
    with serve() as srv:
        # a model the endpoint does not serve: exit 2, nothing written
        res = invoke(
            "guard",
            "import-verifier",
            "--base-url",
            srv.url,
            "--model",
            "nope",
            "--out",
            tmp_path / "card",
        )
        assert res.exit_code == 2 and "http 404" in res.output, res.output
        assert not (tmp_path / "card").exists()
        # an endpoint that needs a key the environment does not hold: exit 2, nothing written
        srv.state.key = "sk-right"
        res = import_card(srv.url, tmp_path / "card", "--api-key-env", "KIT_TEST_NO_SUCH_KEY")
        assert res.exit_code == 2 and "KIT_TEST_NO_SUCH_KEY" in res.output, res.output
        assert not (tmp_path / "card").exists()
    # a card whose server has gone: `kit guard score` exits 2; no table, no store entry
    with serve() as srv:
        assert import_card(srv.url, tmp_path / "card").exit_code == 0
    pairs = pair_table(tmp_path / "pairs.csv")
    store = tmp_path / "store"
    out = tmp_path / "scores.csv"
    res = invoke(
        "guard", "score", pairs, "--verifier", tmp_path / "card", "--cache-dir", store, "--out", out
    )
    assert res.exit_code == 2 and "cannot be reached" in res.output, res.output
    assert not out.exists() and not list(store.rglob("*.parquet"))


# ----------------------------------------------------------------------------- end to end


def test_score_evaluate_calibrate_panel_run_through_a_loopback_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    monkeypatch.setenv("KIT_CACHE_DIR", str(store))
    pairs = pair_table(tmp_path / "pairs.csv")
    frame = pd.read_csv(pairs)
    card = tmp_path / "card"
    with serve() as srv:
        assert import_card(srv.url, card, "--concurrency", "3").exit_code == 0
        asked = srv.state.chat
        out1 = tmp_path / "s1.csv"
        res = invoke("guard", "score", pairs, "--verifier", card, "--out", out1)
        assert res.exit_code == 0, res.output
        assert 1 <= srv.state.max_inflight <= 3  # bounded concurrency
        n_windows = sum(len(passage_windows(p, LLM_WINDOW)) for p in frame["passage"])
        assert srv.state.chat - asked == n_windows  # one question per (claim, window)
        assert f"{n_windows} (claim, window) question(s) asked" in res.output
        scored = pd.read_csv(out1)
        want = [expected(c, p) for c, p in zip(frame["claim"], frame["passage"], strict=True)]
        assert np.allclose(scored["score"], want, atol=1e-9)
        pos = scored["label"] == "entailment"
        assert scored.loc[pos, "score"].min() > scored.loc[~pos, "score"].max()
        # the second run asks the model nothing (no probe either) and writes the same bytes
        before = (srv.state.chat, srv.state.models)
        out2 = tmp_path / "s2.csv"
        res = invoke("guard", "score", pairs, "--verifier", card, "--out", out2)
        assert res.exit_code == 0, res.output
        assert (srv.state.chat, srv.state.models) == before
        assert out1.read_bytes() == out2.read_bytes()
        assert "0 scored" in res.output and "0 (claim, window) question(s)" in res.output
        res = invoke("guard", "compare", out1, out2, "--n-boot", "50")
        assert res.exit_code == 0, res.output
        # evaluate, calibrate, panel and run: every score from the store, no call
        res = invoke("guard", "evaluate", out1, "--n-boot", "200")
        assert res.exit_code == 0, res.output
        assert "auc entailment vs unsupported: 1.000" in res.output
        cal = tmp_path / "cal.json"
        res = invoke(
            "guard", "calibrate", pairs, "--verifier", card, "--alpha", "0.2", "--out", cal
        )
        assert res.exit_code == 0, res.output
        art = json.loads(cal.read_text())
        sha = json.loads((card / "card.json").read_text())["instrument_sha256"]
        # an honest field: an LLM card has no ONNX file (issue 40 E)
        assert art["verifier"]["instrument_sha256"] == sha and "onnx_sha256" not in art["verifier"]
        assert art["tau"] == pytest.approx(np.sort(scored.loc[~pos, "score"])[-2])
        res = invoke(
            "guard",
            "panel",
            pairs,
            "--verifier",
            card,
            "--verifier",
            card,
            "--tau",
            "0.5",
            "--n-boot",
            "50",
            "--out",
            tmp_path / "panel",
        )
        assert res.exit_code == 0, res.output
        answers = tmp_path / "answers.jsonl"
        rec = {
            "answer_id": "a1",
            "answer": f"{frame['claim'][0]} [1]",
            "passages": {"1": frame["passage"][0]},
        }
        answers.write_text(json.dumps(rec) + "\n")
        res = invoke(
            "guard",
            "run",
            answers,
            "--calibration",
            cal,
            "--verifier",
            card,
            "--out",
            tmp_path / "guarded",
        )
        assert res.exit_code == 0, res.output
        summary = json.loads((tmp_path / "guarded" / "summary.json").read_text())
        assert summary["verifier"]["instrument_sha256"] == sha
        assert "onnx_sha256" not in summary["verifier"]
        assert (srv.state.chat, srv.state.models) == before


def test_samples_rule_when_the_endpoint_returns_no_logprobs(tmp_path: Path) -> None:
    pairs = pair_table(tmp_path / "pairs.csv")
    with serve("nologprobs") as srv:
        res = import_card(srv.url, tmp_path / "card", "--samples", "4")
        assert res.exit_code == 0, res.output
        card = json.loads((tmp_path / "card" / "card.json").read_text())
        assert card["answer_rule"]["method"] == "samples" and card["answer_rule"]["k"] == 4
        assert card["decoding"]["seeds"] == "0..3" and "share of yes" in card["scoring_rule"]
        out = tmp_path / "s.csv"
        res = invoke(
            "guard", "score", pairs, "--verifier", tmp_path / "card", "--no-cache", "--out", out
        )
        assert res.exit_code == 0, res.output
    s = pd.read_csv(out)
    assert set(np.round(s["score"] * 4, 9)) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    pos = s["label"] == "entailment"
    assert s.loc[pos, "score"].mean() > s.loc[~pos, "score"].mean() + 0.4


@pytest.mark.parametrize(("mode", "reason"), [("error500", "http 500"), ("slow", "timeout")])
def test_failed_calls_are_counted_never_numbers(tmp_path: Path, mode: str, reason: str) -> None:
    pairs = pair_table(tmp_path / "pairs.csv")
    store, out = tmp_path / "store", tmp_path / "s.csv"
    with serve() as srv:
        args = ("--retries", "2", "--backoff", "0", "--timeout", "0.3", "--concurrency", "8")
        assert import_card(srv.url, tmp_path / "card", *args).exit_code == 0
        srv.state.mode = mode
        asked = srv.state.chat
        res = invoke(
            "guard",
            "score",
            pairs,
            "--verifier",
            tmp_path / "card",
            "--cache-dir",
            store,
            "--out",
            out,
        )
        assert res.exit_code == 2, res.output
        assert "gave no score" in res.output and reason in res.output
        assert "24 of 24" in " ".join(res.output.split())
        srv.settle()  # timed-out requests are still served, late
        assert srv.state.chat - asked == 24 * 3  # 1 + 2 retries on HTTP 5xx / timeout
        assert not out.exists() and not list(store.rglob("*.parquet"))
        # the server recovers: a 429 is retried and the run completes
        srv.state.mode = "flaky"
        srv.state.attempts.clear()
        res = invoke(
            "guard",
            "score",
            pairs,
            "--verifier",
            tmp_path / "card",
            "--cache-dir",
            store,
            "--out",
            out,
        )
        assert res.exit_code == 0, res.output
        assert "24 request(s) retried, 0 without a score" in res.output
    assert pd.read_csv(out)["score"].notna().all()


def test_a_partial_failure_keeps_the_answered_and_asks_only_the_rest(tmp_path: Path) -> None:
    """Answered (claim, window) scores are stored before the run stops; a rerun asks only
    the failed ones."""
    with serve() as srv:
        assert import_card(srv.url, tmp_path / "card", "--retries", "0").exit_code == 0
        card = json.loads((tmp_path / "card" / "card.json").read_text())
        srv.state.mode = "flaky"  # first request of each prompt: 429, no retry -> failed
        v = LlmVerifier(card, tmp_path / "store")
        claims, passages = ["aspirin reduces stroke"], ["Aspirin reduced stroke."]
        with pytest.raises(Exception, match="1 of 1") as exc:
            v.score(claims, passages)
        assert getattr(exc.value, "reason", "") == "llm_calls_failed"
        srv.state.mode = "logprobs"
        v.score(["statins lower cholesterol"], ["Statins lowered cholesterol."])
        srv.state.mode = "flaky"  # the failed prompt's second request succeeds now
        asked = srv.state.chat
        v2 = LlmVerifier(card, tmp_path / "store")
        s = v2.score(
            [*claims, "statins lower cholesterol"], [*passages, "Statins lowered cholesterol."]
        )
        assert srv.state.chat - asked == 1  # only the failed one is asked again
        assert s[0] == pytest.approx(p_yes(claims[0], passages[0]))


@pytest.mark.parametrize("mode", ["refuse", "filter"])
def test_refused_questions_are_missing_scores_never_numbers(tmp_path: Path, mode: str) -> None:
    """Issue 40 F: an endpoint that deterministically refuses a question (no yes / no; HTTP
    400 or finish_reason content_filter) does not stop the command: the pair's score is empty
    with score_status refused, counted on the console, asked once (no retry), not stored, and
    left out (counted) by evaluate and compare."""
    pairs = pair_table(tmp_path / "pairs.csv")
    frame = pd.read_csv(pairs)
    store, out = tmp_path / "store", tmp_path / "s.csv"
    text = (frame["claim"] + " " + frame["passage"]).str.lower()
    with serve() as srv:
        assert (
            import_card(srv.url, tmp_path / "card", "--retries", "2", "--backoff", "0").exit_code
            == 0
        )
        srv.state.mode, srv.state.filtered, srv.state.cut = mode, ("smoking",), ("caffeine",)
        refused = (
            np.ones(len(frame), bool)
            if mode == "refuse"
            else (text.str.contains("smoking") | text.str.contains("caffeine")).to_numpy()
        )
        asked = srv.state.chat
        args = ("--verifier", tmp_path / "card", "--cache-dir", store, "--out", out)
        res = invoke("guard", "score", pairs, *args)
        assert res.exit_code == 0, res.output
        assert srv.state.chat - asked == 24  # a refusal is not retried
        n = int(refused.sum())
        assert f"{n} of 24 pair(s) without a score: the instrument refused them" in res.output
        assert f"{n} refused (" in res.output
        got = pd.read_csv(out)
        assert (got["score_status"] == "refused").to_numpy().tolist() == refused.tolist()
        assert got.loc[refused, "score"].isna().all()
        assert got.loc[~refused, "score"].to_numpy() == pytest.approx(
            [
                expected(c, p)
                for c, p in zip(frame["claim"][~refused], frame["passage"][~refused], strict=True)
            ]
        )
        # issue 40 E: the store's partitions are named by the card's instrument sha256
        sha = json.loads((tmp_path / "card" / "card.json").read_text())["instrument_sha256"]
        if mode == "filter":  # (all refused: nothing is written, not even a partition)
            assert [p.name for p in store.iterdir()] == [sha]
        else:
            assert not list(store.rglob("*.parquet"))
        assert load_verifier(tmp_path / "card").card.onnx_sha256 == ""
        # refusals are not stored: a rerun asks exactly them again, nothing else
        asked = srv.state.chat
        res = invoke("guard", "score", pairs, *args)
        assert res.exit_code == 0, res.output
        assert srv.state.chat - asked == n
        if mode == "filter":  # panel, calibrate and run leave the refused pairs out, counted
            res = invoke(
                "guard",
                "panel",
                pairs,
                "--verifier",
                tmp_path / "card",
                "--verifier",
                tmp_path / "card",
                "--tau",
                "0.5",
                "--n-boot",
                "50",
                "--out",
                tmp_path / "panel",
            )
            assert res.exit_code == 0, res.output
            assert f"left out {n} pair(s) some member gave no score" in res.output
            panel = pd.read_csv(tmp_path / "panel" / "scores.csv")
            assert panel["flag_card"].to_numpy()[refused].all()  # no score: to review
            cal = tmp_path / "cal.json"
            res = invoke(
                "guard",
                "calibrate",
                pairs,
                "--verifier",
                tmp_path / "card",
                "--alpha",
                "0.2",
                "--out",
                cal,
            )
            assert res.exit_code == 0, res.output
            art = json.loads(cal.read_text())
            assert art["sample"]["n"] == 24 - n
            answers = tmp_path / "answers.jsonl"
            i = int(np.flatnonzero(refused)[0])
            rec = {
                "answer_id": "a1",
                "answer": f"{frame['claim'][i]} [1]",
                "passages": {"1": frame["passage"][i]},
            }
            answers.write_text(json.dumps(rec) + "\n")
            res = invoke(
                "guard",
                "run",
                answers,
                "--calibration",
                cal,
                "--alpha",
                "0.2",
                "--verifier",
                tmp_path / "card",
                "--out",
                tmp_path / "guarded",
            )
            assert res.exit_code == 0, res.output
            cites = pd.read_csv(tmp_path / "guarded" / "citations.csv")
            assert cites["reason"].tolist() == ["refused"] and cites["flagged"].all()
            summary = json.loads((tmp_path / "guarded" / "summary.json").read_text())
            assert summary["refused"] == 1
    if mode == "filter":
        res = invoke("guard", "evaluate", out, "--n-boot", "50")
        assert res.exit_code == 0, res.output
        assert f"left out {n} pair(s) without a score" in res.output
        assert f"evaluated {24 - n} pairs" in res.output
        res = invoke("guard", "compare", out, out, "--n-boot", "50")
        assert res.exit_code == 0, res.output
        assert f"left out {n} pair(s) without a score in A or B" in res.output
    else:
        res = invoke("guard", "evaluate", out, "--n-boot", "50")
        assert res.exit_code == 2 and "every pair lacks a score" in res.output
    # a table whose status and score disagree is refused, naming the row
    bad = pd.read_csv(out)
    bad.loc[0, "score_status"] = "scored" if refused[0] else "refused"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    res = invoke("guard", "evaluate", tmp_path / "bad.csv")
    assert res.exit_code == 2 and "row 2, column 'score_status'" in res.output
