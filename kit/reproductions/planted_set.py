"""The planted-truth audit set on disk: `kit grade planted` (shell side of :mod:`kit.grade.planted`).

The planted-truth generator is a construction for checking the audit, not part of an audit, so
no library module imports it; its consumers sit on the shell floor with the reproductions that
publish its tables (:mod:`kit.reproductions.grade`).
:func:`write_planted_set` draws a set from the fetched PubMedQA tables and writes runs.jsonl,
checklists.jsonl, failed_lookups.txt and design.json into one folder (its truth table, the
set's ``truth``, the command writes through the table emitter);
:func:`recovery` audits it with the lexical support scorer and names every judged rate whose
planted value falls outside its interval. docs/architecture.md, "Grading".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core import atomic
from kit.grade import planted as pl

JUDGED_METRICS = ("fabrication_rate", "wrong_paper_corrected", "transient_excluded")
"""The recovery metrics whose interval must cover the planted value (`--audit`, exit 1)."""


@dataclass(frozen=True)
class PlantedWritten:
    """A planted set written to a folder: the drawn set, its corpus and its checklist count."""

    corpus: pl.PlantedCorpus
    pset: pl.PlantedSet
    n_checklists: int


def write_planted_set(
    out_dir: Path, tables: dict[str, pd.DataFrame], design: pl.PlantedDesign, seed: int
) -> PlantedWritten:
    """Draw a planted set (seeded) from the PubMedQA ``tables`` and write four of its files (all but truth.csv)."""
    from kit.runs.v1 import run_line

    corpus = pl.build_corpus(
        tables["pubmedqa_items"], tables["pubmedqa_contexts"], tables["pubmedqa_meshes"], design
    )
    pset = pl.plant(corpus, design, np.random.default_rng(seed), seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out_dir / "runs.jsonl", "".join(run_line(r) + "\n" for r in pset.runs))
    tasks = sorted({r.task_id for r in pset.runs})
    cls = [pl.derive_checklist(corpus, t.removeprefix("pubmedqa-")) for t in tasks]
    atomic.write_text(
        out_dir / "checklists.jsonl",
        "".join(json.dumps(c.to_record(), sort_keys=True, ensure_ascii=False) + "\n" for c in cls),
    )
    atomic.write_text(
        out_dir / "failed_lookups.txt", "".join(v + "\n" for v in sorted(pset.failed_lookups))
    )
    meta = {
        "seed": seed,
        "n_answers": design.n_answers,
        "p_wrong": design.p_wrong,
        "p_fabricated": design.p_fabricated,
        "p_transient": design.p_transient,
        "wrong_given_found": design.wrong_given_found,
        "pool_items": len(corpus.pool),
    }
    atomic.write_text(out_dir / "design.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return PlantedWritten(corpus, pset, len(cls))


def recovery(written: PlantedWritten) -> tuple[pd.DataFrame, list[str]]:
    """Audit the planted set with the lexical scorer: the recovery table (without its note) and
    the judged metrics (:data:`JUDGED_METRICS`) whose interval misses the planted value."""
    from kit.grade.support import LexicalSupport

    corpus = written.corpus
    scorer = LexicalSupport.from_corpus(corpus.abstract[p] for p in sorted(corpus.abstract))
    rec = pl.audit_planted(corpus, written.pset, scorer, pl.LEXICAL_RULE)["recovery"]
    judged = rec[rec["metric"].isin(list(JUDGED_METRICS))]
    outside = [str(m) for m in judged.loc[~judged["covered"], "metric"]]
    return rec.drop(columns=["note"]), outside
