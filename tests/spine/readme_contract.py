"""README.md (and the docs pages it sends a reader to) as an executable contract: their ```bash
blocks read as one list of commands (pure).

A block is what a user types, top to bottom. Each command carries what the README promises about
it and how the test runs it:

* **mode** -- ``fast`` (the default test run: needs only the repository and what ``make test``
  sets up, i.e. ``.venv`` and ``data/raw``), ``slow`` (needs an artifact ``make reproduce``
  builds, or takes minutes; run by ``pytest -m slow``), ``skip`` (needs files a user brings),
  ``setup`` (the set-up commands the test runs after). A block's mode is an HTML comment on the
  line before its fence, ``<!-- readme-test: slow (needs data/verifier-nli: make reproduce) -->``;
  a single command may override it with a trailing ``# readme-test: skip (reason)``. ``slow``
  and ``skip`` need a reason in parentheses.
* **expected exit status** -- ``0`` unless the trailing comment says ``exit N``.
* **promised output** -- ``prints "TEXT"`` in the trailing comment (TEXT must appear in stdout or
  stderr), and every path-like token of the trailing comment (``# /tmp/cert/board.html``) must
  exist after the command.

:func:`unresolved_references` is the static half of the contract: every path a command reads
must exist in the project, be made by the set-up, or be written (``--out``) or promised by an
earlier command that runs in the same mode.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

MODES = ("setup", "fast", "slow", "skip")
_NEEDS_REASON = ("slow", "skip")
_MARKER = re.compile(r"readme-test:\s*(\w+)\s*(?:\((.*)\))?\s*$")
_BLOCK_MARKER = re.compile(r"^\s*<!--\s*(readme-test:.*?)\s*-->\s*$")
_FENCE_OPEN = re.compile(r"^```bash\s*$")
_FENCE = re.compile(r"^```\s*$")
_EXIT = re.compile(r"\bexit (\d+)\b")
_PRINTS = re.compile(r'\bprints "([^"]+)"')
_DOI = re.compile(r"^10\.\d{4,9}/")
_EXTENSIONS = (
    ".csv",
    ".json",
    ".jsonl",
    ".yaml",
    ".yml",
    ".eval",
    ".txt",
    ".html",
    ".md",
    ".py",
    ".parquet",
    ".duckdb",
    ".xml",
    ".gz",
    ".onnx",
    ".png",
)
# options whose value is a path the command writes
OUTPUT_OPTIONS = ("--out", "--json", "--receipt")
# programs a command may start with on a fresh clone after the set-up (no `kit` on PATH)
PROGRAMS = ("make", ".venv/bin/kit", ".venv/bin/python")


class ContractError(ValueError):
    """The README breaks the contract's own grammar (line number in the message)."""


@dataclass(frozen=True)
class Command:
    """One command of a README bash block."""

    line: int  # README line (1-based) where the command starts
    block: int  # index of its bash block (0-based)
    text: str  # what bash runs: continuation lines joined, trailing comment removed
    comment: str  # the trailing comment, without '#'
    mode: str
    reason: str
    exit_code: int
    prints: tuple[str, ...]
    promised: tuple[str, ...]  # paths the comment says exist after the command
    page: str = "README.md"  # the page the command is written on (README.md or a docs/ page)

    def argv(self) -> list[str]:
        return shlex.split(self.text)


@dataclass(frozen=True)
class Problem:
    """A README command that breaks the contract before anything runs."""

    line: int
    command: str
    message: str
    page: str = "README.md"

    def __str__(self) -> str:
        return f"{self.page} line {self.line}: {self.message}\n    {self.command}"


def split_comment(line: str) -> tuple[str, str]:
    """``(code, comment)``: the first ``#`` outside quotes that starts a word begins a comment."""
    quote = ""
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def parse_marker(text: str, line: int) -> tuple[str, str] | None:
    """``(mode, reason)`` from ``readme-test: MODE (reason)`` inside ``text``; None if absent."""
    pos = text.find("readme-test:")
    if pos < 0:
        return None
    m = _MARKER.match(text[pos:])
    if m is None or m.group(1) not in MODES:
        raise ContractError(
            f"line {line}: marker {text[pos:]!r}: expected 'readme-test: MODE (reason)' with "
            f"MODE one of {', '.join(MODES)}"
        )
    mode, reason = m.group(1), (m.group(2) or "").strip()
    if mode in _NEEDS_REASON and not reason:
        raise ContractError(f"line {line}: 'readme-test: {mode}' needs a reason in parentheses")
    return mode, reason


def looks_like_path(token: str) -> bool:
    """A token naming a file or folder (not an option, URL, identifier, key=value or SQL)."""
    tok = token.rstrip(".,;:)")
    if not tok or tok[0] in "-(\"'" or any(c in tok for c in "=:* "):
        return False
    if _DOI.match(tok):
        return False
    return "/" in tok or tok.endswith(_EXTENSIONS)


def _promises(comment: str) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    m = _EXIT.search(comment)
    exit_code = int(m.group(1)) if m else 0
    prints = tuple(_PRINTS.findall(comment))
    rest = _PRINTS.sub("", comment)
    tokens = (t.strip("(),.;:") for t in rest.split())
    # in prose only absolute paths and file names with an extension are promises
    paths = tuple(
        t for t in tokens if looks_like_path(t) and (t.startswith("/") or t.endswith(_EXTENSIONS))
    )
    return exit_code, prints, paths


def parse_readme(text: str, page: str = "README.md") -> list[Command]:
    """Every command of every ```bash block of one page, in order (module doc for the grammar);
    ``page`` names the page in each command (and in the problems found with it)."""
    lines = text.splitlines()
    out: list[Command] = []
    block = -1
    i = 0
    while i < len(lines):
        if not _FENCE_OPEN.match(lines[i]):
            i += 1
            continue
        block += 1
        mode, reason = "fast", ""
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (bm := _BLOCK_MARKER.match(lines[j])):
            marker = parse_marker(bm.group(1), j + 1)
            assert marker is not None
            mode, reason = marker
        i += 1
        start = None
        parts: list[str] = []
        while i < len(lines) and not _FENCE.match(lines[i]):
            raw = lines[i]
            if start is None:
                if not raw.strip() or raw.lstrip().startswith("#"):
                    i += 1
                    continue
                start = i + 1
            if raw.rstrip().endswith("\\"):
                parts.append(raw.rstrip()[:-1].rstrip())
                i += 1
                continue
            code, comment = split_comment(raw)
            parts.append(code.strip())
            cmd_text = " ".join(p.strip() for p in parts if p.strip())
            c_mode, c_reason = mode, reason
            if (marker := parse_marker(comment, i + 1)) is not None:
                c_mode, c_reason = marker
                comment = comment[: comment.find("readme-test:")].strip()
            exit_code, prints, promised = _promises(comment)
            out.append(
                Command(
                    start,
                    block,
                    cmd_text,
                    comment,
                    c_mode,
                    c_reason,
                    exit_code,
                    prints,
                    promised,
                    page,
                )
            )
            parts, start = [], None
            i += 1
        if i >= len(lines):
            raise ContractError(f"the ```bash block of line {start or i} is never closed")
        if parts:
            raise ContractError(f"line {start}: the block ends inside a continued command")
        i += 1
    return out


def parse_pages(pages: Sequence[tuple[str, str]]) -> list[Command]:
    """The commands of several pages, ``(name, text)`` in reading order, as one sequence: the
    README first, then the pages it sends a reader to, each read after the ones before it."""
    return [c for name, text in pages for c in parse_readme(text, name)]


def runs_in(command: Command, mode: str) -> bool:
    """Whether the test of ``mode`` ('fast' or 'slow') runs this command: the fast test runs
    the fast commands, the slow test every command except the set-up and skipped ones."""
    if mode == "fast":
        return command.mode == "fast"
    return command.mode in ("fast", "slow")


def _covered(path: str, made: Iterable[str]) -> bool:
    p = path.rstrip("/")
    return any(p == m or p.startswith(m + "/") for m in (x.rstrip("/") for x in made))


def unresolved_references(
    commands: Sequence[Command],
    mode: str,
    exists: Callable[[str], bool],
    setup_outputs: Sequence[str],
) -> list[Problem]:
    """Commands of ``mode``'s run that read a path nobody provides, or start with a program a
    fresh clone lacks. ``exists(path)`` says whether a path ships with the project (relative to
    its root, or absolute); ``setup_outputs`` are the paths the set-up makes."""
    made: list[str] = list(setup_outputs)
    problems: list[Problem] = []
    for c in commands:
        if not runs_in(c, mode):
            continue
        argv = c.argv()
        if argv and argv[0] not in PROGRAMS:
            problems.append(
                Problem(
                    c.line,
                    c.text,
                    f"program {argv[0]!r}: a fresh clone has only {', '.join(PROGRAMS)} "
                    "(run kit as .venv/bin/kit)",
                    c.page,
                )
            )
        outputs = {argv[k + 1] for k, a in enumerate(argv[:-1]) if a in OUTPUT_OPTIONS}
        for k, tok in enumerate(argv[1:], start=1):
            if tok in outputs or not looks_like_path(tok):
                continue
            path = tok.rstrip(".,;:)")
            if _covered(path, made) or exists(path):
                continue
            problems.append(
                Problem(
                    c.line,
                    c.text,
                    f"argument {k} {path!r} does not exist in the project and no earlier "
                    f"command of the {mode} run writes it",
                    c.page,
                )
            )
        for p in c.promised:
            if not p.startswith("/") and not _covered(p, made) and not exists(p):
                problems.append(
                    Problem(
                        c.line, c.text, f"the comment names {p!r}, which does not exist", c.page
                    )
                )
        made += [*outputs, *c.promised]
    return problems
