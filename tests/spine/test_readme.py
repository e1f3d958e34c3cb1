"""README.md is an executable contract: its commands run, in order, as a user types them.

The grammar (modes, ``exit N``, ``prints "..."``, promised paths) is in
:mod:`tests.spine.readme_contract`. How the commands run here:

* in a temporary copy of the project (its tracked and untracked-but-not-ignored files), so that
  relative paths work and nothing a command writes (``data/corpus/``, ...) lands in the checkout;
  the set-up's artifacts (``data/raw``, and for the slow run ``data/prepared``,
  ``data/verifier``, ``data/verifier-nli``) are linked in from the checkout;
* ``.venv/bin/kit`` and ``.venv/bin/python`` in the copy are shims that run the interpreter
  running this test (``python -m kit`` with the copy first on ``PYTHONPATH``), so the README's
  prefix resolves whether or not the checkout has a ``.venv`` and the code under test is the
  copy's;
* ``/tmp/`` in a command (and in its promised paths) is replaced by a per-test folder, so runs
  never collide; the score store is the test session's (``KIT_CACHE_DIR``, tests/conftest.py).

The fast run (default) runs the commands that need only what ``make test`` sets up; the slow run
runs every command but the set-up and the skipped ones, after ``make reproduce``.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.spine.readme_contract import (
    Command,
    ContractError,
    parse_pages,
    parse_readme,
    runs_in,
    unresolved_references,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
README = REPO_ROOT / "README.md"
# the pages whose commands the contract runs, in reading order: the README, then the pages it
# sends a reader to (what moved out of the README, in the order it was written there)
PAGES = (
    "README.md",
    "docs/verifiers.md",
    "docs/gold.md",
    "docs/audit.md",
    "docs/corpora.md",
    "docs/certify.md",
    "docs/inspect.md",
)
_BASH_FENCE = re.compile(r"^```bash\s*$", re.MULTILINE)
# pages with ```bash blocks the contract does not run, and why
NOT_RUN = {
    "containers/README.md": "builds container images with podman (hours)",
    "docs/llm-judge.md": "needs an LLM endpoint a lab runs",
    "docs/llm-verifier.md": "needs an LLM endpoint a lab runs",
    "docs/scale.md": "starts a Ray cluster",
}
# what the set-up commands leave behind: `make test` (its setup) and `make reproduce`
MAKE_TEST_OUTPUTS = (".venv", "data/raw")
MAKE_REPRODUCE_OUTPUTS = (
    *MAKE_TEST_OUTPUTS,
    "data/prepared",
    "data/tables",
    "data/verifier",
    "data/verifier-nli",
    "data/metrics",
)
# artifacts linked into the copy (read by commands, never written by them)
LINKED = {
    "fast": ("data/raw",),
    "slow": ("data/raw", "data/prepared", "data/verifier", "data/verifier-nli"),
}
TIMEOUT_S = {"fast": 180, "slow": 1800}


def project_files(root: Path) -> list[str]:
    """The project's files, relative to ``root``: tracked plus untracked-but-not-ignored."""
    res = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        pytest.fail(f"the README test needs a git checkout of the project: {res.stderr.decode()}")
    names = [n for n in res.stdout.decode().split("\0") if n]
    return sorted(n for n in dict.fromkeys(names) if (root / n).is_file())


def _exists_in(files: list[str]):
    folders = {str(Path(f).parent) for f in files}
    folders |= {str(p) for f in files for p in Path(f).parents}
    known = set(files) | folders

    def exists(path: str) -> bool:
        return path.rstrip("/") in known

    return exists


def _commands() -> list[Command]:
    return parse_pages([(p, (REPO_ROOT / p).read_text(encoding="utf-8")) for p in PAGES])


# -- the grammar ------------------------------------------------------------------------------

SAMPLE = """\
Intro.

```bash
make reproduce   # set up
```

<!-- readme-test: setup -->

```bash
make reproduce
make test
```

```bash
.venv/bin/kit simulate board --out /tmp/s.csv --seed 1
.venv/bin/kit certify /tmp/s.csv --design examples/d.yaml \\
    --out /tmp/cert     # writes /tmp/cert/board.html (docs/certify.md)
# a full-line comment
.venv/bin/kit board check --note "a # inside quotes"   # exit 1, prints "rows failing: 4"
.venv/bin/kit corpus build x --medline /data/pubmed   # readme-test: skip (needs MEDLINE files)
```

<!-- readme-test: slow (needs data/verifier-nli: make reproduce) -->
```bash
.venv/bin/kit audit /tmp/cert/x.jsonl --out /tmp/audit
```
"""


def test_parse_modes_exit_codes_promises_and_continuations() -> None:
    cmds = parse_readme(SAMPLE)
    assert [(c.block, c.mode) for c in cmds] == [
        (0, "fast"),
        (1, "setup"),
        (1, "setup"),
        (2, "fast"),
        (2, "fast"),
        (2, "fast"),
        (2, "skip"),
        (3, "slow"),
    ]
    certify = cmds[4]
    assert certify.text == (
        ".venv/bin/kit certify /tmp/s.csv --design examples/d.yaml --out /tmp/cert"
    )
    assert certify.line == 16 and certify.promised == ("/tmp/cert/board.html", "docs/certify.md")
    check = cmds[5]
    assert check.argv()[-1] == "a # inside quotes"
    assert (check.exit_code, check.prints) == (1, ("rows failing: 4",))
    assert cmds[6].reason == "needs MEDLINE files" and cmds[6].comment == ""
    assert cmds[7].reason == "needs data/verifier-nli: make reproduce"
    assert [runs_in(c, "fast") for c in cmds] == [
        True,
        False,
        False,
        True,
        True,
        True,
        False,
        False,
    ]
    assert [runs_in(c, "slow") for c in cmds] == [True, False, False, True, True, True, False, True]


@pytest.mark.parametrize(
    "bad",
    [
        "<!-- readme-test: slow -->\n```bash\nls\n```\n",  # no reason
        "```bash\nls  # readme-test: later (x)\n```\n",  # unknown mode
        "```bash\nls\n",  # never closed
        "```bash\nls \\\n```\n",  # ends inside a continued command
    ],
)
def test_grammar_errors(bad: str) -> None:
    with pytest.raises(ContractError):
        parse_readme(bad)


def test_references_to_missing_files_fail() -> None:
    cmds = parse_readme(SAMPLE)
    exists = _exists_in(["examples/d.yaml", "docs/certify.md"])
    assert unresolved_references(cmds, "fast", exists, MAKE_TEST_OUTPUTS) == []
    # the slow run reads /tmp/cert/x.jsonl: under --out /tmp/cert of an earlier command
    assert unresolved_references(cmds, "slow", exists, MAKE_REPRODUCE_OUTPUTS) == []
    gone = unresolved_references(cmds, "fast", _exists_in(["docs/certify.md"]), ())
    assert [(p.line, "examples/d.yaml" in p.message) for p in gone] == [(16, True)]
    no_doc = unresolved_references(cmds, "fast", _exists_in(["examples/d.yaml"]), ())
    assert ["docs/certify.md" in p.message for p in no_doc] == [True]
    # a file written only by a slow command does not exist for the fast run
    later = SAMPLE + "\n```bash\n.venv/bin/kit verify receipts /tmp/audit\n```\n"
    assert [p.line for p in unresolved_references(parse_readme(later), "fast", exists, ())] == [29]
    assert unresolved_references(parse_readme(later), "slow", exists, ()) == []
    bare = parse_readme("```bash\nkit corpus list\n```\n")
    assert "program 'kit'" in unresolved_references(bare, "fast", exists, ())[0].message


# -- the README itself ------------------------------------------------------------------------


def test_pages_are_read_in_order_with_their_names() -> None:
    cmds = parse_pages(
        [("README.md", SAMPLE), ("docs/x.md", "```bash\n.venv/bin/kit corpus list\n```\n")]
    )
    assert [c.page for c in cmds] == ["README.md"] * 8 + ["docs/x.md"]
    assert (cmds[-1].line, cmds[-1].text) == (2, ".venv/bin/kit corpus list")
    gone = unresolved_references(
        parse_pages([("docs/x.md", "```bash\n.venv/bin/kit audit /tmp/nowhere.jsonl\n```\n")]),
        "fast",
        _exists_in([]),
        (),
    )
    assert str(gone[0]).startswith("docs/x.md line 2:")


def test_every_page_with_commands_is_run_or_says_why_not() -> None:
    """A ```bash block on a project page is either in the contract (PAGES) or excused (NOT_RUN)."""
    pages = [
        f
        for f in project_files(REPO_ROOT)
        if f.endswith(".md") and _BASH_FENCE.search((REPO_ROOT / f).read_text(encoding="utf-8"))
    ]
    unaccounted = sorted(set(pages) - set(PAGES) - set(NOT_RUN))
    assert not unaccounted, (
        f"pages with commands the README test neither runs nor excuses: {unaccounted}"
    )
    assert all(p in pages for p in PAGES), "a page of PAGES holds no ```bash block"


def test_readme_starts_with_the_two_setup_commands() -> None:
    setup = [c.text for c in _commands() if c.mode == "setup"]
    assert setup == ["make reproduce", "make test"]


@pytest.mark.parametrize("mode", ["fast", "slow"])
def test_readme_references_resolve(mode: str) -> None:
    outputs = MAKE_TEST_OUTPUTS if mode == "fast" else MAKE_REPRODUCE_OUTPUTS
    problems = unresolved_references(
        _commands(), mode, _exists_in(project_files(REPO_ROOT)), outputs
    )
    assert not problems, "\n".join(map(str, problems))


def _shim(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _project_copy(dest: Path, mode: str) -> Path:
    for name in project_files(REPO_ROOT):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, target)
    for rel in LINKED[mode]:
        src = REPO_ROOT / rel
        if src.exists():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).symlink_to(src.resolve(), target_is_directory=True)
    bin_dir = dest / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    _shim(bin_dir / "python", f'exec "{sys.executable}" "$@"')
    _shim(bin_dir / "kit", f'exec "{sys.executable}" -m kit "$@"')
    return dest


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run_readme(mode: str, tmp: Path) -> list[tuple[str, int, float, float]]:
    """Run ``mode``'s commands in order; (page, line, wall s, CPU s) per command, printed."""
    root = _project_copy(tmp / "project", mode)
    scratch = tmp / "tmp"
    scratch.mkdir()
    env = dict(os.environ, PYTHONPATH=str(root), MPLBACKEND="Agg")
    from kit.registry.fetch import default_mirror

    mirror = default_mirror()
    if mirror is not None:
        env["KIT_MIRROR"] = str(mirror)
    timings = []
    for c in _commands():
        if not runs_in(c, mode):
            continue
        text = c.text.replace("/tmp/", f"{scratch}/")
        t0, c0 = time.perf_counter(), _cpu_children()
        res = subprocess.run(
            ["bash", "-c", text],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S[mode],
        )
        timings.append((c.page, c.line, time.perf_counter() - t0, _cpu_children() - c0))
        output = res.stdout + res.stderr
        where = f"{c.page} line {c.line}: {c.text}\n--- output (tail) ---\n{output[-3000:]}"
        assert res.returncode == c.exit_code, (
            f"exit {res.returncode}, {c.page} expects {c.exit_code}\n{where}"
        )
        for text_promised in c.prints:
            assert text_promised in output, f"does not print {text_promised!r}\n{where}"
        for p in c.promised:
            path = Path(p.replace("/tmp/", f"{scratch}/"))
            assert (path if path.is_absolute() else root / path).exists(), (
                f"promised {p} does not exist\n{where}"
            )
    for page, line, wall, cpu in timings:
        print(f"{page} line {line}: {wall:.1f} s wall, {cpu:.1f} s CPU")
    print(f"{mode}: {len(timings)} commands, {sum(t[2] for t in timings):.1f} s wall")
    return timings


def test_readme_fast_commands_run_in_order(tmp_path: Path) -> None:
    """Every fast README command, in order, exits as promised (no make reproduce needed)."""
    timings = _run_readme("fast", tmp_path)
    assert len(timings) >= 8  # the fast path covers the README's main examples


@pytest.mark.slow
def test_readme_every_command_runs_in_order(tmp_path: Path) -> None:
    """Every runnable README command, fast and slow, in order, after `make reproduce`."""
    missing = [rel for rel in LINKED["slow"] if not (REPO_ROOT / rel).exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: run `make reproduce` first")
    _run_readme("slow", tmp_path)
