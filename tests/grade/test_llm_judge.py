"""Issue 40 part 2: checklist grading by an LLM judge selected by card, and the judge swap.

The judge runs through a real loopback chat-completions server (tests/llm_server.py) whose
synthetic judge gives met / partial / not_met from word overlap (:func:`judge_verdict`), so
every verdict is predicted independently here. Kappa is checked against scikit-learn's
``cohen_kappa_score`` (statsmodels' ``cohens_kappa`` where scikit-learn is missing).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from llm_server import MODEL, judge_verdict, serve

from kit.cli import cli
from kit.core.errors import IntegrityError
from kit.core.schema import validate_json
from kit.grade.checklist import Checklist, Criterion, score_verdicts
from kit.grade.judge_prompt import (
    DEFAULT_TEMPLATE,
    check_template,
    label_probabilities,
    render,
    reply_verdict,
)
from kit.grade.judge_swap import judge_swap
from kit.grade.llm_judge import PINNED, load_judge_card
from kit.guard.verifiers.llm.instrument import instrument_sha256

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "grade"
RUNS, CHECKLISTS = EXAMPLES / "runs.jsonl", EXAMPLES / "checklists.jsonl"


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def import_judge(url: str, out: Path, *extra: object) -> Result:
    return invoke(
        "grade", "import-judge", "--base-url", url, "--model", MODEL, "--out", out, *extra
    )


def grade(card: object, out: Path, store: Path, *extra: object) -> Result:
    return invoke(
        "grade",
        "judge",
        RUNS,
        "--checklists",
        CHECKLISTS,
        "--judge",
        card,
        "--cache-dir",
        store,
        "--out",
        out,
        *extra,
    )


def ref_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's kappa from an independent implementation."""
    try:
        from sklearn.metrics import cohen_kappa_score

        return float(cohen_kappa_score(x.astype(int), y.astype(int)))
    except ImportError:
        from statsmodels.stats.inter_rater import cohens_kappa

        table = pd.crosstab(x, y).reindex(index=[False, True], columns=[False, True], fill_value=0)
        return float(cohens_kappa(table.to_numpy())["kappa"])


def expected_llm_verdicts() -> dict[tuple[str, str], tuple[str, str]]:
    """(run_id, criterion_id) -> the server's (verdict, reason), from the raw example files."""
    cls = {}
    for line in CHECKLISTS.read_text().splitlines():
        obj = json.loads(line)
        cls[obj["task_id"]] = obj
    out = {}
    for line in RUNS.read_text().splitlines():
        run = json.loads(line)
        for c in cls[run["task_id"]]["criteria"]:
            v, reason = judge_verdict(c["text"], run["answer"])
            out[(run["run_id"], c["id"])] = (v, reason.rstrip("."))
    return out


# ----------------------------------------------------------------------------- pure rules


def test_reply_verdict_reads_the_first_word_and_keeps_the_reason() -> None:
    assert reply_verdict("met: names both.") == ("met", "names both")
    assert reply_verdict("  **Partial** - only one of two") == ("partial", "only one of two")
    assert reply_verdict("Not met. It says nothing about it.") == (
        "not_met",
        "It says nothing about it",
    )
    assert reply_verdict("not_met") == ("not_met", "")
    assert reply_verdict("partially met: x")[0] == "partial"
    for bad in ("metformin helps", "The answer is met", "yes", "", "I cannot grade this."):
        assert reply_verdict(bad) is None, bad
    assert len(reply_verdict("met: " + "x " * 500)[1]) == 200


def test_label_probabilities_sum_spellings_and_normalise_over_three_labels() -> None:
    lp = np.log
    top = [
        {"token": "Met", "logprob": lp(0.3)},
        {"token": " met", "logprob": lp(0.1)},
        {"token": "part", "logprob": lp(0.2)},
        {"token": "Not", "logprob": lp(0.2)},
        {"token": "me", "logprob": lp(0.1)},  # too short to read as a label
        {"token": "The", "logprob": lp(0.1)},
    ]
    got = label_probabilities(top)
    assert got == pytest.approx((0.4 / 0.8, 0.2 / 0.8, 0.2 / 0.8))
    assert label_probabilities([{"token": "The", "logprob": 0.0}]) is None


def test_prompt_slots_are_filled_once_and_braces_stay_text() -> None:
    p = render(DEFAULT_TEMPLATE, "Q {answer}?", "crit {x}", "ans {question}")
    assert "Question: Q {answer}?" in p and "Criterion: crit {x}" in p
    assert "Answer: ans {question}" in p
    with pytest.raises(Exception, match="exactly once"):
        check_template("{question} {answer}")


# ----------------------------------------------------------------------------- card


def test_import_judge_pins_the_instrument_and_refuses_an_edited_card(tmp_path: Path) -> None:
    with serve() as srv:
        res = import_judge(srv.url, tmp_path / "judge")
        assert res.exit_code == 0, res.output
        assert srv.state.models == 1 and srv.state.chat == 1  # one probe, one test question
    card = json.loads((tmp_path / "judge" / "card.json").read_text())
    validate_json(card, "llm_judge_card")
    assert card["kind"] == "llm-judge" and card["model"] == MODEL
    assert card["decoding"] == {"temperature": 0, "max_tokens": 64, "top_logprobs": 20}
    assert card["answer_rule"]["method"] == "logprobs"
    assert card["answer_rule"]["labels"] == ["met", "partial", "not_met"]
    assert card["instrument_sha256"] == instrument_sha256(card, PINNED)
    assert load_judge_card(tmp_path / "judge")["name"] == card["name"]
    # an endpoint without log-probabilities: the verdict from the reply, no evidence
    with serve("nologprobs") as srv:
        assert import_judge(srv.url, tmp_path / "j2").exit_code == 0
        res = import_judge(srv.url, tmp_path / "j3", "--answer-rule", "logprobs")
        assert res.exit_code == 2 and "first_word" in res.output, res.output
        assert not (tmp_path / "j3").exists()
    card2 = json.loads((tmp_path / "j2" / "card.json").read_text())
    assert (
        card2["answer_rule"]["method"] == "first_word" and "top_logprobs" not in card2["decoding"]
    )
    assert card2["instrument_sha256"] != card["instrument_sha256"]
    # a model that does not answer with a verdict: exit 2, nothing written
    with serve("refuse") as srv:
        res = import_judge(srv.url, tmp_path / "j4")
        assert res.exit_code == 2 and "met / partial / not_met" in res.output, res.output
        assert not (tmp_path / "j4").exists()
    card["decoding"]["max_tokens"] = 9
    (tmp_path / "judge" / "card.json").write_text(json.dumps(card))
    with pytest.raises(IntegrityError, match="instrument sha256"):
        load_judge_card(tmp_path / "judge")


def test_a_verifier_card_is_not_a_judge(tmp_path: Path) -> None:
    with serve() as srv:
        res = invoke(
            "guard",
            "import-verifier",
            "--base-url",
            srv.url,
            "--model",
            MODEL,
            "--out",
            tmp_path / "v",
        )
        assert res.exit_code == 0, res.output
    res = grade(tmp_path / "v", tmp_path / "out.csv", tmp_path / "store")
    assert res.exit_code == 2 and "not a checklist judge" in res.output, res.output
    assert not (tmp_path / "out.csv").exists()


# ----------------------------------------------------------------------------- end to end


def test_grade_judge_with_an_llm_card_through_the_server(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with serve() as srv:
        assert import_judge(srv.url, tmp_path / "judge").exit_code == 0
        asked = srv.state.chat
        out = tmp_path / "llm.csv"
        res = grade(tmp_path / "judge", out, store)
        assert res.exit_code == 0, res.output
        assert srv.state.chat - asked == 27  # 5 runs x 5-6 criteria, one question each
        first = out.read_bytes()
        # second run: every verdict from the store, nothing asked, the same bytes
        out2 = tmp_path / "llm2.csv"
        res = grade(tmp_path / "judge", out2, store)
        assert res.exit_code == 0, res.output
        assert srv.state.chat - asked == 27
        assert "27 verdict(s) from the score store, 0 question(s) asked" in res.output
        assert out2.read_bytes() == first
    # a warm store needs no endpoint at all
    out3 = tmp_path / "llm3.csv"
    assert grade(tmp_path / "judge", out3, store).exit_code == 0
    assert out3.read_bytes() == first
    table = pd.read_csv(out, keep_default_na=False)
    want = expected_llm_verdicts()
    assert len(table) == len(want) == 27
    assert set(table["judge"]) == {f"{MODEL} (LLM checklist judge)"}
    for r in table.itertuples():
        assert (r.verdict, r.reason) == want[(r.run_id, r.criterion_id)]
    assert np.allclose(table["evidence"].astype(float), 0.8)  # P(verdict) over three labels
    assert len(set(table["verdict"])) == 3
    # the lexical judge (the default): an empty reason column
    lex = tmp_path / "lex.csv"
    res = invoke("grade", "judge", RUNS, "--checklists", CHECKLISTS, "--out", lex)
    assert res.exit_code == 0, res.output
    lt = pd.read_csv(lex)
    assert list(lt.columns)[-1] == "reason" and lt["reason"].isna().all()
    assert set(lt["judge"]) == {"lexical"}
    # the verdict table scores with `kit grade checklist`
    res = invoke(
        "grade", "checklist", out, "--checklists", CHECKLISTS, "--rates", "--format", "csv"
    )
    assert res.exit_code == 0, res.output


def test_first_word_rule_without_logprobs_gives_the_same_verdicts_and_no_evidence(
    tmp_path: Path,
) -> None:
    with serve("nologprobs") as srv:
        assert import_judge(srv.url, tmp_path / "judge").exit_code == 0
        res = grade(tmp_path / "judge", tmp_path / "v.csv", tmp_path / "store")
        assert res.exit_code == 0, res.output
    table = pd.read_csv(tmp_path / "v.csv", keep_default_na=False)
    want = expected_llm_verdicts()
    for r in table.itertuples():
        assert (r.verdict, r.reason) == want[(r.run_id, r.criterion_id)]
    assert (table["evidence"] == "").all()  # no log-probabilities: no evidence, never a guess


@pytest.mark.parametrize(
    ("mode", "reason"), [("error500", "http 500"), ("refuse", "not a verdict")]
)
def test_a_failing_judge_exits_2_with_nothing_written(
    tmp_path: Path, mode: str, reason: str
) -> None:
    store, out = tmp_path / "store", tmp_path / "v.csv"
    with serve() as srv:
        res = import_judge(srv.url, tmp_path / "judge", "--retries", "1", "--backoff", "0")
        assert res.exit_code == 0, res.output
        srv.state.mode = mode
        res = grade(tmp_path / "judge", out, store)
        assert res.exit_code == 2, res.output
        text = " ".join(res.output.split())
        assert "27 of 27 checklist question(s)" in text and "gave no verdict" in text
        assert reason in text and "27 without a verdict" in text
    assert not out.exists() and not list(store.rglob("*.parquet"))


def test_a_partial_failure_keeps_the_answered_verdicts(tmp_path: Path) -> None:
    store, out = tmp_path / "store", tmp_path / "v.csv"
    with serve() as srv:
        assert import_judge(srv.url, tmp_path / "judge", "--retries", "0").exit_code == 0
        srv.state.mode = "flaky"  # the first request of every prompt: 429, no retry
        srv.state.attempts.clear()
        res = grade(tmp_path / "judge", out, store)
        assert res.exit_code == 2 and "http 429" in res.output, res.output
        assert not out.exists()
        asked = srv.state.chat
        res = grade(tmp_path / "judge", out, store)  # every prompt's second request succeeds
        assert res.exit_code == 0, res.output
        assert srv.state.chat - asked == 27


# ----------------------------------------------------------------------------- judge swap


def test_judge_swap_lexical_vs_llm_on_the_same_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    lex, llm = tmp_path / "lexical.csv", tmp_path / "llm.csv"
    assert invoke("grade", "judge", RUNS, "--checklists", CHECKLISTS, "--out", lex).exit_code == 0
    with serve() as srv:
        assert import_judge(srv.url, tmp_path / "judge").exit_code == 0
        assert grade(tmp_path / "judge", llm, store).exit_code == 0
    swap = tmp_path / "swap"
    res = invoke(
        "grade", "judge-swap", lex, llm, "--checklists", CHECKLISTS, "--out", swap, "--n-boot", 300
    )
    assert res.exit_code == 0, res.output
    for stem in ("agreement", "systems"):
        for suffix in (".csv", ".md", ".tex"):
            assert (swap / f"{stem}{suffix}").is_file()
    agree = pd.read_csv(swap / "agreement.csv").set_index("level")
    a, b = pd.read_csv(lex), pd.read_csv(llm)
    m = a.merge(b, on=["model", "task_id", "criterion_id"], suffixes=("_a", "_b"))
    assert agree.loc["criterion_met", "n"] == len(m) == 27
    for level, pos in (("criterion_met", {"met"}), ("criterion_credit", {"met", "partial"})):
        x, y = m["verdict_a"].isin(pos).to_numpy(), m["verdict_b"].isin(pos).to_numpy()
        assert agree.loc[level, "kappa"] == pytest.approx(ref_kappa(x, y), abs=1e-6)
        assert agree.loc[level, "rate_a"] == pytest.approx(x.mean(), abs=1e-6)
        assert agree.loc[level, "rate_b"] == pytest.approx(y.mean(), abs=1e-6)
        both, neither, split = (x & y).sum(), (~x & ~y).sum(), (x != y).sum()
        psa, nsa = 2 * both / (2 * both + split), 2 * neither / (2 * neither + split)
        assert agree.loc[level, "positive_specific"] == pytest.approx(psa, abs=1e-6)
        assert agree.loc[level, "negative_specific"] == pytest.approx(nsa, abs=1e-6)
        for stat in ("kappa", "ac1", "positive_specific", "negative_specific"):
            row = agree.loc[level]
            assert row[f"{stat}_lo"] <= row[stat] + 1e-9 <= row[f"{stat}_hi"] + 2e-9
    assert agree.loc["criterion_met", "ci_method"] == "cluster-bootstrap (answers)"
    # the two judges disagree on some criteria here (the check could fail)
    assert agree.loc["criterion_met", "observed"] < 1.0
    systems = pd.read_csv(swap / "systems.csv").set_index("model")
    assert set(systems.index) == {"model-a", "model-b", "model-b [no tools]"}
    assert "largest solve-rate shift" in res.output


def _synthetic(
    rng: np.random.Generator, n_models: int = 6, n_tasks: int = 40, flip: float = 0.2
) -> tuple[dict[str, Checklist], pd.DataFrame, pd.DataFrame]:
    """Construction-labelled (synthetic) verdicts of two judges: B copies A's verdict and
    replaces it by a random one with probability ``flip``; models differ in skill."""
    kinds = ("must_mention", "must_acknowledge", "must_ground", "must_mention", "must_avoid")
    cls = {
        f"t{t}": Checklist(
            f"t{t}",
            f"question {t}",
            tuple(Criterion(f"c{i}", k, f"criterion {i}", 1 + i % 3) for i, k in enumerate(kinds)),
        )
        for t in range(n_tasks)
    }
    labels = np.array(["met", "partial", "not_met"])
    rows_a, rows_b = [], []
    for mi in range(n_models):
        skill = 0.25 + 0.1 * mi
        for t, cl in cls.items():
            for c in cl.criteria:
                p = [skill, 0.2, 0.8 - skill]
                va = rng.choice(labels, p=p)
                vb = rng.choice(labels) if rng.random() < flip else va
                key = {"model": f"m{mi}", "task_id": t, "criterion_id": c.id}
                rows_a.append({"judge": "ja", **key, "verdict": va})
                rows_b.append({"judge": "jb", **key, "verdict": vb})
    return cls, pd.DataFrame(rows_a), pd.DataFrame(rows_b)


def test_judge_swap_on_seeded_synthetic_verdicts_matches_independent_computations() -> None:
    rng = np.random.default_rng(7)
    cls, va, vb = _synthetic(rng)
    swap = judge_swap(cls, va, vb, np.random.default_rng(0), n_boot=300)
    sa, sb = score_verdicts(cls, va), score_verdicts(cls, vb)
    both = sa.merge(sb, on=["model", "task_id"], suffixes=("_a", "_b"))
    x, y = both["solved_a"].to_numpy(bool), both["solved_b"].to_numpy(bool)
    agree = swap.agreement.set_index("level")
    assert agree.loc["solved", "n"] == 240
    assert agree.loc["solved", "kappa"] == pytest.approx(ref_kappa(x, y), abs=1e-9)
    # Gwet's AC1 from its definition (Gwet 2008), computed here
    pi = (x.mean() + y.mean()) / 2
    pe = 2 * pi * (1 - pi)
    assert agree.loc["solved", "ac1"] == pytest.approx(((x == y).mean() - pe) / (1 - pe))
    # a flip rate of 0.2 leaves substantial but imperfect agreement
    assert 0.3 < agree.loc["criterion_met", "kappa"] < 0.95
    # systems: solve rates, differences and ranks from pandas, independently
    g = both.groupby("model")
    ra, rb = g["solved_a"].mean(), g["solved_b"].mean()
    sys_t = swap.systems.set_index("model")
    assert np.allclose(sys_t["solve_rate_a"], ra.loc[sys_t.index])
    assert np.allclose(sys_t["difference"], (rb - ra).loc[sys_t.index])
    rank_a = ra.rank(ascending=False, method="min").astype(int)
    rank_b = rb.rank(ascending=False, method="min").astype(int)
    assert (sys_t["rank_a"] == rank_a.loc[sys_t.index]).all()
    assert (sys_t["rank_move"] == (rank_b - rank_a).loc[sys_t.index]).all()
    assert (sys_t["difference_lo"] <= sys_t["difference"] + 1e-12).all()
    assert (sys_t["difference"] <= sys_t["difference_hi"] + 1e-12).all()
    assert (sys_t["difference_hi"] - sys_t["difference_lo"] > 0).all()  # judges differ
    # identical judges: perfect agreement, no move
    same = judge_swap(cls, va, va.assign(judge="jb"), np.random.default_rng(0), n_boot=50)
    assert (same.agreement["kappa"] == 1.0).all()
    assert (same.systems["difference"] == 0).all() and (same.systems["rank_move"] == 0).all()
    assert (same.systems["difference_lo"] == 0).all() and (same.systems["difference_hi"] == 0).all()


def test_judge_swap_refuses_a_table_of_two_judges_and_names_equal_judges(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    cls, va, vb = _synthetic(rng, n_models=2, n_tasks=5)
    cl_path = tmp_path / "cl.jsonl"
    cl_path.write_text("".join(json.dumps(c.to_record()) + "\n" for c in cls.values()))
    two = tmp_path / "two.csv"
    pd.concat([va, vb]).to_csv(two, index=False)
    one = tmp_path / "one.csv"
    va.to_csv(one, index=False)
    res = invoke("grade", "judge-swap", two, one, "--checklists", cl_path, "--out", tmp_path / "s")
    assert res.exit_code == 2 and "2 judges" in res.output, res.output
    assert not (tmp_path / "s").exists()
    swap = judge_swap(cls, va, va, np.random.default_rng(0), n_boot=20)
    assert swap.judge_a == "ja (A)" and swap.judge_b == "ja (B)"
