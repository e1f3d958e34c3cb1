"""LLM verifiers selected by card: a chat model behind an OpenAI-compatible endpoint.

docs/architecture.md, "Instruments and gold": a card pins what the instrument is -- here the model name
and endpoint, the frozen prompt template and its sha256, the decoding (temperature 0, a few
tokens, top log-probabilities), the answer set {yes, no} and the answer rule
(:mod:`kit.guard.verifiers.llm.prompt`), and the window rule. Never a key: the card names the
environment variable the key is read from (``api_key_env``). ``instrument_sha256`` is the
sha256 of the canonical JSON of those pinned fields (:func:`instrument_sha256`); it is this
verifier's identity wherever the kit keys on a verifier's sha256. The in-memory
:class:`kit.guard.verifiers.card.ModelCard` has no ONNX file: its ``onnx_file`` and ``onnx_sha256``
are empty, and ``identity_sha256`` / ``identity_field`` give ``instrument_sha256`` -- the field
the score store, calibration artifacts and summaries key on and name
(:func:`kit.guard.verifiers.card.card_identity`).

Scores: s(c, p) = max over the passage's windows (the card's window rule) of the model's
answer score for (c, window). Every (claim, window) score goes through the shared score store
(:mod:`kit.guard.scoring.score_store`, partition = instrument sha256), flushed after each chunk of
calls, so a second run -- of any command -- asks the model nothing. A question is never made
a number when it has no answer:

* *refused* (the endpoint answers it deterministically with no score: HTTP 400 / 413 / 422, a
  content filter, a reply that is no yes / no; :mod:`kit.guard.verifiers.llm.client`): its window has no
  score, and so neither has its pair -- ``score`` returns NaN for it, counted in
  :attr:`LlmVerifier.refusals` and shown by the commands as a missing score (``score_status``
  ``refused``), never a number. Refusals are not written to the store (it holds numbers), so a
  rerun asks them again;
* *failed* (transport errors, HTTP 429 / 5xx after the retries, any other status): the command
  stops with :class:`ScoringFailed` (exit 2) naming how many failed and why, after the answered
  ones are stored (a rerun asks only the failed ones).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from kit.core.errors import ConfigError, KitError
from kit.guard.scoring.score_store import ScoreStore, pair_key, text_sha256
from kit.guard.scoring.windows import WindowSpec, passage_windows
from kit.guard.verifiers.llm.client import Answer, ChatClient, ClientSettings, Request
from kit.guard.verifiers.llm.instrument import (
    answer_entry,
    check_pinned_card,
    first_question_failed,
    instrument_sha256,
    read_template,
    write_card_folder,
)
from kit.guard.verifiers.llm.prompt import (
    ANSWERS,
    DEFAULT_TEMPLATE,
    LOGPROBS_RULE,
    check_template,
    render,
    samples_rule,
)

KIND = "llm"
CARD_FORMAT = 1
SCHEMA = "llm_verifier_card"
# an LLM reads more than a 256-token encoder: windows of 8 sentences at stride 4
LLM_WINDOW = WindowSpec(size=8, stride=4, max_words=400)
PINNED = ("kind", "model", "base_url", "prompt_sha256", "decoding", "answer_rule", "window")
WINDOW_MODE = {"format": 1, "kind": KIND, "unit": "claim-window"}
DEFAULT_SETTINGS = ClientSettings()
CHUNK = 64  # (claim, window) prompts asked between two store flushes
ANSWER_RULES = ("auto", "logprobs", "samples")
PROBE_CLAIM = "Aspirin lowered fever in the trial."
PROBE_PASSAGE = "In this randomised trial, aspirin lowered fever compared with placebo."


class ScoringFailed(KitError):
    """Some LLM calls gave no score (failed after retries, or refused): counted, never a number."""


def default_store_root() -> Path:
    """Where a verifier loaded outside `open_scorer` keeps its scores: KIT_CACHE_DIR, else the
    kit's default store (as every command's --cache-dir)."""
    from kit.guard.scoring.score_store import DEFAULT_STORE, ENV_VAR

    return Path(os.environ.get(ENV_VAR) or DEFAULT_STORE)


def build_card(
    model: str,
    base_url: str,
    template: str,
    method: str,
    name: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    settings: ClientSettings = DEFAULT_SETTINGS,
    max_tokens: int = 3,
    top_logprobs: int = 20,
    samples: int = 5,
    sample_temperature: float = 1.0,
    window: WindowSpec = LLM_WINDOW,
) -> dict[str, Any]:
    """The card.json of an LLM verifier (pure; its sha256s computed here)."""
    check_template(template)
    if method == "logprobs":
        decoding: dict[str, Any] = {
            "temperature": 0,
            "max_tokens": max_tokens,
            "top_logprobs": top_logprobs,
        }
        rule: dict[str, Any] = {"method": method, "answers": list(ANSWERS), "rule": LOGPROBS_RULE}
    elif method == "samples":
        decoding = {
            "temperature": sample_temperature,
            "max_tokens": max_tokens,
            "samples": samples,
            "seeds": f"0..{samples - 1}",
        }
        rule = {
            "method": method,
            "answers": list(ANSWERS),
            "rule": samples_rule(samples, sample_temperature),
            "k": samples,
            "temperature": sample_temperature,
        }
    else:
        raise ConfigError("bad_parameter", f"answer rule must be logprobs or samples; got {method}")
    card: dict[str, Any] = {
        "card_format": CARD_FORMAT,
        "kind": KIND,
        "name": name or f"{model} (LLM judge)",
        "model": model,
        "base_url": base_url.rstrip("/"),
        "api_key_env": api_key_env,
        "prompt_template": template,
        "prompt_sha256": text_sha256(template),
        "decoding": decoding,
        "answer_rule": rule,
        "window": asdict(window),
        "window_rule": window.describe(),
        "scoring_rule": f"{rule['rule']}; s = max over windows",
        "client": settings.to_dict(),
        "validated_on": "not validated by the kit: run `kit guard score` and `kit guard evaluate` "
        "on labelled pairs before trusting it",
        "source": f"imported by `kit guard import-verifier --base-url` (model {model})",
    }
    card["instrument_sha256"] = instrument_sha256(card, PINNED)
    return card


def _request(card: dict[str, Any]) -> Request:
    rule, dec = card["answer_rule"], card["decoding"]
    return Request(
        model=card["model"],
        method=rule["method"],
        max_tokens=int(dec["max_tokens"]),
        top_logprobs=int(dec.get("top_logprobs", 20)),
        samples=int(rule.get("k", 1)),
        sample_temperature=float(rule.get("temperature", 1.0)),
    )


def import_llm_verifier(
    model: str,
    base_url: str,
    out: Path,
    answer_rule: str = "auto",
    prompt: Path | None = None,
    name: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    settings: ClientSettings = DEFAULT_SETTINGS,
    samples: int = 5,
    sample_temperature: float = 1.0,
) -> dict[str, Any]:
    """Write the card folder of an LLM verifier after asking the endpoint once.

    The endpoint is probed (``GET /models``) and asked one temperature-0 question with top
    log-probabilities: ``answer_rule`` ``auto`` takes ``logprobs`` when the answer carries
    them, else ``samples`` (k answers at ``sample_temperature``; stated on the card). An
    unreachable endpoint, a refused key or a failed question is a ConfigError (exit 2) and
    nothing is written."""
    if answer_rule not in ANSWER_RULES:
        raise ConfigError(
            "bad_parameter", f"--answer-rule must be one of {', '.join(ANSWER_RULES)}"
        )
    template = read_template(prompt, DEFAULT_TEMPLATE, check_template, base_url)
    client = ChatClient(base_url, Request(model, "logprobs"), settings, api_key_env)
    try:
        client.probe()
        method = answer_rule
        if answer_rule != "samples":
            from kit.guard.verifiers.llm.client import CallFailed

            try:
                choice, _ = client.logprobs_choice(render(template, PROBE_CLAIM, PROBE_PASSAGE))
            except CallFailed as exc:
                raise first_question_failed(base_url, model, exc.reason) from None
            entry = answer_entry(choice)
            has = entry is not None and bool(entry.get("top_logprobs"))
            if answer_rule == "logprobs" and not has:
                raise ConfigError(
                    "no_logprobs",
                    f"{base_url} returned no top log-probabilities for model {model!r}; use "
                    "--answer-rule samples (the yes-share of k sampled answers)",
                )
            method = "logprobs" if has else "samples"
    finally:
        client.close()
    card = build_card(
        model,
        base_url,
        template,
        method,
        name=name,
        api_key_env=api_key_env,
        settings=settings,
        samples=samples,
        sample_temperature=sample_temperature,
    )
    write_card_folder(out, card, SCHEMA)
    return card


def check_llm_card(card: dict[str, Any], where: str) -> dict[str, Any]:
    """``card`` validated against its JSON Schema, its prompt and instrument sha256s checked."""
    return check_pinned_card(card, where, SCHEMA, PINNED, check_template, "verifier")


class LlmVerifier:
    """A chat model as a verifier: ``score(claims, passages)`` = max over windows of the
    model's yes-score, every (claim, window) answer read from or added to the score store."""

    def __init__(
        self,
        card: dict[str, Any],
        store_root: Path | None,
        client: ChatClient | None = None,
    ) -> None:
        from kit.guard.verifiers.card import ModelCard

        self.spec = card
        self.window = WindowSpec(**card["window"])
        self.template = card["prompt_template"]
        self.card = ModelCard(
            name=card["name"],
            kind=KIND,
            onnx_file="",
            onnx_sha256="",  # no ONNX file: the identity is instrument_sha256 (extra)
            tokenizer=f"the endpoint's own ({card['model']})",
            tokenizer_sha256="",
            max_length=int(card["decoding"]["max_tokens"]),
            scoring_rule=card["scoring_rule"],
            window_rule=card["window_rule"],
            validated_on=card["validated_on"],
            source=card["source"],
            extra={
                k: card[k]
                for k in ("model", "base_url", "prompt_sha256", "decoding", "answer_rule")
            }
            | {"instrument_sha256": card["instrument_sha256"]},
        )
        self._client = client
        self._probed = client is not None
        self.bind_store(store_root)
        self.asked = 0  # prompts sent to the model by this object (store misses)
        self.failures: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()  # (claim, window) questions refused, by reason

    def bind_store(self, root: Path | None) -> None:
        """Read and write (claim, window) scores under ``root`` (None: memory only)."""
        self.store = ScoreStore(root, self.card.identity_sha256, dict(WINDOW_MODE))

    def client(self) -> ChatClient:
        """The endpoint's client, probed once at the first store miss (a warm store never
        opens a connection)."""
        if self._client is None:
            settings = ClientSettings(**self.spec["client"])
            self._client = ChatClient(
                self.spec["base_url"], _request(self.spec), settings, self.spec["api_key_env"]
            )
        if not self._probed:
            self._client.probe()
            self._probed = True
        return self._client

    def _answers(self, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        """One score per (claim, window); NaN where the endpoint refused the question;
        :class:`ScoringFailed` when any question failed (module doc)."""
        keys = [pair_key(c, w) for c, w in zip(claims, windows, strict=True)]
        todo = sorted(
            {
                k: (c, w)
                for k, c, w in zip(keys, claims, windows, strict=True)
                if self.store.get(k) is None
            }.items()
        )
        failed: dict[bytes, str] = {}
        refused: dict[bytes, str] = {}
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            answers: list[Answer] = self.client().ask_all(
                [render(self.template, c, w) for _, (c, w) in chunk]
            )
            self.asked += len(chunk)
            for (k, _), a in zip(chunk, answers, strict=True):
                if a.score is not None:
                    self.store.add(k, min(1.0, max(0.0, float(a.score))))
                elif a.refused:
                    refused[k] = a.failure or "refused"
                    self.store.add(k, float("nan"))  # this process only: never written
                else:
                    failed[k] = a.failure or "failed"
            self.store.flush()
        self.failures.update(failed.values())
        self.refusals.update(refused.values())
        out = np.full(len(keys), np.nan)
        for i, k in enumerate(keys):
            e = self.store.get(k)
            if e is not None:
                out[i] = e[0]
        if failed:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(Counter(failed.values()).items()))
            raise ScoringFailed(
                "llm_calls_failed",
                f"{len(failed)} of {len(todo)} (claim, window) question(s) to "
                f"{self.spec['model']} at {self.spec['base_url']} gave no score ({reasons}); "
                f"none is made a number. The {len(todo) - len(failed)} answered are kept in the "
                "score store, so a rerun asks only the failed ones",
            )
        return out

    def usage_line(self) -> str:
        """What this object asked the endpoint: questions, retried requests, failures and
        refusals."""
        retried = 0 if self._client is None else self._client.retried
        failed = sum(self.failures.values())
        refused = sum(self.refusals.values())
        line = (
            f"{self.spec['model']} at {self.spec['base_url']}: {self.asked} (claim, window) "
            f"question(s) asked, {retried} request(s) retried, {failed} without a score"
        )
        if refused:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.refusals.items()))
            line += f", {refused} refused ({reasons}: missing scores, never a number)"
        return line

    def usage(self) -> dict[str, int]:
        """The endpoint client's counts (:meth:`kit.guard.verifiers.llm.client.ChatClient.usage`) and the
        questions asked; all 0 when nothing was asked (a warm store)."""
        from kit.guard.verifiers.llm.client import no_usage

        base = self._client.usage() if self._client is not None else no_usage()
        return {"questions": self.asked, **base}

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        """s per pair = max over the passage's windows (an empty passage: 0, as for every
        verifier); NaN for a pair any of whose windows the endpoint refused (its max is not
        known)."""
        from kit.guard.verifiers.session import flatten_windows

        flat_c, flat_w, owner = flatten_windows(claims, passages, self.window)
        out = np.zeros(len(claims), dtype=float)
        if flat_c:
            with np.errstate(invalid="ignore"):  # a refused window's NaN makes its pair NaN
                np.maximum.at(out, np.asarray(owner), self._answers(flat_c, flat_w))
        return out

    def window_scores(self, claim: str, passage: str) -> tuple[list[str], np.ndarray]:
        """Every window of ``passage`` and its score against ``claim``."""
        wins = passage_windows(passage, self.window)
        if not wins:
            return [], np.zeros(0)
        return wins, self._answers([claim] * len(wins), wins)


def load_llm_verifier(folder: Path, card: dict[str, Any], variant: str = "fp32") -> LlmVerifier:
    """The verifier of an LLM card folder (schema and sha256s checked; nothing is asked yet)."""
    where = str(Path(folder) / "card.json")
    if variant != "fp32":
        raise ConfigError(
            "bad_parameter", f"{folder}: an LLM verifier has no {variant} variant (fp32 only)"
        )
    return LlmVerifier(check_llm_card(card, where), default_store_root())
