"""The corpora a user can name: the built-in registry corpus ``pubmedqa`` and every corpus built
under the corpus root (``data/corpus/NAME/``). I/O edge.

``pubmedqa`` is the registry's 1,000 PubMedQA PQA-L abstracts (``pubmedqa/ori_pqal.json``),
declared a **sample** of PubMed: a PMID absent from it is ``unchecked``, never fabricated. The one
exception is a planted (construction-labelled) set, whose design plants every citation outside
these 1,000 papers as fabricated: :func:`pubmedqa_memory` with ``closed_world`` declares the
construction's closed world (complete PMID coverage), and every output that shows it says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kit.core.errors import ConfigError
from kit.corpus.coverage import Coverage
from kit.corpus.store import CorpusChain, DiskCorpus, MemoryCorpus

BUILTIN = ("pubmedqa",)
PUBMEDQA_DESCRIPTION = "PubMedQA PQA-L abstracts (registry pubmedqa/ori_pqal.json)"
PUBMEDQA_SAMPLE = Coverage(
    "PMID",
    "sample",
    "PubMedQA PQA-L: 1,000 expert-labelled PubMed abstracts, a sample of PubMed "
    "(absence proves nothing)",
)
PLANTED_CLOSED_WORLD = Coverage(
    "PMID",
    "complete",
    "closed world of a planted (construction-labelled, synthetic) set: its design plants every "
    "citation outside the 1,000 PubMedQA papers as fabricated",
    1,
    999_999_999,
)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def check_name(name: str) -> None:
    if not _NAME.match(name) or name in BUILTIN:
        raise ConfigError(
            "bad_corpus_name",
            f"corpus name {name!r}: lower-case letters, digits, '.', '_', '-'; not "
            f"{', '.join(BUILTIN)} (built in)",
        )


def pubmedqa_memory(
    abstracts: dict[str, str], failed: Sequence[str] = (), closed_world: bool = False
) -> MemoryCorpus:
    """The PubMedQA corpus from {pmid: abstract}; ``failed`` PMIDs replay recorded outages."""
    return MemoryCorpus(
        name="pubmedqa",
        description=PUBMEDQA_DESCRIPTION,
        coverage=(PLANTED_CLOSED_WORLD if closed_world else PUBMEDQA_SAMPLE,),
        aliases={("PMID", p): f"PMID:{p}" for p in abstracts},
        documents={f"PMID:{p}": t for p, t in abstracts.items()},
        failed=frozenset(("PMID", p) for p in failed),
    )


def built_names(root: Path) -> list[str]:
    """Names of the corpora built under ``root`` (those with a current manifest)."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "current" / "manifest.json").is_file())


def parse_names(text: str) -> list[str]:
    """``a,b`` -> ['a', 'b'] (the resolution order); ConfigError on empty or repeated names."""
    names = [n.strip() for n in text.split(",")]
    if not names or any(not n for n in names):
        raise ConfigError("bad_parameter", f"--corpus: expected NAME[,NAME...], got {text!r}")
    if len(set(names)) != len(names):
        raise ConfigError("bad_parameter", f"--corpus names a corpus twice: {text!r}")
    return names


def open_built(name: str, root: Path) -> DiskCorpus:
    if name not in built_names(root):
        known = ", ".join([*BUILTIN, *built_names(root)])
        raise ConfigError(
            "unknown_corpus",
            f"no corpus {name!r} (known: {known}; build one with `kit corpus build`, "
            f"corpus root {root})",
        )
    return DiskCorpus.open(root / name)


def open_chain(names: Sequence[str], root: Path, pubmedqa: MemoryCorpus | None) -> CorpusChain:
    """The corpora named, in order; ``pubmedqa`` is the built-in (already loaded by the caller)."""
    out: list[Any] = []
    for n in names:
        if n == "pubmedqa":
            if pubmedqa is None:
                raise ConfigError(
                    "unknown_corpus", "the pubmedqa corpus needs the registry (--raw)"
                )
            out.append(pubmedqa)
        else:
            out.append(open_built(n, root))
    return CorpusChain(tuple(out))


def describe(corpus: Any) -> dict[str, Any]:
    """A corpus as listed by `kit corpus list` and recorded in an audit summary."""
    return {
        "name": corpus.name,
        "description": corpus.description,
        "n_documents": corpus.n_documents(),
        "coverage": [c.to_dict() for c in corpus.coverage],
    }


def pubmedqa_from_registry(raw: Path) -> MemoryCorpus:
    """The built-in corpus read from the fetched registry (abstract = CONTEXTS in order)."""
    from kit.registry.loaders import pubmedqa_tables

    ctx = pubmedqa_tables(raw)["pubmedqa_contexts"].sort_values(["pmid", "section_index"])
    abstracts = {str(k): " ".join(v) for k, v in ctx.groupby("pmid", sort=True)["text"]}
    return pubmedqa_memory(abstracts)
