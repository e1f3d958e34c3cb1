"""LLM checklist judges selected by card: a chat model behind an OpenAI-compatible endpoint.

Seed 002 grades every answer with an LLM judge against frozen checklists; docs/architecture.md,
"Instruments and gold": a judge is an instrument selected by card. A card of kind
``llm-judge`` (``kit grade import-judge``, schemas/json/llm_judge_card.schema.json) pins the
model and endpoint, the frozen prompt template (:mod:`kit.grade.judge_prompt`) and its sha256,
the decoding (temperature 0, ``max_tokens``, top log-probabilities when the endpoint returns
them) and the answer rule; never a key (``api_key_env`` names the variable it is read from).
``instrument_sha256`` = sha256 of the canonical JSON of the pinned fields (as for the LLM
verifier card, :func:`kit.guard.verifiers.llm.instrument.instrument_sha256`).

The network client is the LLM verifier's (:class:`kit.guard.verifiers.llm.client.ChatClient`: bounded
concurrency, timeouts, retries with backoff, the ``GET /models`` probe at the first store miss).

Verdicts go through the shared score store (:mod:`kit.guard.scoring.score_store`; partition = the
card's instrument sha256), keyed by sha256 of (question, criterion text) and of the answer:
score = the verdict's credit (met 1, partial 0.5, not_met 0), p_0..p_2 = P(met), P(partial),
P(not_met) when the card reads log-probabilities, note = the reason. A second run asks the
model nothing. A call that fails, or a reply whose first word is no verdict, is never made a
verdict: :class:`JudgingFailed` (exit 2, nothing written) names how many and why, after the
answered ones are stored (a rerun asks only those).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kit.core.errors import ConfigError, KitError
from kit.grade.checklist import VERDICTS
from kit.grade.judge_prompt import (
    DEFAULT_TEMPLATE,
    LABELS,
    LOGPROBS_RULE,
    VERDICT_RULE,
    check_template,
    label_probabilities,
    render,
    reply_verdict,
)
from kit.grade.judge_protocol import JudgeItem, Verdict
from kit.guard.scoring.score_store import ScoreStore, pair_key, text_sha256
from kit.guard.verifiers.llm.client import CallFailed, ChatClient, ClientSettings, Request
from kit.guard.verifiers.llm.instrument import (
    answer_entry,
    check_pinned_card,
    first_question_failed,
    instrument_sha256,
    read_template,
    write_card_folder,
)

KIND = "llm-judge"
CARD_FORMAT = 1
SCHEMA = "llm_judge_card"
PINNED = ("kind", "model", "base_url", "prompt_sha256", "decoding", "answer_rule")
STORE_MODE = {"format": 1, "kind": KIND, "unit": "question-criterion-answer"}
ANSWER_RULES = ("auto", "logprobs", "first_word")
CHUNK = 64  # questions asked between two store flushes
DEFAULT_SETTINGS = ClientSettings()
PROBE = (
    "Does aspirin lower fever?",
    "States that aspirin lowered fever",
    "Aspirin lowered fever compared with placebo in a randomised trial.",
)
_VALUE = {v: k for k, v in VERDICTS.items()}  # credit -> verdict


class JudgingFailed(KitError):
    """Some questions to an LLM judge gave no verdict: counted, never guessed."""


def build_judge_card(
    model: str,
    base_url: str,
    template: str,
    method: str,
    name: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    settings: ClientSettings = DEFAULT_SETTINGS,
    max_tokens: int = 64,
    top_logprobs: int = 20,
) -> dict[str, Any]:
    """The card.json of an LLM checklist judge (pure; its sha256s computed here)."""
    check_template(template)
    if method not in ("logprobs", "first_word"):
        raise ConfigError(
            "bad_parameter", f"answer rule must be logprobs or first_word; got {method}"
        )
    decoding: dict[str, Any] = {"temperature": 0, "max_tokens": max_tokens}
    if method == "logprobs":
        decoding["top_logprobs"] = top_logprobs
    card: dict[str, Any] = {
        "card_format": CARD_FORMAT,
        "kind": KIND,
        "name": name or f"{model} (LLM checklist judge)",
        "model": model,
        "base_url": base_url.rstrip("/"),
        "api_key_env": api_key_env,
        "prompt_template": template,
        "prompt_sha256": text_sha256(template),
        "decoding": decoding,
        "answer_rule": {
            "method": method,
            "labels": list(LABELS),
            "rule": LOGPROBS_RULE if method == "logprobs" else VERDICT_RULE,
        },
        "client": settings.to_dict(),
        "validated_on": "not validated by the kit: compare its verdicts with human labels, or "
        "with another judge (`kit grade judge-swap`), before trusting it",
        "source": f"imported by `kit grade import-judge --base-url` (model {model})",
    }
    card["instrument_sha256"] = instrument_sha256(card, PINNED)
    return card


def _request(card: dict[str, Any]) -> Request:
    dec = card["decoding"]
    return Request(
        model=card["model"],
        method=card["answer_rule"]["method"],
        max_tokens=int(dec["max_tokens"]),
        top_logprobs=int(dec.get("top_logprobs", 20)),
    )


def import_llm_judge(
    model: str,
    base_url: str,
    out: Path,
    answer_rule: str = "auto",
    prompt: Path | None = None,
    name: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    settings: ClientSettings = DEFAULT_SETTINGS,
) -> dict[str, Any]:
    """Write the card folder of an LLM checklist judge after asking the endpoint once.

    The endpoint is probed (``GET /models``) and asked one test question at temperature 0 with
    top log-probabilities; its reply must start with a verdict. ``auto`` takes the
    ``logprobs`` rule when the reply carries them, else ``first_word``. An unreachable
    endpoint, a refused key, a failed question or a reply that is no verdict is a ConfigError
    (exit 2) and nothing is written."""
    if answer_rule not in ANSWER_RULES:
        raise ConfigError(
            "bad_parameter", f"--answer-rule must be one of {', '.join(ANSWER_RULES)}"
        )
    template = read_template(prompt, DEFAULT_TEMPLATE, check_template, base_url)
    method = "first_word" if answer_rule == "first_word" else "logprobs"
    client = ChatClient(base_url, Request(model, method, max_tokens=64), settings, api_key_env)
    try:
        client.probe()
        text = render(template, *PROBE)
        try:
            choice, _ = client.reply(text)
        except CallFailed as exc:
            raise first_question_failed(base_url, model, exc.reason) from None
    finally:
        client.close()
    content = str((choice.get("message") or {}).get("content") or "")
    if reply_verdict(content) is None:
        raise ConfigError(
            "not_a_verdict",
            f"{base_url}: model {model!r} answered a test question with {content[:80]!r}, which "
            "does not start with met / partial / not_met; use another model or --prompt",
        )
    if answer_rule != "first_word":
        entry = answer_entry(choice)
        has = entry is not None and bool(entry.get("top_logprobs"))
        if answer_rule == "logprobs" and not has:
            raise ConfigError(
                "no_logprobs",
                f"{base_url} returned no top log-probabilities for model {model!r}; use "
                "--answer-rule first_word (the verdict read from the reply, no evidence)",
            )
        method = "logprobs" if has else "first_word"
    card = build_judge_card(
        model, base_url, template, method, name=name, api_key_env=api_key_env, settings=settings
    )
    write_card_folder(out, card, SCHEMA)
    return card


def check_judge_card(card: dict[str, Any], where: str) -> dict[str, Any]:
    """``card`` validated against its JSON Schema, its prompt and instrument sha256s checked."""
    return check_pinned_card(card, where, SCHEMA, PINNED, check_template, "judge")


def load_judge_card(folder: Path) -> dict[str, Any]:
    """The checked card of a judge folder (``FOLDER/card.json``, or the card file itself)."""
    from kit.core import boundary

    path = Path(folder)
    path = path / "card.json" if path.is_dir() else path
    if not path.is_file():
        raise ConfigError(
            "missing_card",
            f"{folder}: no judge card (card.json) here; give --judge lexical or a folder written "
            "by `kit grade import-judge`",
        )
    card = boundary.parse_json(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(card, dict) or card.get("kind") != KIND:
        kind = card.get("kind") if isinstance(card, dict) else None
        raise ConfigError(
            "wrong_card_kind",
            f"{path}: a card of kind {kind!r} is not a checklist judge (kind {KIND!r}, written "
            "by `kit grade import-judge`)",
        )
    return check_judge_card(card, str(path))


def item_key(item: JudgeItem) -> bytes:
    """The store key of one item: sha256 of (question, criterion text) and of the answer."""
    head = json.dumps(
        {"criterion": item.criterion.text, "question": item.question},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return pair_key(head, item.answer)


def read_reply(choice: dict[str, Any], method: str) -> tuple[str, str, tuple[float, ...] | None]:
    """(verdict, reason, label probabilities) of one reply; ValueError when it is no verdict."""
    content = str((choice.get("message") or {}).get("content") or "")
    got = reply_verdict(content)
    if got is None:
        raise ValueError("not a verdict (reply does not start with met / partial / not_met)")
    probs = None
    if method == "logprobs":
        entry = answer_entry(choice)
        if entry is not None:
            probs = label_probabilities(entry.get("top_logprobs") or [])
    return got[0], got[1], probs


class LlmJudge:
    """A chat model as a checklist judge: ``judge(items)`` reads each verdict from the score
    store or asks the model (store misses only)."""

    def __init__(
        self, card: dict[str, Any], store_root: Path | None, client: ChatClient | None = None
    ) -> None:
        self.spec = card
        self.name = card["name"]
        self.method = card["answer_rule"]["method"]
        self.store = ScoreStore(store_root, card["instrument_sha256"], dict(STORE_MODE))
        self._client = client
        self._probed = client is not None
        self.asked = 0
        self.hits = 0
        self.failures: Counter[str] = Counter()

    def client(self) -> ChatClient:
        """The endpoint's client, probed once at the first store miss."""
        if self._client is None:
            settings = ClientSettings(**self.spec["client"])
            self._client = ChatClient(
                self.spec["base_url"], _request(self.spec), settings, self.spec["api_key_env"]
            )
        if not self._probed:
            self._client.probe()
            self._probed = True
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _ask(self, prompt: str) -> tuple[str, str, tuple[float, ...] | None] | str:
        """One question's (verdict, reason, probabilities), or why it has none."""
        try:
            choice, _ = self.client().reply(prompt)
        except CallFailed as exc:
            return exc.reason
        try:
            return read_reply(choice, self.method)
        except ValueError as exc:
            return str(exc)

    def judge(self, items: Sequence[JudgeItem]) -> list[Verdict]:
        keys = [item_key(it) for it in items]
        todo = sorted({k: it for k, it in zip(keys, items, strict=True)}.items())
        todo = [(k, it) for k, it in todo if self.store.get(k) is None]
        self.hits += len(keys) - len(todo)
        failed: Counter[str] = Counter()
        tmpl = self.spec["prompt_template"]
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            prompts = [render(tmpl, it.question, it.criterion.text, it.answer) for _, it in chunk]
            got = self.client().map(self._ask, prompts)
            self.asked += len(chunk)
            for (k, _), g in zip(chunk, got, strict=True):
                if isinstance(g, str):
                    failed[g] += 1
                else:
                    verdict, reason, probs = g
                    self.store.add(k, VERDICTS[verdict], probs, note=reason)
            self.store.flush()
        self.failures.update(failed)
        if failed:
            n = sum(failed.values())
            reasons = ", ".join(f"{c} {r}" for r, c in sorted(failed.items()))
            raise JudgingFailed(
                "llm_calls_failed",
                f"{n} of {len(todo)} checklist question(s) to {self.spec['model']} at "
                f"{self.spec['base_url']} gave no verdict ({reasons}); none is made a verdict "
                f"and nothing is written. The {len(todo) - n} answered are kept in the score "
                "store, so a rerun asks only the failed ones",
            )
        return [self._verdict(k) for k in keys]

    def _verdict(self, key: bytes) -> Verdict:
        entry = self.store.get(key)
        assert entry is not None
        score, probs = entry
        verdict = _VALUE[score]
        evidence = None
        if probs is not None:
            evidence = float(probs[LABELS.index(verdict)])
        return Verdict(verdict, evidence, self.store.note(key) or "")

    def usage(self) -> dict[str, int]:
        """Questions asked and the endpoint client's counts (requests, retries, tokens from the
        API's usage field: :meth:`kit.guard.verifiers.llm.client.ChatClient.usage`)."""
        from kit.guard.verifiers.llm.client import no_usage

        base = self._client.usage() if self._client is not None else no_usage()
        return {"questions": self.asked, **base}

    def usage_line(self) -> str:
        retried = 0 if self._client is None else self._client.retried
        return (
            f"{self.spec['model']} at {self.spec['base_url']}: {self.hits} verdict(s) from the "
            f"score store, {self.asked} question(s) asked, {retried} request(s) retried, "
            f"{sum(self.failures.values())} without a verdict"
        )
