"""Tool-response replay cache (record / replay) keyed by the request's hash.

Seed 002 (OpenBioRQ), Discussion ("Difficulty construction", "Release and ethics"): live tools
drift, so the release ships "an ordered tool-response replay cache" that makes audited runs
replayable and re-gradable. Here a request is (tool, arguments); its key is
sha256(canonical JSON of {"tool": tool, "arguments": arguments}) with sorted keys and no
whitespace, so argument order never changes the key. In ``replay`` mode the tools answer only
from the cache and a miss raises :class:`ReplayMiss` naming the tool, the arguments and the key
-- never a silent live call. In ``record`` mode a live function answers and every response is
stored. The cache file is JSONL sorted by key, each entry's key re-checked on load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from kit.core import atomic, boundary
from kit.core.errors import ConfigError, InputError, IntegrityError, KitError, Location


class ReplayMiss(KitError):
    """A request the replay cache has never seen (exit status 2 through the CLI)."""

    def __init__(self, tool: str, arguments: Mapping[str, Any], key: str) -> None:
        super().__init__(
            "replay_miss",
            f"replay cache miss: tool {tool!r} with arguments "
            f"{canonical(arguments)} (request key {key}); replay mode never calls live tools -- "
            "record this request first or use the cache it was recorded in",
        )
        self.tool = tool
        self.arguments = dict(arguments)
        self.key = key


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """sha256 of the canonical request {"arguments": ..., "tool": ...}."""
    payload = canonical({"tool": tool, "arguments": dict(arguments)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def response_sha256(response: Any) -> str:
    return hashlib.sha256(canonical(response).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    key: str
    tool: str
    arguments: Mapping[str, Any] = field(hash=False)
    response: Any = field(hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "response": self.response,
            "response_sha256": response_sha256(self.response),
        }


class ReplayTools:
    """Tool dispatcher in ``record`` or ``replay`` mode over an in-memory cache."""

    def __init__(
        self,
        mode: str,
        cache: Mapping[str, CacheEntry] | None = None,
        live: Callable[[str, Mapping[str, Any]], Any] | None = None,
    ) -> None:
        if mode not in ("record", "replay"):
            raise ConfigError("bad_parameter", f"mode must be 'record' or 'replay'; got {mode!r}")
        if mode == "record" and live is None:
            raise ConfigError("bad_parameter", "record mode needs a live tool function")
        self.mode = mode
        self.cache: dict[str, CacheEntry] = dict(cache or {})
        self.live = live
        self.hits = 0
        self.misses = 0

    def __call__(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        key = request_key(tool, arguments)
        entry = self.cache.get(key)
        if entry is not None:
            self.hits += 1
            return entry.response
        self.misses += 1
        if self.mode == "replay":
            raise ReplayMiss(tool, arguments, key)
        assert self.live is not None
        response = self.live(tool, arguments)
        self.cache[key] = CacheEntry(key, tool, dict(arguments), response)
        return response


def save_cache(path: str | Path, cache: Mapping[str, CacheEntry]) -> Path:
    """Write the cache as JSONL sorted by key, atomically."""
    lines = [canonical(cache[k].to_dict()) for k in sorted(cache)]
    return atomic.write_text(path, "".join(line + "\n" for line in lines))


def load_cache(path: str | Path) -> dict[str, CacheEntry]:
    """Read a cache file; a key that is not the hash of its request is an IntegrityError."""
    src = str(path)
    out: dict[str, CacheEntry] = {}
    for line, obj in boundary.read_jsonl(path):
        if not isinstance(obj, dict):
            raise InputError("bad_entry", "expected an object", where=Location(src, line))
        for k in ("key", "tool", "arguments", "response"):
            if k not in obj:
                raise InputError(
                    "missing_field", f"missing field '{k}'", where=Location(src, line, k)
                )
        if not isinstance(obj["arguments"], dict):
            raise InputError(
                "bad_field", "expected an object", where=Location(src, line, "arguments")
            )
        key = request_key(obj["tool"], obj["arguments"])
        if obj["key"] != key:
            raise IntegrityError(
                "cache_key_mismatch",
                f"{src}, row {line}: key {obj['key']} is not the hash of its request ({key})",
            )
        if key in out:
            raise InputError(
                "duplicate_key",
                f"request key {key} appears twice",
                where=Location(src, line, "key"),
            )
        out[key] = CacheEntry(key, obj["tool"], obj["arguments"], obj["response"])
    return out


def replay_coverage(runs: Any, cache: Mapping[str, CacheEntry]) -> pd.DataFrame:
    """One row per recorded tool call of ``runs``: its request key, whether the cache holds it,
    and whether the cached response's sha256 equals the one the trace recorded (empty when the
    trace recorded none). A run is replayable iff every call is in the cache."""
    import pandas as pd

    rows = []
    for run in sorted(runs, key=lambda r: r.run_id):
        for i, call in enumerate(run.tool_calls):
            key = request_key(call.tool, call.arguments)
            entry = cache.get(key)
            match: object = None
            if entry is not None and call.response_sha256 is not None:
                match = response_sha256(entry.response) == call.response_sha256
            rows.append(
                {
                    "run_id": run.run_id,
                    "call_index": i,
                    "tool": call.tool,
                    "key": key,
                    "in_cache": entry is not None,
                    "response_match": match,
                }
            )
    cols = ["run_id", "call_index", "tool", "key", "in_cache", "response_match"]
    frame = pd.DataFrame(rows, columns=cols)
    frame["in_cache"] = frame["in_cache"].astype(bool)
    frame["response_match"] = frame["response_match"].astype("boolean")
    return frame
