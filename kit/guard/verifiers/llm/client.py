"""A small client of the OpenAI chat-completions protocol, for LLM verifiers (the network edge).

One request per (claim, window) prompt: ``POST {base_url}/chat/completions`` with the card's
model and decoding (temperature 0, a few tokens, ``logprobs: true, top_logprobs: N``), or, for
the ``samples`` answer rule, k requests at the card's sample temperature with seeds 0 .. k-1.
The API key, when the endpoint needs one, comes from the environment variable the card names
(never from the card). Any server speaking the protocol serves: vLLM, the llama.cpp server,
Ollama, a hosted API.

* Bounded concurrency: at most ``concurrency`` requests in flight (a thread pool).
* Timeouts per request; retries with exponential backoff on a transport error, HTTP 429 or
  5xx, on a fixed schedule (:func:`backoff_schedule`; no jitter, so a run's timing is
  reproducible). Any other HTTP status fails at once.
* A call that fails (after its retries) or is refused gives a :class:`Answer` with
  ``score=None`` and a ``failure`` reason: counted, never a number. *Refused* (``refused=True``)
  is an answer the endpoint gives deterministically for this prompt -- HTTP 400, 413 or 422
  (:data:`REFUSAL_STATUSES`: a request it will not take, e.g. a content filter or a prompt over
  its context), a reply cut by ``finish_reason: content_filter``, or a reply that is no answer
  (no yes / no); asking again would give the same, so the callers carry it as a missing score.
  Anything else that fails -- a transport error, 429 or 5xx after the retries, another HTTP
  status (401, 404: a wrong key or model) -- is a failure the callers stop on.
* Usage: every successful response's ``usage`` field (``prompt_tokens``,
  ``completion_tokens``, as the OpenAI protocol returns it) is summed per client
  (:meth:`ChatClient.usage`); responses without one are counted, so missing token counts are
  never reported as 0.
* :meth:`ChatClient.probe` asks ``GET {base_url}/models`` once: an endpoint that cannot be
  reached, or that refuses the key, is a ConfigError (exit 2) before anything is written.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from kit.core.errors import ConfigError
from kit.guard.verifiers.llm.instrument import answer_entry
from kit.guard.verifiers.llm.prompt import yes_probability, yes_share

T = TypeVar("T")
REFUSAL_STATUSES = (400, 413, 422)  # the endpoint will not take this request: not worth a retry


@dataclass(frozen=True)
class ClientSettings:
    """How calls are made (not what is asked: none of this changes a score)."""

    concurrency: int = 4
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "backoff_s": self.backoff_s,
        }


@dataclass(frozen=True)
class Request:
    """What is asked: model, decoding and answer rule (all pinned by the card's sha256)."""

    model: str
    method: str  # "logprobs" | "samples"
    max_tokens: int = 3
    top_logprobs: int = 20
    samples: int = 5
    sample_temperature: float = 1.0


@dataclass(frozen=True)
class Answer:
    """One prompt's outcome: a score in [0, 1], or None with the reason it has none."""

    score: float | None
    failure: str | None = None
    attempts: int = 1
    refused: bool = False  # deterministic for this prompt (module doc): a missing score


USAGE_KEYS = (
    "requests",
    "retried",
    "answered",
    "prompt_tokens",
    "completion_tokens",
    "without_usage",
)


def no_usage() -> dict[str, int]:
    """The usage of a client that sent nothing (every count 0)."""
    return dict.fromkeys(USAGE_KEYS, 0)


def backoff_schedule(retries: int, base_s: float) -> tuple[float, ...]:
    """Seconds to wait before retry 1 .. ``retries``: base * 2^(i-1) (1, 2, 4, ... x base)."""
    return tuple(base_s * 2**i for i in range(retries))


class CallFailed(Exception):
    """One HTTP exchange that gave no usable answer; ``retry`` says whether to try again."""

    def __init__(self, reason: str, retry: bool, refused: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.refused = refused


class ChatClient:
    """Chat-completions calls to one endpoint (``base_url`` ends before ``/chat/completions``,
    e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        request: Request,
        settings: ClientSettings = ClientSettings(),
        api_key_env: str = "OPENAI_API_KEY",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.request = request
        self.settings = settings
        self.api_key_env = api_key_env
        self.sleep = sleep
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(headers=headers, timeout=settings.timeout_s, trust_env=False)
        self.requests_sent = 0
        self.retried = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.answered = 0  # responses with a choice (status 200)
        self.without_usage = 0  # of those, how many carried no usage field
        self._lock = threading.Lock()

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------------ reachability

    def probe(self) -> None:
        """One ``GET /models``: a ConfigError when nothing answers at ``base_url`` or when the
        endpoint refuses the key (401 / 403). Any other answer, even a 404, means reachable."""
        import httpx

        url = f"{self.base_url}/models"
        try:
            r = self.http.get(url)
        except httpx.TransportError as exc:
            raise ConfigError(
                "endpoint_unreachable",
                f"the LLM verifier's endpoint {self.base_url} cannot be reached "
                f"({type(exc).__name__}: {exc}); start the server or fix the card's base_url "
                "(`kit guard import-verifier --base-url`)",
            ) from None
        if r.status_code in (401, 403):
            raise ConfigError(
                "endpoint_refused",
                f"{url} answered HTTP {r.status_code}: the endpoint refuses the key; set the "
                f"environment variable {self.api_key_env} (the card names it; keys are never "
                "stored on a card)",
            )

    # ------------------------------------------------------------------ one exchange

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        with self._lock:
            self.requests_sent += 1
        try:
            r = self.http.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.TimeoutException:
            raise CallFailed("timeout", retry=True) from None
        except httpx.TransportError as exc:
            raise CallFailed(f"connection ({type(exc).__name__})", retry=True) from None
        if r.status_code == 429 or r.status_code >= 500:
            raise CallFailed(f"http {r.status_code}", retry=True)
        if r.status_code in REFUSAL_STATUSES:
            raise CallFailed(f"refused (http {r.status_code})", retry=False, refused=True)
        if r.status_code != 200:
            raise CallFailed(f"http {r.status_code}", retry=False)
        try:
            data = r.json()
            choice = data["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            raise CallFailed("bad response (no choices)", retry=False) from None
        if not isinstance(choice, dict):
            raise CallFailed("bad response (no choices)", retry=False)
        self._count_usage(data.get("usage") if isinstance(data, dict) else None)
        if choice.get("finish_reason") == "content_filter":
            raise CallFailed("refused (content filter)", retry=False, refused=True)
        return choice

    def _count_usage(self, usage: object) -> None:
        """Add one response's token counts (its ``usage`` field) to the client's totals."""
        counts = None
        if isinstance(usage, dict):
            p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
            if isinstance(p, int) and isinstance(c, int) and p >= 0 and c >= 0:
                counts = (p, c)
        with self._lock:
            self.answered += 1
            if counts is None:
                self.without_usage += 1
            else:
                self.prompt_tokens += counts[0]
                self.completion_tokens += counts[1]

    def usage(self) -> dict[str, int]:
        """What this client has cost so far: requests sent (retries included), requests
        retried, responses answered, prompt and completion tokens summed over the responses
        that reported them, and how many responses reported none."""
        with self._lock:
            values = (
                self.requests_sent,
                self.retried,
                self.answered,
                self.prompt_tokens,
                self.completion_tokens,
                self.without_usage,
            )
        return dict(zip(USAGE_KEYS, values, strict=True))

    def _with_retries(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        waits = backoff_schedule(self.settings.retries, self.settings.backoff_s)
        for attempt in range(len(waits) + 1):
            try:
                return self._post(body), attempt + 1
            except CallFailed as exc:
                if not exc.retry or attempt == len(waits):
                    exc.attempts = attempt + 1  # type: ignore[attr-defined]
                    raise
                with self._lock:
                    self.retried += 1
                self.sleep(waits[attempt])
        raise AssertionError("unreachable")  # pragma: no cover

    def _body(self, prompt: str) -> dict[str, Any]:
        return {
            "model": self.request.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": self.request.max_tokens,
        }

    def logprobs_choice(self, prompt: str) -> tuple[dict[str, Any], int]:
        """The raw choice of one temperature-0 request with top log-probabilities."""
        body = self._body(prompt) | {"logprobs": True, "top_logprobs": self.request.top_logprobs}
        return self._with_retries(body)

    # ------------------------------------------------------------------ one prompt

    def ask(self, prompt: str) -> Answer:
        """The score of one prompt under the card's answer rule (or why it has none)."""
        try:
            if self.request.method == "logprobs":
                choice, attempts = self.logprobs_choice(prompt)
                entry = answer_entry(choice)
                if entry is None:
                    return Answer(None, "no log-probabilities returned", attempts)
                s = yes_probability(entry.get("top_logprobs") or [])
                if s is None:
                    return Answer(
                        None, "refused (no yes / no among the top tokens)", attempts, True
                    )
                return Answer(s, None, attempts)
            texts, attempts = [], 0
            for seed in range(self.request.samples):
                body = self._body(prompt) | {
                    "temperature": self.request.sample_temperature,
                    "seed": seed,
                }
                choice, n = self._with_retries(body)
                attempts += n
                texts.append(str((choice.get("message") or {}).get("content") or ""))
            s = yes_share(texts)
            if s is None:
                return Answer(None, "refused (no sampled answer was yes or no)", attempts, True)
            return Answer(s, None, attempts)
        except CallFailed as exc:
            return Answer(None, exc.reason, getattr(exc, "attempts", 1), exc.refused)

    def reply(self, prompt: str) -> tuple[dict[str, Any], int]:
        """The raw choice of one temperature-0 request (with top log-probabilities under the
        ``logprobs`` method) and the attempts it took; :class:`CallFailed` after the retries."""
        if self.request.method == "logprobs":
            return self.logprobs_choice(prompt)
        return self._with_retries(self._body(prompt))

    def map(self, fn: Callable[[str], T], prompts: Sequence[str]) -> list[T]:
        """``fn`` on every prompt, in order, at most ``concurrency`` in flight."""
        if not prompts:
            return []
        workers = max(1, min(self.settings.concurrency, len(prompts)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, prompts))

    def ask_all(self, prompts: Sequence[str]) -> list[Answer]:
        """One :class:`Answer` per prompt, in order, at most ``concurrency`` in flight."""
        return self.map(self.ask, prompts)
