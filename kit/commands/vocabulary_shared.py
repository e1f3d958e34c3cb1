"""The vocabulary's shared concepts: option names spelled the same in every command group.

One :class:`Term` per concept (its option name and a line saying what it means);
:data:`SHARED_TERMS` holds those of the ``shared`` group, :mod:`kit.commands.vocabulary_specific`
those of one command, and :mod:`kit.commands.vocabulary` puts them together (``VOCABULARY``,
docs/vocabulary.md). Imports nothing heavy: ``kit --help`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One concept: its option name and what it means (one line)."""

    name: str
    meaning: str
    group: str = "specific"


SHARED = "shared"
"""The group of a concept shared across command groups (the other one: ``specific``)."""

SHARED_TERMS: dict[str, Term] = {
    # -- concepts shared across groups: one spelling everywhere ----------------------------
    "output": Term(
        "--out",
        "Where a command writes: a file (tables, artifacts) or a folder (sealed as a set).",
        SHARED,
    ),
    "format": Term(
        "--format",
        "Table format, the same five everywhere a table is printed or written: table, csv, "
        "json, markdown, latex (kit.core.tables.FORMATS).",
        SHARED,
    ),
    "raw": Term("--raw", "The fetched registry folder (default data/raw).", SHARED),
    "catalog": Term(
        "--catalog",
        "The DuckDB catalog file (default data/prepared/catalog.duckdb, built by kit db build).",
        SHARED,
    ),
    "tables": Term(
        "--tables",
        "The reproduced-tables folder (default data/tables): written by kit reproduce run, read "
        "by kit verify board and kit reproduce freeze.",
        SHARED,
    ),
    "verifier": Term(
        "--verifier",
        "A verifier: a built-in name (minilm-nli, minilm-bi) or a folder holding a card.json.",
        SHARED,
    ),
    "verifier_nli": Term(
        "--verifier-nli",
        "The cross-encoder for reproductions that declare needs: [verifier_nli].",
        SHARED,
    ),
    "verifier_loso": Term(
        "--verifier-loso",
        "The leave-one-source-out cards (data/verifier-loso, make reproduce-loso): shown by kit "
        "guard card, read by reproductions that declare needs: [verifier_loso].",
        SHARED,
    ),
    "alpha": Term(
        "--alpha",
        "Error level alpha: the conformal flag rule's miss tolerance (catch >= 1 - alpha of "
        "unsupported citations); an interval's coverage 1 - alpha (kit anchor).",
        SHARED,
    ),
    "alphas": Term(
        "--alphas",
        "Several alphas (START:STOP:STEP or a,b,c); a catch target T is the alpha 1 - T.",
        SHARED,
    ),
    "calibration": Term(
        "--calibration", "Calibration scores or artifact of the conformal flag rule.", SHARED
    ),
    "design": Term("--design", "The certification design YAML (kit certify).", SHARED),
    "seed": Term(
        "--seed", "Seed of every random draw (outputs are deterministic given it).", SHARED
    ),
    "corpus": Term("--corpus", "Corpus name(s), in resolution order.", SHARED),
    "corpus_root": Term("--corpus-root", "Folder of built corpora (default data/corpus).", SHARED),
    "cache_dir": Term(
        "--cache-dir", "The shared verifier score store (default data/scores).", SHARED
    ),
    "no_cache": Term("--no-cache", "Neither read nor write the score store.", SHARED),
    "checklists": Term("--checklists", "Frozen checklists JSONL.", SHARED),
    "device": Term("--device", "Where the verifier runs: cpu or cuda.", SHARED),
    "variant": Term("--variant", "Verifier weights: fp32 or int8 (quantised).", SHARED),
    "batch_size": Term(
        "--batch-size",
        "Pairs per forward pass: scored (a verifier), or per optimiser step (guard train).",
        SHARED,
    ),
    "yes_at": Term(
        "--yes-at", "Support score at or above which a citation supports its claim.", SHARED
    ),
    "partial_at": Term(
        "--partial-at", "Support score at or above which support is partial.", SHARED
    ),
    "max_answer_chars": Term(
        "--max-answer-chars", "Longest answer accepted in a runs file.", SHARED
    ),
    "skip_bad": Term(
        "--skip-bad", "Skip malformed input rows (counted, listed) instead of failing.", SHARED
    ),
    "quiet": Term("--quiet", "No progress on stderr.", SHARED),
    "label_map": Term("--label-map", "Extra label names of a pair table: SRC=DST,...", SHARED),
    "group_column": Term("--group-column", "Cluster column for cluster-bootstrap CIs.", SHARED),
    "n_boot": Term("--n-boot", "Bootstrap resamples.", SHARED),
    "n_cal": Term("--n-cal", "Calibration sample size(s).", SHARED),
    "tau": Term("--tau", "Decision threshold of the guard: flag when score <= tau.", SHARED),
    "threshold": Term(
        "--threshold", "A checklist item is solved iff its score >= threshold.", SHARED
    ),
    "tolerance": Term("--tolerance", "Allowed numeric difference (or solver tolerance).", SHARED),
    "epochs": Term("--epochs", "Passes over the training pairs.", SHARED),
    "name": Term("--name", "Name recorded in the artifact and shown in reports.", SHARED),
    "limit": Term("--limit", "Take at most N records.", SHARED),
    "mirror": Term(
        "--mirror",
        "Registry mirror folder (default $KIT_MIRROR, else ../shared/registry).",
        SHARED,
    ),
    "root": Term("--root", "Release root: a git work tree holding data.dvc and data/raw.", SHARED),
    "sources": Term("--sources", "The registry source list (kit/registry/sources.yaml).", SHARED),
    "skip_slow": Term("--skip-slow", "Skip reproductions declared slow.", SHARED),
    "skip": Term("--skip", "Leave out a reproduction by name (repeatable).", SHARED),
    "corpus_input": Term(
        "--table", "A JSONL / parquet / CSV table of documents (corpus build).", SHARED
    ),
    "medline": Term("--medline", "MEDLINE XML file(s) or folder (corpus build).", SHARED),
    "text_folder": Term("--text-folder", "A folder of .txt documents (corpus build).", SHARED),
    "mapping": Term("--map", "Column mapping of --table: id=COL,title=COL,...", SHARED),
    "id_scheme": Term("--id-scheme", "How to read a bare identifier (PMID, DOI, ...).", SHARED),
    "coverage": Term(
        "--coverage", "Declared coverage of a corpus (where notfound is meaningful).", SHARED
    ),
    "licence": Term("--licence", "The licence of a corpus's sources.", SHARED),
    "description": Term("--description", "One line saying what a corpus is.", SHARED),
}
