"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol (synthetic judge).

Not a mock of the client: the kit's httpx client talks to it over a loopback socket. The
"model" is a deterministic word-overlap judge: from the kit's prompt it reads the claim and the
passage back, and P(yes) = 0.02 + 0.96 * (share of the claim's words of 3+ letters that occur
in the passage) -- so tests can predict every score (:func:`p_yes`) and a supported pair ranks
above an unrelated one. Modes:

* ``logprobs`` -- temperature-0 answers with ``top_logprobs``: a whitespace token first, then
  the answer token, whose top list splits P(yes) over "Yes" and " yes" (case and whitespace
  differ) and lists "No" and an unrelated token;
* ``nologprobs`` -- an endpoint without log-probabilities (``logprobs: null``): each answer is
  yes with probability P(yes), drawn from sha256(seed, prompt) (deterministic per seed);
* ``error500`` -- every chat request answers HTTP 500;
* ``flaky`` -- the first request of each prompt answers HTTP 429, the next ones succeed;
* ``refuse`` -- answers "I cannot judge this." with no yes / no among the top tokens;
* ``slow`` -- waits 2 s before answering (longer than a test's client timeout);
* ``filter`` -- a content filter: a prompt holding one of ``state.filtered`` words answers HTTP
  400 (``content_filter``), one holding a ``state.cut`` word answers 200 with
  ``finish_reason: content_filter``; the others answer as ``logprobs``. Deterministic: the same
  prompt is refused every time;
* ``drift`` -- as ``logprobs`` on a prompt's first request; from its second request on, P(yes)
  becomes 1 - P(yes) for prompts whose claim holds a ``state.drift`` word (a non-deterministic
  endpoint, for self-consistency: exactly those verdicts flip).

Every 200 answer carries an OpenAI ``usage`` field (unless ``state.usage`` is False):
``prompt_tokens`` = whitespace-separated words of the prompt (:func:`prompt_tokens`),
``completion_tokens`` = words of the reply.

Checklist-judge prompts (the kit's template, kit.grade.judge_prompt: "Criterion: ...\n\nAnswer:
...") get a verdict from the same word overlap (:func:`judge_verdict`): share of the criterion's
words of 3+ letters found in the answer >= 0.5 -> met, >= 0.25 -> partial, else not_met; the
reply is "<verdict>: k of n criterion words appear in the answer." and, with log-probabilities,
the first token's top list gives the verdict 0.8 (split over two spellings) and the other two
labels 0.1 each -- so P(verdict) over the three labels is 0.8. The modes apply alike.

It counts chat requests (``chat``) and model listings (``models``), the most chat requests it
held at once (``max_inflight``), and records the Authorization headers it saw. Nothing beyond loopback is contacted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "overlap-judge"
_PROMPT = re.compile(r"Claim: (.*?)\n\nPassage: (.*?)\n\nDoes the passage", re.S)
_WORD = re.compile(r"[a-z0-9]{3,}")
_JUDGE = re.compile(r"Criterion: (.*?)\n\nAnswer: (.*?)\n\nReply with one word first", re.S)
_LABEL_TOKEN = {
    "met": ("met", "Met"),
    "partial": ("partial", " Partial"),
    "not_met": ("not", "Not"),
}


def judge_verdict(criterion: str, answer: str) -> tuple[str, str]:
    """The synthetic judge's (verdict, reason) for one (criterion, answer)."""
    words = set(_WORD.findall(criterion.lower()))
    seen = set(_WORD.findall(answer.lower()))
    k, n = len(words & seen), len(words)
    share = k / n if n else 0.0
    verdict = "met" if share >= 0.5 else "partial" if share >= 0.25 else "not_met"
    return verdict, f"{k} of {n} criterion words appear in the answer."


def _judge_choice(state: ServerState, body: dict, m: re.Match) -> tuple[int, dict]:
    verdict, reason = judge_verdict(m.group(1), m.group(2))
    if state.mode == "refuse":
        return 200, {
            "message": {"role": "assistant", "content": "I cannot grade this answer."},
            "logprobs": None,
        }
    text = f"{verdict}: {reason}"
    if state.mode == "nologprobs" or not body.get("logprobs"):
        return 200, {"message": {"role": "assistant", "content": text}, "logprobs": None}
    first, second = _LABEL_TOKEN[verdict]
    top = [{"token": first, "logprob": math.log(0.7)}, {"token": second, "logprob": math.log(0.1)}]
    top += [
        {"token": _LABEL_TOKEN[o][0], "logprob": math.log(0.1)}
        for o in _LABEL_TOKEN
        if o != verdict
    ]
    top.append({"token": "The", "logprob": math.log(1e-4)})
    content = [
        {"token": " ", "logprob": 0.0, "top_logprobs": [{"token": " ", "logprob": 0.0}]},
        {"token": first, "logprob": math.log(0.7), "top_logprobs": top},
    ]
    return 200, {
        "message": {"role": "assistant", "content": text},
        "logprobs": {"content": content},
    }


def prompt_tokens(prompt: str) -> int:
    """The server's usage count of a prompt: its whitespace-separated words."""
    return len(prompt.split())


def p_yes(claim: str, passage: str) -> float:
    """The synthetic judge's P(yes) for one (claim, passage window)."""
    words = set(_WORD.findall(claim.lower()))
    if not words:
        return 0.02
    seen = set(_WORD.findall(passage.lower()))
    return 0.02 + 0.96 * len(words & seen) / len(words)


@dataclass
class ServerState:
    mode: str = "logprobs"
    chat: int = 0
    models: int = 0
    attempts: Counter = field(default_factory=Counter)
    auth: set = field(default_factory=set)
    inflight: int = 0
    key: str = ""  # when set, both endpoints answer 401 without "Authorization: Bearer KEY"
    max_inflight: int = 0
    usage: bool = True  # add the usage field to 200 answers
    filtered: tuple[str, ...] = ()  # mode filter: HTTP 400 for prompts holding one of these
    cut: tuple[str, ...] = ()  # mode filter: finish_reason content_filter for these
    drift: tuple[str, ...] = ()  # mode drift: claims whose P(yes) flips from the 2nd request
    lock: threading.Lock = field(default_factory=threading.Lock)


def _choice(state: ServerState, body: dict, prompt: str) -> tuple[int, dict]:
    m = _PROMPT.search(prompt)
    judge = _JUDGE.search(prompt) if m is None else None
    if m is None and judge is None:
        return 400, {"error": {"message": "prompt not understood"}}
    with state.lock:
        state.attempts[prompt] += 1
        first = state.attempts[prompt] == 1
    if state.mode == "error500":
        return 500, {"error": {"message": "internal error"}}
    if state.mode == "flaky" and first:
        return 429, {"error": {"message": "rate limited"}}
    low = prompt.lower()
    if state.mode == "filter" and any(w in low for w in state.filtered):
        return 400, {"error": {"message": "content filtered", "code": "content_filter"}}
    if state.mode == "filter" and any(w in low for w in state.cut):
        return 200, {
            "message": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": "content_filter",
        }
    if judge is not None:
        return _judge_choice(state, body, judge)
    p = p_yes(m.group(1), m.group(2))
    if state.mode == "drift" and not first and any(w in m.group(1).lower() for w in state.drift):
        p = 1.0 - p
    if state.mode == "refuse":
        top = [{"token": "I", "logprob": math.log(0.9)}, {"token": "Sorry", "logprob": -3.0}]
        entry = {"token": "I", "logprob": math.log(0.9), "top_logprobs": top}
        return 200, {
            "message": {"role": "assistant", "content": "I cannot judge this."},
            "logprobs": {"content": [entry]} if body.get("logprobs") else None,
        }
    if state.mode == "nologprobs":
        seed = int(body.get("seed", 0))
        if float(body.get("temperature", 0)) == 0:
            yes = p >= 0.5
        else:
            u = int(hashlib.sha256(f"{seed}|{prompt}".encode()).hexdigest(), 16) / 16**64
            yes = u < p
        return 200, {
            "message": {"role": "assistant", "content": "Yes." if yes else "No."},
            "logprobs": None,
        }
    top = [
        {"token": "Yes", "logprob": math.log(0.9 * p)},
        {"token": " yes", "logprob": math.log(0.1 * p)},
        {"token": "No", "logprob": math.log(1 - p)},
        {"token": "Maybe", "logprob": math.log(1e-4)},
    ][: int(body.get("top_logprobs", 4))]
    answer = "Yes" if p >= 0.5 else "No"
    content = [
        {"token": "\n", "logprob": 0.0, "top_logprobs": [{"token": "\n", "logprob": 0.0}]},
        {"token": answer, "logprob": top[0]["logprob"], "top_logprobs": top},
    ]
    return 200, {
        "message": {"role": "assistant", "content": answer},
        "logprobs": {"content": content} if body.get("logprobs") else None,
    }


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refused(self) -> bool:
            if state.key and self.headers.get("Authorization", "") != f"Bearer {state.key}":
                self._send(401, {"error": {"message": "invalid api key"}})
                return True
            return False

        def do_GET(self) -> None:
            if self._refused():
                return
            if self.path.rstrip("/") == "/v1/models":
                with state.lock:
                    state.models += 1
                self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self._refused():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            with state.lock:
                state.chat += 1
                state.auth.add(self.headers.get("Authorization", ""))
                state.inflight += 1
                state.max_inflight = max(state.max_inflight, state.inflight)
            try:
                self._chat(body)
            finally:
                with state.lock:
                    state.inflight -= 1

        def _chat(self, body: dict) -> None:
            if state.mode == "slow":
                time.sleep(2.0)
            if body.get("model") != MODEL:
                self._send(404, {"error": {"message": f"model {body.get('model')} not found"}})
                return
            prompt = body["messages"][-1]["content"]
            status, choice = _choice(state, body, prompt)
            if status != 200:
                self._send(status, choice)
                return
            reply: dict = {
                "id": "cmpl-test",
                "object": "chat.completion",
                "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop", **choice}],
            }
            if state.usage:
                p_tok = prompt_tokens(prompt)
                c_tok = len(str(choice["message"]["content"]).split())
                reply["usage"] = {
                    "prompt_tokens": p_tok,
                    "completion_tokens": c_tok,
                    "total_tokens": p_tok + c_tok,
                }
            self._send(200, reply)

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) drops connections under concurrency

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that timed out has closed its socket: not an error of the server."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@dataclass
class Server:
    url: str  # base URL, ending in /v1
    state: ServerState

    def settle(self, quiet_s: float = 0.5, limit_s: float = 20.0) -> None:
        """Wait until no chat request is in flight and none arrived for ``quiet_s`` (requests
        a client gave up on are still served, late)."""
        end = time.monotonic() + limit_s
        seen = -1
        while time.monotonic() < end:
            with self.state.lock:
                now, busy = self.state.chat, self.state.inflight
            if busy == 0 and now == seen:
                return
            seen = now
            time.sleep(quiet_s)


@contextmanager
def serve(mode: str = "logprobs") -> Iterator[Server]:
    """A ThreadingHTTPServer on 127.0.0.1 at an ephemeral port, for the duration of the block."""
    state = ServerState(mode=mode)
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}/v1", state)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
