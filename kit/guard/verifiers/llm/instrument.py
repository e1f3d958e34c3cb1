"""What every LLM instrument shares: the card's identity, the card folder, the first answer token.

Two instruments ask a chat model behind an OpenAI-compatible endpoint: the LLM verifier
(:mod:`kit.guard.verifiers.llm.verifier`, a yes / no question per (claim, window)) and the LLM
checklist judge (:mod:`kit.grade.llm_judge`, a verdict per (question, criterion, answer)). Both
speak through one client (:mod:`kit.guard.verifiers.llm.client`) and both use what is here:

* ``instrument_sha256`` = the sha256 of the canonical JSON of a card's pinned fields (the list is
  each card kind's ``PINNED``): the instrument's identity, the score store's partition;
* the card folder: the prompt template read and checked on import (:func:`read_template`), the
  error of a failed first question (:func:`first_question_failed`), ``card.json`` validated and
  written atomically (:func:`write_card_folder`), a loaded card's sha256s recomputed
  (:func:`check_pinned_card`);
* the reply's first answer token (:func:`answer_entry`, :func:`first_answer_position`,
  :func:`answer_of`), which the verifier's yes / no rules and the judge's verdict rules read.

docs/architecture.md, "Instruments and gold".
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kit.core import atomic
from kit.core.errors import ConfigError, InputError, IntegrityError, Location
from kit.guard.scoring.score_store import text_sha256
from kit.guard.verifiers.card_file import card_text, check_card
from kit.guard.verifiers.layout import CARD_NAME

# whitespace, ASCII punctuation and the word-start markers of SentencePiece / byte-level BPE
_STRIP = string.whitespace + string.punctuation + "\u2581\u0120"


def instrument_sha256(card: dict[str, Any], fields: Sequence[str]) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of the card's pinned ``fields``."""
    pinned = {k: card[k] for k in fields}
    return text_sha256(json.dumps(pinned, sort_keys=True, separators=(",", ":")))


def read_template(
    prompt: Path | None, default: str, check: Callable[[str], None], base_url: str
) -> str:
    """The prompt template of a card being imported: ``prompt``'s text or ``default``, checked
    by ``check``; ``base_url`` checked to be http(s). Shared by every LLM card kind."""
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError("bad_parameter", f"--base-url must start with http(s)://; got {base_url}")
    if prompt is not None and not Path(prompt).is_file():
        raise InputError("missing_file", "prompt template not found", where=Location(str(prompt)))
    template = default if prompt is None else Path(prompt).read_text(encoding="utf-8")
    check(template)
    return template


def first_question_failed(base_url: str, model: str, reason: str) -> ConfigError:
    """The error of an import whose first question to the endpoint failed."""
    return ConfigError(
        "endpoint_failed",
        f"{base_url}: a first question to model {model!r} failed ({reason}); "
        "check --model and the server's log",
    )


def write_card_folder(out: Path, card: dict[str, Any], schema: str) -> None:
    """Validate ``card`` against its JSON Schema and write ``out/card.json`` atomically."""
    from kit.core.schema import validate_json

    validate_json(card, schema, str(Path(out) / CARD_NAME))
    check_card(card, str(Path(out) / CARD_NAME))
    with atomic.staged_dir(out) as final:
        final.chmod(0o755)
        (final / CARD_NAME).write_text(card_text(card))


def check_pinned_card(
    card: dict[str, Any],
    where: str,
    schema: str,
    pinned: Sequence[str],
    check: Callable[[str], None],
    what: str,
) -> dict[str, Any]:
    """``card`` validated against its JSON Schema, its prompt sha256 and its instrument sha256
    (over ``pinned``) recomputed, its template checked by ``check``: an edited card is an
    IntegrityError naming ``where`` (``what``: the card's instrument, for the fix)."""
    from kit.core.schema import validate_json

    validate_json(card, schema, where)
    got = text_sha256(card["prompt_template"])
    if got != card["prompt_sha256"]:
        raise IntegrityError(
            "sha256_mismatch", f"{where}: prompt sha256 {got} != card {card['prompt_sha256']}"
        )
    got = instrument_sha256(card, pinned)
    if got != card["instrument_sha256"]:
        raise IntegrityError(
            "sha256_mismatch",
            f"{where}: instrument sha256 {got} != card {card['instrument_sha256']} (a pinned "
            f"field was edited; import the {what} again)",
        )
    check(card["prompt_template"])
    if "validation" in card:  # written by kit guard validate / kit grade validate-judge
        validate_json(card["validation"], "instrument_validation", where)
    return card


def answer_of(token: str) -> str:
    """A token's text as an answer: stripped of whitespace, punctuation and sub-word markers,
    lower-cased ("" when nothing is left)."""
    return token.strip(_STRIP).lower()


def first_answer_position(content: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first generated token whose text is more than whitespace / punctuation."""
    for entry in content:
        if answer_of(str(entry.get("token", ""))):
            return entry
    return None


def answer_entry(choice: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The log-probability entry of a chat completion choice's first answer token (None: the
    reply carries no log-probabilities, or no answer token)."""
    return first_answer_position((choice.get("logprobs") or {}).get("content") or [])
