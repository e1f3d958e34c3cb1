"""The command line's vocabulary: one option name per concept, across every command group.

:data:`VOCABULARY` maps each concept to its one option name and a line saying what it means;
:data:`ALIASES` lists the old spellings still accepted for one release (hidden, with a warning
on stderr: :func:`kit.commands.options.deprecated_alias`). docs/vocabulary.md is rendered from
this module (:func:`markdown`); tests/spine/test_option_vocabulary.py walks every command and
fails on a name that is not here, an alias that is not declared, an option without help, or a
default shown as an absolute path of this machine.

Adding an option: reuse the name of its concept when there is one (``--out``, ``--raw``,
``--catalog``, ``--verifier``, ``--format``, ``--alpha``/``--alphas``, ``--seed``, ...); a new
concept gets a new entry here and a regenerated docs/vocabulary.md (``python -m
kit.commands.vocabulary > docs/vocabulary.md``). Imports nothing heavy: ``kit --help`` stays fast.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One concept: its option name and what it means (one line)."""

    name: str
    meaning: str
    group: str = "specific"


@dataclass(frozen=True)
class Alias:
    """An old spelling accepted for one release by the commands ``where``: use ``new`` instead."""

    old: str
    new: str
    where: tuple[str, ...]
    note: str = ""


_SHARED = "shared"

VOCABULARY: dict[str, Term] = {
    # -- concepts shared across groups: one spelling everywhere ----------------------------
    "output": Term(
        "--out",
        "Where a command writes: a file (tables, artifacts) or a folder (sealed as a set).",
        _SHARED,
    ),
    "format": Term(
        "--format",
        "Table format, the same five everywhere a table is printed or written: table, csv, "
        "json, markdown, latex (kit.core.tables.FORMATS).",
        _SHARED,
    ),
    "raw": Term("--raw", "The fetched registry folder (default data/raw).", _SHARED),
    "catalog": Term(
        "--catalog",
        "The DuckDB catalog file (default data/prepared/catalog.duckdb, built by kit db build).",
        _SHARED,
    ),
    "tables": Term(
        "--tables",
        "The reproduced-tables folder (default data/tables): written by kit reproduce run, read "
        "by kit verify board and kit reproduce freeze.",
        _SHARED,
    ),
    "verifier": Term(
        "--verifier",
        "A verifier: a built-in name (minilm-nli, minilm-bi) or a folder holding a card.json.",
        _SHARED,
    ),
    "verifier_nli": Term(
        "--verifier-nli",
        "The cross-encoder for reproductions that declare needs: [verifier_nli].",
        _SHARED,
    ),
    "verifier_loso": Term(
        "--verifier-loso",
        "The leave-one-source-out cards (data/verifier-loso, make reproduce-loso): shown by kit "
        "guard card, read by reproductions that declare needs: [verifier_loso].",
        _SHARED,
    ),
    "alpha": Term(
        "--alpha",
        "Error level alpha: the conformal flag rule's miss tolerance (catch >= 1 - alpha of "
        "unsupported citations); an interval's coverage 1 - alpha (kit anchor).",
        _SHARED,
    ),
    "alphas": Term(
        "--alphas",
        "Several alphas (START:STOP:STEP or a,b,c); a catch target T is the alpha 1 - T.",
        _SHARED,
    ),
    "calibration": Term(
        "--calibration", "Calibration scores or artifact of the conformal flag rule.", _SHARED
    ),
    "design": Term("--design", "The certification design YAML (kit certify).", _SHARED),
    "seed": Term(
        "--seed", "Seed of every random draw (outputs are deterministic given it).", _SHARED
    ),
    "corpus": Term("--corpus", "Corpus name(s), in resolution order.", _SHARED),
    "corpus_root": Term("--corpus-root", "Folder of built corpora (default data/corpus).", _SHARED),
    "cache_dir": Term(
        "--cache-dir", "The shared verifier score store (default data/scores).", _SHARED
    ),
    "no_cache": Term("--no-cache", "Neither read nor write the score store.", _SHARED),
    "checklists": Term("--checklists", "Frozen checklists JSONL.", _SHARED),
    "device": Term("--device", "Where the verifier runs: cpu or cuda.", _SHARED),
    "variant": Term("--variant", "Verifier weights: fp32 or int8 (quantised).", _SHARED),
    "batch_size": Term(
        "--batch-size",
        "Pairs per forward pass: scored (a verifier), or per optimiser step (guard train).",
        _SHARED,
    ),
    "yes_at": Term(
        "--yes-at", "Support score at or above which a citation supports its claim.", _SHARED
    ),
    "partial_at": Term(
        "--partial-at", "Support score at or above which support is partial.", _SHARED
    ),
    "max_answer_chars": Term(
        "--max-answer-chars", "Longest answer accepted in a runs file.", _SHARED
    ),
    "skip_bad": Term(
        "--skip-bad", "Skip malformed input rows (counted, listed) instead of failing.", _SHARED
    ),
    "quiet": Term("--quiet", "No progress on stderr.", _SHARED),
    "label_map": Term("--label-map", "Extra label names of a pair table: SRC=DST,...", _SHARED),
    "group_column": Term("--group-column", "Cluster column for cluster-bootstrap CIs.", _SHARED),
    "n_boot": Term("--n-boot", "Bootstrap resamples.", _SHARED),
    "n_cal": Term("--n-cal", "Calibration sample size(s).", _SHARED),
    "tau": Term("--tau", "Decision threshold of the guard: flag when score <= tau.", _SHARED),
    "threshold": Term(
        "--threshold", "A checklist item is solved iff its score >= threshold.", _SHARED
    ),
    "tolerance": Term("--tolerance", "Allowed numeric difference (or solver tolerance).", _SHARED),
    "epochs": Term("--epochs", "Passes over the training pairs.", _SHARED),
    "name": Term("--name", "Name recorded in the artifact and shown in reports.", _SHARED),
    "limit": Term("--limit", "Take at most N records.", _SHARED),
    "mirror": Term(
        "--mirror",
        "Registry mirror folder (default $KIT_MIRROR, else ../shared/registry).",
        _SHARED,
    ),
    "root": Term("--root", "Release root: a git work tree holding data.dvc and data/raw.", _SHARED),
    "sources": Term("--sources", "The registry source list (kit/registry/sources.yaml).", _SHARED),
    "skip_slow": Term("--skip-slow", "Skip reproductions declared slow.", _SHARED),
    "skip": Term("--skip", "Leave out a reproduction by name (repeatable).", _SHARED),
    "corpus_input": Term(
        "--table", "A JSONL / parquet / CSV table of documents (corpus build).", _SHARED
    ),
    "medline": Term("--medline", "MEDLINE XML file(s) or folder (corpus build).", _SHARED),
    "text_folder": Term("--text-folder", "A folder of .txt documents (corpus build).", _SHARED),
    "mapping": Term("--map", "Column mapping of --table: id=COL,title=COL,...", _SHARED),
    "id_scheme": Term("--id-scheme", "How to read a bare identifier (PMID, DOI, ...).", _SHARED),
    "coverage": Term(
        "--coverage", "Declared coverage of a corpus (where notfound is meaningful).", _SHARED
    ),
    "licence": Term("--licence", "The licence of a corpus's sources.", _SHARED),
    "description": Term("--description", "One line saying what a corpus is.", _SHARED),
    # -- options of one command ------------------------------------------------------------
    "gold": Term(
        "--gold",
        "Gold (human) labels: of a uniform random subset of the judged items (kit anchor, kit "
        "audit), or the labelled sample an instrument is validated on (guard validate, grade "
        "validate-judge).",
    ),
    "half_width": Term(
        "--half-width", "Target interval half-width of the gold sample size planner (kit anchor)."
    ),
    "judge_verdicts": Term("--judge-verdicts", "Imported judge verdicts (kit audit)."),
    "board": Term("--board", "Board score table to place the agent on (kit audit)."),
    "agent_scores": Term("--agent-scores", "The agent's rows for the board (kit audit)."),
    "agent_system": Term("--agent-system", "The agent's system name on the board (kit audit)."),
    "truth": Term("--truth", "Planted truth of a synthetic run set (kit audit)."),
    "failed_lookups": Term("--failed-lookups", "Simulated lookup outages (kit audit)."),
    "targets": Term("--targets", "Per-task normalisation targets for readouts (kit certify)."),
    "null_draws": Term("--null-draws", "Sign-flip draws for the calibration of kit certify."),
    "validate": Term("--validate", "Synthetic null and alternative boards for validity.csv."),
    "calibration_scope": Term(
        "--calibration-scope", "Readout forming the null family (kit certify)."
    ),
    "figure": Term("--figure", "Write the rank-interval figure (--no-figure: skip it)."),
    "k": Term("--k", "Number of search results (kit corpus search)."),
    "citations_out": Term(
        "--citations-out", "Also write one row per citation (grade audit-citations)."
    ),
    "guard_out": Term("--guard-out", "Also write the guard input JSONL (grade runs)."),
    "rates": Term("--rates", "Print solve rates with Wilson CIs (grade checklist)."),
    "agreement": Term("--agreement", "Agreement between two judges (grade checklist)."),
    "roster": Term("--roster", "Roster models that must all fail (grade frozen-core)."),
    "second": Term("--second", "Scores of a second decode (grade frozen-core)."),
    "judge": Term(
        "--judge",
        "The checklist judge: lexical (built in, the default and the baseline) or a card folder "
        "of kind llm-judge (grade judge, audit; written by grade import-judge).",
    ),
    "judge_name": Term("--judge-name", "The judge's name in the verdict table (grade judge)."),
    "replay_cache": Term("--cache", "The record/replay tool cache file (grade replay)."),
    "n_answers": Term("--n-answers", "Planted answers to generate (grade planted)."),
    "p_wrong": Term("--p-wrong", "Planted rate of unsupporting citations (grade planted)."),
    "p_fabricated": Term("--p-fabricated", "Planted rate of fabricated citations (grade planted)."),
    "p_transient": Term("--p-transient", "Planted rate of lookup outages (grade planted)."),
    "audit": Term("--audit", "Also run the audit of the planted set (grade planted)."),
    "lr": Term("--lr", "Learning rate (guard adapt)."),
    "folds": Term("--folds", "Cross-validation folds (guard adapt)."),
    "adapt_method": Term(
        "--method", "Fine-tune, recombine by a fitted rule, or the better of both (guard adapt)."
    ),
    "pooled": Term("--pooled", "One tau over all negative types (guard calibrate)."),
    "n_test": Term("--n-test", "Test size per split (guard coverage)."),
    "splits": Term("--splits", "Random calibration/test splits (guard coverage)."),
    "type_column": Term("--type-column", "Column of finer negative types (guard evaluate)."),
    "tokenizer": Term("--tokenizer", "The model's tokenizer.json (guard import-verifier)."),
    "labels": Term("--labels", "The model's output labels in order (guard import-verifier)."),
    "scoring": Term(
        "--scoring", "How a verifier's logits become a support score (guard import-verifier)."
    ),
    "relatedness": Term(
        "--relatedness", "A bi-encoder carried as the relatedness signal (guard import-verifier)."
    ),
    "max_length": Term(
        "--max-length", "Token limit of a (claim, passage) pair (guard import-verifier)."
    ),
    "n_items": Term("--n", "PubMedQA items to draw pairs from (guard pairs)."),
    "exclude": Term("--exclude", "An earlier pair table whose items are left out (guard pairs)."),
    "no_reattribute": Term("--no-reattribute", "Flag only, no BM25 re-attribution (guard run)."),
    "keep_types": Term("--keep-types", "pair_type values to keep (guard score)."),
    "engine": Term("--engine", "Where the verifier's model runs: local or ray (guard score)."),
    "ray_address": Term("--ray-address", "The Ray cluster (guard score --engine ray)."),
    "ray_workers": Term("--ray-workers", "Ray actors scoring in parallel (guard score)."),
    "ray_connect_timeout": Term(
        "--ray-connect-timeout", "Seconds to wait for the Ray cluster to answer (guard score)."
    ),
    "base": Term("--base", "The BERT-family model to start training from (guard train)."),
    "cap_per_source": Term("--cap-per-source", "Training pairs per source at most (guard train)."),
    "leave_out": Term("--leave-out", "Train without this source (guard train)."),
    "threads": Term("--threads", "torch CPU threads (guard train)."),
    "model": Term(
        "--model",
        "Model name: of imported runs (import lm-eval), or of the chat model an LLM verifier "
        "or checklist judge asks (guard import-verifier --base-url, grade import-judge).",
    ),
    "base_url": Term(
        "--base-url",
        "An OpenAI-compatible endpoint (vLLM, llama.cpp server, Ollama, a hosted API), up to "
        "/chat/completions (guard import-verifier, grade import-judge).",
    ),
    "api_key_env": Term(
        "--api-key-env",
        "Environment variable an LLM verifier or judge reads its API key from; keys are never "
        "stored.",
    ),
    "answer_rule": Term(
        "--answer-rule",
        "How an LLM's reply is read: a verifier's yes / no from top log-probabilities or the "
        "yes-share of sampled answers; a judge's verdict from the reply's first word, with "
        "log-probabilities as evidence when returned.",
    ),
    "samples": Term("--samples", "Answers sampled per question (LLM verifier, samples rule)."),
    "prompt": Term(
        "--prompt",
        "A frozen prompt template file: {claim} and {passage} (verifier), or {question}, "
        "{criterion} and {answer} (judge).",
    ),
    "concurrency": Term("--concurrency", "Requests in flight at once to a model endpoint."),
    "timeout": Term("--timeout", "Seconds one request to a model endpoint may take."),
    "retries": Term("--retries", "Retries of a failed request (transport error, HTTP 429 or 5xx)."),
    "backoff": Term(
        "--backoff", "Seconds before the first retry; doubled before each next (no jitter)."
    ),
    "task": Term("--task", "Task name of imported runs (import lm-eval)."),
    "lm_eval_filter": Term(
        "--filter", "The lm-eval filter whose responses are imported (import lm-eval)."
    ),
    "dvc_cache": Term("--dvc-cache", "DVC cache folder tried first (registry fetch)."),
    "no_dvc_cache": Term("--no-dvc-cache", "Skip the DVC cache (registry fetch)."),
    "offline": Term("--offline", "Never try upstream URLs (registry fetch)."),
    "receipt": Term(
        "--receipt", "Also write a JSON receipt of the fetched files (registry fetch)."
    ),
    "write": Term("--write", "Write DATA_LICENSES (registry licences)."),
    "check": Term("--check", "Exit 1 if DATA_LICENSES is out of date (registry licences)."),
    "manifest": Term("--manifest", "The release manifest to check (release verify)."),
    "make_target": Term("--target", "make target run inside the container (release container)."),
    "image": Term("--image", "Container image (release container)."),
    "host": Term("--host", "Docker API endpoint (release container)."),
    "title": Term("--title", "Page title (report board)."),
    "schema": Term("--schema", "Schema name (schema validate)."),
    "systems": Term("--systems", "True effect per synthetic system (simulate board)."),
    "n_tasks": Term("--tasks", "Synthetic tasks (simulate board)."),
    "clusters": Term("--clusters", "Synthetic task clusters (simulate board)."),
    "cluster_column": Term(
        "--cluster-column", "The column of a plain score table that holds the cluster (certify)."
    ),
    "readouts": Term("--readouts", "Synthetic readouts (simulate board)."),
    "fail_rate": Term("--fail-rate", "Synthetic failure rate (simulate board)."),
    "cluster_sd": Term("--cluster-sd", "SD of the synthetic cluster effects (simulate board)."),
    "noise_sd": Term("--noise-sd", "SD of the synthetic per-task noise (simulate board)."),
    "eps0": Term("--eps0", "Bound on the entry discrepancy W_0 (theory compose)."),
    "L_U": Term("--L-U", "Utility constant L_U (theory compose)."),
    "system_a": Term("--system-a", "First system of a distance (theory distance)."),
    "system_b": Term("--system-b", "Second system of a distance (theory distance)."),
    "gamma": Term("--gamma", "Continuation weight (theory distance)."),
    "beta": Term("--beta", "Label weight (theory distance)."),
    "entries": Term("--entries", "Entry laws for the whole-system distance (theory distance)."),
    "pairs_out": Term(
        "--pairs-out", "Also write the fixed point per state pair (theory distance)."
    ),
    "lam": Term("--lam", "Structure weight of Eq. (20) (theory fgw)."),
    "no_anchors": Term("--no-anchors", "Do not anchor shared paper ids (theory fgw)."),
    "masses": Term("--masses", "Node masses of Eq. (20) (theory fgw)."),
    "pair": Term("--pair", "Compare only these two graphs (theory fgw)."),
    "estimator": Term(
        "--estimator", "Estimator(s) of L_M: ratio_q95, ratio_sup, affine (theory lm)."
    ),
    "q": Term("--q", "Quantile level (theory lm)."),
    "lam_in": Term("--lam-in", "Entry weight of the window radius (theory radius)."),
    "expected": Term("--expected", "The frozen tables to compare against (verify board)."),
    "json_summary": Term("--json", "Also write the summary as JSON (verify board)."),
}

ALIASES: tuple[Alias, ...] = (
    Alias("--db", "--catalog", ("db build", "db tables", "query")),
    Alias("--dest", "--raw", ("registry fetch", "registry verify")),
    Alias("--out", "--tables", ("reproduce run",), "the tables folder"),
    Alias(
        "--container",
        "kit release container KIND",
        ("reproduce run",),
        "one way to run the reproduction in a container",
    ),
    Alias("--targets", "--alphas", ("guard coverage",), "a catch target T is the alpha 1 - T"),
    Alias("--tol", "--tolerance", ("theory distance",)),
    Alias("--design", "--estimator", ("theory lm",), "--design names the certification YAML"),
)

COMMAND_ALIASES: tuple[Alias, ...] = (
    Alias("kit corpus ingest", "kit corpus build", ("corpus",), "one name per command"),
)
"""Old command names kept (hidden, with a warning) for one release."""


def canonical_names() -> dict[str, str]:
    """Option name -> concept."""
    return {t.name: concept for concept, t in VOCABULARY.items()}


def markdown() -> str:
    """docs/vocabulary.md."""
    lines = [
        "# The command line's vocabulary",
        "",
        "One option name per concept across every `kit` command group. Rendered from",
        "`kit/commands/vocabulary.py` (`python -m kit.commands.vocabulary > docs/vocabulary.md`);",
        "`tests/spine/test_option_vocabulary.py` fails on an option outside it, an option without",
        "help text, or a default shown as an absolute path of one machine.",
        "",
        "## Shared concepts",
        "",
        "| option | concept | meaning |",
        "|---|---|---|",
    ]
    for group in (_SHARED, "specific"):
        if group == "specific":
            lines += ["", "## Options of one command", "", "| option | concept | meaning |"]
            lines += ["|---|---|---|"]
        for concept, t in sorted(VOCABULARY.items(), key=lambda kv: kv[1].name.lower()):
            if t.group == group:
                lines.append(f"| `{t.name}` | {concept} | {t.meaning.replace('|', '/')} |")
    lines += [
        "",
        "## Deprecated spellings (accepted for one release, with a warning on stderr)",
        "",
        "| old | use instead | in | note |",
        "|---|---|---|---|",
    ]
    for a in ALIASES:
        where = ", ".join(f"`kit {w}`" for w in a.where)
        lines.append(f"| `{a.old}` | `{a.new}` | {where} | {a.note} |")
    for a in COMMAND_ALIASES:
        lines.append(f"| `{a.old}` | `{a.new}` | (command) | {a.note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(markdown())
