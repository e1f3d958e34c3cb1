"""Issue 40 part 3: validation before trust, written on the card (`kit guard validate`).

The LLM verifier runs behind the real loopback server (tests/llm_server.py): its scores, its
usage counts, the prompts its content filter refuses and the verdicts its ``drift`` mode flips
on a second request are all predicted here from the server's documented rules, so every number
on the card is checked against an independent computation (kappa and AC1 also against
statsmodels and a hand formula). The ONNX card is the tiny random-weight cross-encoder: its
self-consistency must be measured as exactly 0, and its identity and weights kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from llm_server import MODEL, p_yes, prompt_tokens, serve
from test_llm_verifier import TOPICS, import_card, invoke, pair_table

from kit.core.schema import validate_json
from kit.guard.evaluation.validation import self_consistency, with_validation
from kit.guard.scoring.windows import passage_windows
from kit.guard.verifiers.llm.prompt import DEFAULT_TEMPLATE, render
from kit.guard.verifiers.llm.verifier import LLM_WINDOW
from kit.guard.verifiers.load import load_card, load_verifier


def ref_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's kappa from an independent implementation (statsmodels)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    table = pd.crosstab(x, y).reindex(index=[False, True], columns=[False, True], fill_value=0)
    return float(cohens_kappa(table.to_numpy())["kappa"])


def _expected(frame: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Predicted scores (max over windows of the server's P(yes)) and prompt tokens."""
    scores, tokens = [], 0
    for c, p in zip(frame["claim"], frame["passage"], strict=True):
        wins = passage_windows(p, LLM_WINDOW)
        scores.append(max(p_yes(c, w) for w in wins))
        tokens += sum(prompt_tokens(render(DEFAULT_TEMPLATE, c, w)) for w in wins)
    return np.asarray(scores), tokens


def _validate(card: Path, gold: Path, out: Path, *extra: object):
    return invoke(
        "guard",
        "validate",
        "--verifier",
        card,
        "--gold",
        gold,
        "--n-boot",
        "200",
        "--out",
        out,
        *extra,
    )


def test_llm_card_validated_on_human_labels(tmp_path: Path) -> None:
    pairs = pair_table(tmp_path / "pairs.csv")
    frame = pd.read_csv(pairs)
    s, tokens = _expected(frame)
    gold = (frame["label"] == "entailment").to_numpy()
    with serve() as srv:
        assert import_card(srv.url, tmp_path / "card").exit_code == 0
        # a warm score store must not answer the validation: it is bypassed
        store = tmp_path / "store"
        res = invoke(
            "guard",
            "score",
            pairs,
            "--verifier",
            tmp_path / "card",
            "--cache-dir",
            store,
            "--out",
            tmp_path / "s.csv",
        )
        assert res.exit_code == 0, res.output
        before = srv.state.chat
        out = tmp_path / "validated"
        res = _validate(tmp_path / "card", pairs, out)
        assert res.exit_code == 0, res.output
        assert srv.state.chat - before == 2 * len(frame)  # both passes asked, nothing cached
    card = json.loads((out / "card.json").read_text())
    orig = json.loads((tmp_path / "card" / "card.json").read_text())
    v = card["validation"]
    validate_json(v, "instrument_validation", "card.json")
    validate_json(card, "llm_verifier_card", "card.json")
    # identity unchanged: same instrument sha256, so the same score-store partition
    assert card["instrument_sha256"] == orig["instrument_sha256"]
    assert v["instrument"] == {
        "kind": "llm",
        "name": orig["name"],
        "identity_sha256": orig["instrument_sha256"],
        "identity_field": "instrument_sha256",
    }
    assert {k: card[k] for k in orig if k != "validated_on"} == {
        k: orig[k] for k in orig if k != "validated_on"
    }
    assert card["validated_on"].startswith("validated by the kit on 24 human-labelled")
    assert "not validated" not in card["validated_on"]
    # agreement against the people, base rates beside it
    (row,) = v["agreement"]
    dec = s > 0.5
    assert row["n"] == 24 and row["base_rate_gold"] == pytest.approx(gold.mean())
    assert row["rate_instrument"] == pytest.approx(dec.mean())
    assert row["observed"] == pytest.approx(np.mean(dec == gold))
    assert row["kappa"] == pytest.approx(ref_kappa(dec, gold))
    po, pi = np.mean(dec == gold), (dec.mean() + gold.mean()) / 2
    assert row["ac1"] == pytest.approx((po - 2 * pi * (1 - pi)) / (1 - 2 * pi * (1 - pi)))
    a, b, c = np.sum(dec & gold), np.sum(dec & ~gold), np.sum(~dec & gold)
    assert row["positive_specific"] == pytest.approx(2 * a / (2 * a + b + c))
    assert row["kappa_lo"] <= row["kappa"] <= row["kappa_hi"]
    t2 = {(r["metric"], r["subset"]): r for r in v["table2"]}
    assert t2[("recall", "entailment")]["estimate"] == pytest.approx(dec[gold].mean())
    assert t2[("specificity", "unsupported")]["estimate"] == pytest.approx((~dec[~gold]).mean())
    # self-consistency: a deterministic endpoint flips nothing, measured over every pair
    sc = v["self_consistency"]
    assert (sc["n_compared"], sc["flipped"], sc["flip_share"]) == (24, 0, 0.0)
    assert sc["max_abs_score_change"] == 0.0
    # cost: requests and tokens from the API's usage field (one word per reply)
    cost = v["cost"]
    assert cost["requests"] == 24 and cost["retried"] == 0 and cost["questions"] == 24
    assert cost["prompt_tokens"] == tokens and cost["completion_tokens"] == 24
    assert cost["tokens_per_item"] == pytest.approx((tokens + 24) / 24, abs=1e-3)
    assert cost["seconds_per_item"] > 0
    assert v["missing"] == {"n": 0, "reasons": {}}
    assert "self-consistency: 0 of 24 decisions flipped" in res.output
    assert f"{tokens} prompt + 24 completion tokens" in res.output
    # sealed, and the card loads (schema, sha256s and the validation block checked)
    assert invoke("verify", "receipts", out).exit_code == 0
    assert load_verifier(out).card.identity_sha256 == orig["instrument_sha256"]
    res = invoke("guard", "card", "--verifier", out, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["human_validation"]["summary"] == v["summary"]


def test_a_drifting_endpoint_flips_and_a_filter_leaves_missing_items(tmp_path: Path) -> None:
    pairs = pair_table(tmp_path / "pairs.csv")
    frame = pd.read_csv(pairs)
    s, _ = _expected(frame)
    drift = ("aspirin", "metformin", "statins")
    with serve() as srv:
        assert import_card(srv.url, tmp_path / "card").exit_code == 0
        srv.state.mode, srv.state.drift = "drift", drift
        res = _validate(tmp_path / "card", pairs, tmp_path / "v1")
        assert res.exit_code == 0, res.output
        sc = json.loads((tmp_path / "v1" / "card.json").read_text())["validation"][
            "self_consistency"
        ]
        hit = frame["claim"].str.lower().str.contains("|".join(drift)).to_numpy()
        flips = int(np.sum(hit & ((s > 0.5) != ((1 - s) > 0.5))))
        assert flips >= 4
        assert (sc["flipped"], sc["n_compared"]) == (flips, 24)
        assert sc["flip_share"] == pytest.approx(flips / 24)
        assert sc["lo"] < flips / 24 < sc["hi"]
        assert sc["max_abs_score_change"] == pytest.approx(np.max(np.abs(1 - 2 * s[hit])))
        # a content filter: HTTP 400 for one word, finish_reason content_filter for another
        srv.state.mode, srv.state.filtered, srv.state.cut = "filter", ("smoking",), ("caffeine",)
        res = _validate(tmp_path / "card", pairs, tmp_path / "v2")
        assert res.exit_code == 0, res.output
    v = json.loads((tmp_path / "v2" / "card.json").read_text())["validation"]
    text = (frame["claim"] + " " + frame["passage"]).str.lower()
    filtered = text.str.contains("smoking").to_numpy()
    cut = text.str.contains("caffeine").to_numpy()
    assert v["missing"] == {
        "n": int((filtered | cut).sum()),
        "reasons": {
            "refused (content filter)": int(cut.sum()),
            "refused (http 400)": int(filtered.sum()),
        },
    }
    (row,) = v["agreement"]
    assert row["n"] == 24 - v["missing"]["n"]
    assert v["self_consistency"]["n_compared"] == row["n"]
    assert f"without an answer: {v['missing']['n']} item(s)" in res.output


def test_onnx_card_consistency_is_measured_zero_and_identity_kept(
    tiny_cross_dir: Path, tmp_path: Path
) -> None:
    pairs = pair_table(tmp_path / "pairs.csv")
    out = tmp_path / "validated"
    res = _validate(tiny_cross_dir, pairs, out, "--group-column", "label")
    assert res.exit_code == 0, res.output
    card, orig = load_card(out), load_card(tiny_cross_dir)
    v = card["validation"]
    assert v["instrument"]["identity_field"] == "onnx_sha256"
    assert v["instrument"]["identity_sha256"] == orig["onnx_sha256"] == card["onnx_sha256"]
    assert {k: card[k] for k in orig if k != "validated_on"} == {
        k: orig[k] for k in orig if k != "validated_on"
    }
    assert card["validated_on"].endswith(f"; before: {orig['validated_on']}")
    sc = v["self_consistency"]
    assert (sc["flipped"], sc["n_compared"], sc["max_abs_score_change"]) == (0, 24, 0.0)
    cost = v["cost"]
    assert cost["requests"] is None and cost["prompt_tokens"] is None
    assert cost["note"].startswith("a local model") and cost["questions"] == 24
    assert v["agreement"][0]["ci_method"] == "cluster-bootstrap (label)"
    # the copy scores exactly as the original (the weights are the same file)
    a = load_verifier(tiny_cross_dir).score(["a b c"], ["a b c d"])
    b = load_verifier(out).score(["a b c"], ["a b c d"])
    assert np.array_equal(a, b)
    # validating the validated card again replaces the block and keeps the card's own note
    res = _validate(out, pairs, tmp_path / "again", "--tau", "0.4")
    assert res.exit_code == 0, res.output
    again = load_card(tmp_path / "again")
    assert again["validation"]["parameters"]["tau"] == 0.4
    assert again["validation"]["card_validated_on"] == orig["validated_on"]
    assert again["validated_on"].count("; before: ") == 1


def test_bad_gold_is_refused_and_nothing_is_written(tiny_cross_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "nolabel.csv"
    pd.DataFrame({"claim": ["a"], "passage": ["b"]}).to_csv(bad, index=False)
    res = _validate(tiny_cross_dir, bad, tmp_path / "out")
    assert res.exit_code == 2 and "no 'label' column" in res.output
    assert not (tmp_path / "out").exists()
    odd = tmp_path / "odd.csv"
    pd.DataFrame({"claim": ["a", "b"], "passage": ["b", "c"], "label": ["yes", "maybe"]}).to_csv(
        odd, index=False
    )
    res = _validate(tiny_cross_dir, odd, tmp_path / "out")
    assert res.exit_code == 2 and "row 2" in res.output
    assert not (tmp_path / "out").exists()


def test_self_consistency_and_with_validation_rules() -> None:
    sc = self_consistency([True, False, None, True], [True, True, False, None])
    assert (sc["n_items"], sc["n_compared"], sc["flipped"]) == (4, 2, 1)
    assert sc["flip_share"] == 0.5 and sc["ci"] == "Wilson 95%"
    none = self_consistency([None], [True])
    assert none["flip_share"] is None and none["ci"] == "undefined: n = 0"
    card = {"name": "x", "validated_on": "not validated by the kit: run ..."}
    out = with_validation(card, {"summary": "validated by the kit on 3 ..."})
    assert out["validated_on"] == "validated by the kit on 3 ..." and "validation" not in card
    assert len(TOPICS) == 12 and MODEL
