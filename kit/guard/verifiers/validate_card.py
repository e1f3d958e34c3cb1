"""`kit guard validate`: validate a verifier card against a human-labelled sample (the shell).

docs/architecture.md, "Instruments and gold", *validated before trust*: before a verifier's scores are used,
its agreement with people is measured on a labelled sample and written on its card. This module
reads the sample, asks the instrument twice -- each time a fresh verifier object with the score
store bypassed (``store_root=None``), so the second pass measures the instrument, not a cache --
times the first pass, and hands the numbers to the pure core (:mod:`kit.guard.evaluation.validation`):
agreement with the base rates beside it, seed 001 Table 2 figures, self-consistency and cost.
The card folder is then copied (weights hard-linked where the file system allows) with the
``validation`` block on its card.json; nothing that decides a score changes, so the copy keeps
the original's identity sha256 and its score-store entries.

Any kind of verifier card is validated the same way (ONNX bi-encoder or cross-encoder, LLM):
the code never branches on the kind, except that a model behind an API reports its usage
(requests, tokens) and a local model does not.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kit.core.errors import InputError, Location
from kit.guard.verifiers.card_file import write_card

CARD = "card.json"
RECEIPTS = "receipts"
UNIT_PAIRS = "(claim, passage) pairs"


@dataclass(frozen=True)
class Pass:
    """One pass of an instrument over the sample: scores (NaN = refused), seconds, usage."""

    scores: np.ndarray
    seconds: float
    usage: dict[str, int] | None
    questions: int
    refusals: dict[str, int]


def instrument_of(card: Mapping[str, Any], kind: str | None = None) -> dict[str, str]:
    """What was validated: kind, name, and the identity the kit keys on
    (:func:`kit.guard.verifiers.card.card_identity`)."""
    from kit.guard.verifiers.card import card_identity

    field, sha = card_identity(card)
    return {
        "kind": str(kind or card["kind"]),
        "name": str(card["name"]),
        "identity_sha256": sha,
        "identity_field": field,
    }


def gold_block(path: Path, n_rows: int, n_items: int, unit: str, **extra: Any) -> dict[str, Any]:
    """The ``gold`` entry: the labelled sample's file name, sha256, rows, items and unit."""
    from kit.core.hashing import file_sha256

    return {
        "name": path.name,
        "sha256": file_sha256(path),
        "n_rows": int(n_rows),
        "n_items": int(n_items),
        "unit": unit,
        **extra,
    }


def _fresh(folder: Path, variant: str, device: str, batch_size: int) -> Any:
    """A new verifier object for ``folder`` whose scores bypass the score store (an LLM
    verifier's (claim, window) answers kept in memory only; an ONNX verifier keeps none)."""
    from kit.guard.verifiers.load import load_verifier

    v = load_verifier(folder, variant, device, batch_size, progress=False)
    bind = getattr(v, "bind_store", None)
    if bind is not None:
        bind(None)
    return v


def one_pass(
    folder: Path, claims: list[str], passages: list[str], variant: str, device: str, batch: int
) -> Pass:
    """Score every pair once with a fresh, store-less verifier; time the scoring only."""
    from kit.guard.verifiers.session import flatten_windows

    v = _fresh(folder, variant, device, batch)
    t0 = time.perf_counter()
    s = np.asarray(v.score(claims, passages), dtype=float)
    seconds = time.perf_counter() - t0
    usage_of = getattr(v, "usage", None)
    usage = None if usage_of is None else usage_of()
    if usage is not None:
        questions = int(usage.pop("questions"))
    else:
        window = getattr(v, "window", None)
        questions = len(flatten_windows(claims, passages, window)[0]) if window else len(claims)
    refusals = dict(getattr(v, "refusals", Counter()))
    close = getattr(getattr(v, "_client", None), "close", None)
    if close is not None:
        close()
    return Pass(s, seconds, usage, questions, refusals)


def validate_verifier(
    folder: Path,
    gold: Path,
    tau: float,
    label_map: Mapping[str, str],
    group_column: str | None,
    n_boot: int,
    seed: int,
    level: float = 0.95,
    variant: str = "fp32",
    device: str = "cpu",
    batch_size: int = 32,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the card with its validation block, the block) for the verifier card at ``folder``
    validated on the labelled pair table ``gold`` at decision threshold ``tau`` (supported iff
    s > tau, as the guard's flag rule s <= tau)."""
    from kit import __version__
    from kit.guard.evaluation.evaluate import evaluate_scores
    from kit.guard.evaluation.validation import (
        agreement_rows,
        cost_block,
        self_consistency,
        validation_entry,
        with_validation,
    )
    from kit.guard.scoring.pairtable import normalise_labels, read_pair_table
    from kit.guard.verifiers.load import load_card
    from kit.stats.agreement import agreement_row

    frame = read_pair_table(gold)
    if "label" not in frame.columns:
        raise InputError(
            "missing_column",
            "no 'label' column: validation needs human labels (supported / unsupported)",
            where=Location(str(gold), column="label"),
        )
    classes = normalise_labels(frame["label"], label_map).to_numpy(dtype=object)
    groups = None
    if group_column is not None or "group" in frame.columns:
        col = group_column or "group"
        if col not in frame.columns:
            raise InputError(
                "missing_column", f"no {col!r} column", where=Location(str(gold), column=col)
            )
        groups = frame[col].astype(str).to_numpy()
    card = load_card(folder)
    claims, passages = frame["claim"].tolist(), frame["passage"].tolist()
    first = one_pass(folder, claims, passages, variant, device, batch_size)
    second = one_pass(folder, claims, passages, variant, device, batch_size)
    ok = np.isfinite(first.scores)
    if not ok.any():
        raise InputError(
            "no_scores",
            f"the verifier gave no score for any of the {len(frame)} pairs (refused: "
            f"{first.refusals}); nothing to validate",
            where=Location(str(gold)),
        )
    rng = np.random.default_rng(seed)
    s, c = first.scores[ok], classes[ok]
    g = None if groups is None else groups[ok]
    table2 = evaluate_scores(s, c, tau, rng, groups=g, n_boot=n_boot, level=level)
    row = agreement_row(
        "supported",
        s > tau,
        c == "entailment",
        g,
        rng,
        n_boot,
        level,
        cluster_name=group_column or "group",
    )

    def decisions(x: np.ndarray) -> list[object]:
        return [None if not np.isfinite(v) else bool(v > tau) for v in x]

    consistency = self_consistency(
        decisions(first.scores),
        decisions(second.scores),
        level,
        scores=(first.scores, second.scores),
    ) | {
        "method": "every pair scored twice by two fresh verifier objects, the score store "
        f"bypassed both times; a flip = the decision s > {tau:g} differs"
    }
    entry = validation_entry(
        instrument=instrument_of(card),
        gold=gold_block(
            gold,
            len(frame),
            len(frame),
            UNIT_PAIRS,
            counts={
                k: int((classes == k).sum()) for k in ("entailment", "neutral", "contradiction")
            },
            clusters=None if groups is None else (group_column or "group"),
        ),
        decision=f"supported iff s > tau = {tau:g} (the guard flags s <= tau); gold supported = "
        "entailment, unsupported = neutral or contradiction",
        agreement=agreement_rows([row]),
        consistency=consistency,
        cost=cost_block(
            len(frame), first.seconds, first.usage, first.questions, "(claim, window) questions"
        ),
        missing=(int((~ok).sum()), first.refusals),
        parameters={
            "tau": tau,
            "n_boot": n_boot,
            "seed": seed,
            "level": level,
            "variant": variant,
            "device": device,
        },
        kit_version=__version__,
        table2=[r.to_dict() for r in table2],
    )
    return with_validation(card, entry), entry


def write_validated_card(src: Path, dst: Path, card: Mapping[str, Any]) -> None:
    """Fill the (staged, empty) folder ``dst`` with ``src``'s files -- hard links where the file
    system allows, copies otherwise; its ``receipts/`` left behind (the new folder is sealed
    afresh) -- and ``card`` as card.json."""
    src, dst = Path(src), Path(dst)
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] == RECEIPTS or rel == Path(CARD) or not path.is_file():
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
    write_card(dst, card)


def validation_lines(entry: Mapping[str, Any]) -> list[str]:
    """What a validation found, for the console (the card holds all of it)."""
    from kit.guard.evaluation.validation import finite

    def ci(est: object, lo: object, hi: object) -> str:
        e, a, b = finite(est), finite(lo), finite(hi)  # type: ignore[arg-type]
        if e is None:
            return "undefined"
        span = "" if a is None or b is None else f" [{a:.3f}, {b:.3f}]"
        return f"{e:.3f}{span}"

    inst, gold = entry["instrument"], entry["gold"]
    pct = f"{100 * float(entry['parameters']['level']):.4g}%"
    out = [
        f"validated {inst['name']} ({inst['kind']}, {inst['identity_field'].replace('_', ' ')} "
        f"{inst['identity_sha256'][:12]}) on {gold['n_items']} human-labelled {gold['unit']} of "
        f"{gold['name']} ({pct} CIs):",
        f"  decision: {entry['decision']}",
    ]
    for r in entry["agreement"]:
        out.append(
            f"  {r['level']}: n {r['n']}, base rate (people) {ci(r['base_rate_gold'], None, None)}"
            f", rate (instrument) {ci(r['rate_instrument'], None, None)}, observed "
            f"{ci(r['observed'], None, None)}; kappa {ci(r['kappa'], r['kappa_lo'], r['kappa_hi'])}"
            f", AC1 {ci(r['ac1'], r['ac1_lo'], r['ac1_hi'])}, PSA "
            f"{ci(r['positive_specific'], r['positive_specific_lo'], r['positive_specific_hi'])}"
            f", NSA "
            f"{ci(r['negative_specific'], r['negative_specific_lo'], r['negative_specific_hi'])}"
            f" ({r['ci_method']})" + (f"; {r['note']}" if r["note"] else "")
        )
    for r in entry.get("table2") or []:
        if r["metric"] in ("recall", "specificity", "auc") and r["subset"] in (
            "entailment",
            "unsupported",
            "entailment vs unsupported",
        ):
            out.append(f"  {r['metric']} {r['subset']}: {ci(r['estimate'], r['lo'], r['hi'])}")
    sc = entry["self_consistency"]
    out.append(
        f"  self-consistency: {sc['flipped'] if sc['flipped'] is not None else 'undefined'} of "
        f"{sc['n_compared']} decisions flipped when asked again, share "
        f"{ci(sc['flip_share'], sc['lo'], sc['hi'])}"
        + (
            f"; largest score change {sc['max_abs_score_change']:.3g}"
            if sc.get("max_abs_score_change") is not None
            else ""
        )
    )
    cost = entry["cost"]
    tokens = (
        f", {cost['prompt_tokens']} prompt + {cost['completion_tokens']} completion tokens "
        f"({cost['tokens_per_item']:.1f} per item)"
        if cost["tokens_per_item"] is not None
        else ""
    )
    calls = (
        f", {cost['requests']} requests ({cost['retried']} retried)"
        if cost["requests"] is not None
        else ""
    )
    out.append(
        f"  cost: {cost['seconds']:.3g} s for {cost['items']} items ({cost['seconds_per_item']:.3g}"
        f" s per item), {cost['questions']} {cost['question_unit']}{calls}{tokens}; {cost['note']}"
    )
    if entry["missing"]["n"]:
        reasons = ", ".join(f"{n} {r}" for r, n in entry["missing"]["reasons"].items())
        out.append(
            f"  without an answer: {entry['missing']['n']} item(s) (questions refused: {reasons})"
            " -- left out of every statistic, never a number"
        )
    return out
