"""A verifier card's validation as tables: held-out groups, and leave-one-source-out cards.

Pure functions on parsed card.json dicts (:func:`validation_table`, :func:`loso_table`) and one
reader at the edge (:func:`read_loso_cards`, through :func:`kit.guard.verifiers.load.load_card`). ``kit guard card`` prints them; the board's
``guard_verifier_validation`` and ``guard_verifier_loso`` reproductions freeze them. Nothing is
re-scored here: the tables state exactly what the cards recorded when they were trained.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from kit.core.errors import InputError, Location
from kit.guard.verifiers.build_record import read_build_record
from kit.guard.verifiers.load import load_card

# who labelled each registry source (nli/README.md); PubMedQA groups are construction-labelled
HUMAN = {
    "scifact": "human (experts)",
    "check_covid": "human (experts)",
    "covidfact": "human-validated; refuted claims machine-generated",
    "climate_fever": "human (annotators)",
    "sick": "human (crowd)",
    "snli": "human (crowd)",
}
CONSTRUCTED = "construction-labelled (not human gold)"

# what must match between a leave-one-source-out card and the default for it to validate the
# default's recipe (the card's training section)
RECIPE_FIELDS = ("recipe", "base_weights_sha256", "data_sha256", "device")

LOSO_HINT = (
    "build them with `make reproduce-loso` (= `dvc repro verify-loso`: about 30 min a source on "
    "2 CPU cores, cached) or `kit guard train --leave-out SOURCE --out FOLDER/SOURCE`"
)


def labels_of(source: str) -> str:
    """How a registry source's labels were made, in words."""
    return CONSTRUCTED if source == "pubmedqa" else HUMAN.get(source, "see nli/README.md")


def _auc(entry: dict[str, Any] | None, key: str) -> float | None:
    return None if entry is None else entry.get(key)


def verifier_label(card: dict[str, Any]) -> str:
    """``name (first 12 hex of the fp32 sha256)``: how the tables name a card."""
    return f"{card['name']} ({card['onnx_sha256'][:12]})"


def validation_table(card: dict[str, Any]) -> pd.DataFrame:
    """One row per held-out group of a trained card (``extra.validation.groups``): AUC
    supported-vs-unsupported with its DeLong CI, against contradicted and against neutral pairs,
    per-class recall and specificity of the argmax class, kappa -- beside the bi-encoder's AUC
    on the same pairs (seed 001, Table 2 protocol)."""
    extra = card["extra"]
    val = extra["validation"]
    rows = []
    for group, g in sorted(val["groups"].items()):
        bi = val["bi_encoder_same_pairs"].get(group, {})
        src = group.split(":")[0]
        pc = g.get("per_class", {})
        u = g.get("auc_unsupported") or {}
        rows.append(
            {
                "group": group,
                "labels": labels_of(src),
                "n": g["n"],
                "auc_unsupported": u.get("auc"),
                "auc_lo": u.get("lo"),
                "auc_hi": u.get("hi"),
                "auc_contradiction": _auc(g.get("auc_contradiction"), "auc"),
                "auc_neutral": _auc(g.get("auc_neutral"), "auc"),
                "bi_encoder_auc_unsupported": _auc(bi.get("auc_unsupported"), "auc"),
                "bi_encoder_auc_contradiction": _auc(bi.get("auc_contradiction"), "auc"),
                "recall_entailment": pc.get("entailment", {}).get("recall"),
                "specificity_entailment": pc.get("entailment", {}).get("specificity"),
                "recall_contradiction": pc.get("contradiction", {}).get("recall"),
                "kappa": g.get("kappa"),
                "trained_on_source": src in extra["training"]["train_pairs"],
            }
        )
    table = pd.DataFrame(rows)
    table["verifier"] = verifier_label(card)
    table["scoring"] = extra["scoring"]
    return table


def same_recipe(loso: dict[str, Any], default: dict[str, Any], source: str) -> bool:
    """True when ``loso`` was trained as ``default`` was, less ``source``: same recipe, base
    weights, data sha256s and device (the cards' training sections)."""
    t, d = loso["extra"]["training"], default["extra"]["training"]
    return t.get("leave_out") == source and all(t.get(k) == d.get(k) for k in RECIPE_FIELDS)


def train_seconds(card: dict[str, Any], where: str) -> float | None:
    """The training's seconds from the build record beside the card (``where``: its card.json),
    else from a card written before build records existed, else None (a card from the DVC cache
    carries no build record: seconds are a reading of a machine, not of the weights)."""
    build = read_build_record(Path(where).parent)
    if build is not None:
        return build.get("train_seconds")
    return card["extra"]["training"].get("train_seconds")


def loso_table(default: dict[str, Any], cards: list[tuple[str, dict[str, Any]]]) -> pd.DataFrame:
    """One row per leave-one-source-out card and comparison: the card trained without a source,
    scored on every pair of it (``validation.left_out``: its chosen rule against the bi-encoder
    on the same pairs, paired, cluster bootstrap by claim), beside the group's per-class
    figures. ``same_recipe_as_default`` checks the card against ``default``
    (:func:`same_recipe`). ``cards`` are (where, card) pairs; a card that is not a
    leave-one-source-out card is refused, named by ``where``."""
    rows = []
    for where, card in cards:
        extra = card["extra"]
        source = extra["training"].get("leave_out")
        left = extra["validation"].get("left_out", {})
        if not source or not left:
            raise InputError(
                "bad_card",
                "not a leave-one-source-out card: its training has no leave_out or its "
                "validation no left_out section (train it with `kit guard train --leave-out`)",
                where=Location(where),
            )
        for group, entry in sorted(left.items()):
            g = extra["validation"]["groups"][group]
            pc = g.get("per_class", {})
            for r in entry["vs_bi_encoder"]:
                rows.append(
                    {
                        "left_out": source,
                        "subset": r["subset"],
                        "labels": labels_of(source),
                        "n_pos": r["n_pos"],
                        "n_neg": r["n_neg"],
                        "auc_recipe": r["auc_a"],
                        "auc_bi_encoder": r["auc_b"],
                        "difference": r["difference"],
                        "lo": r["lo"],
                        "hi": r["hi"],
                        "p_value": r["p_value"],
                        "ci_method": r["ci_method"],
                        "recall_entailment": pc.get("entailment", {}).get("recall"),
                        "specificity_entailment": pc.get("entailment", {}).get("specificity"),
                        "recall_contradiction": pc.get("contradiction", {}).get("recall"),
                        "kappa": g.get("kappa"),
                        "scoring": extra["scoring"],
                        "train_seconds": train_seconds(card, where),
                        "same_recipe_as_default": same_recipe(card, default, source),
                        "verifier": verifier_label(card),
                    }
                )
    return pd.DataFrame(rows)


def read_loso_cards(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every ``SOURCE/card.json`` under ``folder``, sorted; none is an error that says how to
    build them."""
    paths = sorted(Path(folder).glob("*/card.json"))
    if not paths:
        raise InputError(
            "missing_file",
            f"no leave-one-source-out card (SOURCE/card.json) in this folder; {LOSO_HINT}",
            where=Location(str(folder)),
        )
    return [(str(p), load_card(p.parent)) for p in paths]


def card_lines(card: dict[str, Any], build: dict[str, Any] | None = None) -> list[str]:
    """A card's summary as ``kit guard train / adapt / import-verifier / card`` print it.

    ``build``: the card's build record (:mod:`kit.guard.verifiers.build_record`), for the speed
    it measured. An LLM card: its pinned fields (what the score store's key covers).
    """
    from kit.guard.evaluation.compare import row_line

    if card.get("kind") == "llm":
        return [
            f"verifier: {card['name']}",
            f"  kind llm; model {card['model']} at {card['base_url']}",
            f"  prompt sha256 {card['prompt_sha256']}; decoding {card['decoding']}",
            f"  answer rule: {card['answer_rule']['rule']}",
            f"  instrument sha256 {card['instrument_sha256']} (the score store's key)",
            f"  API key read from ${card['api_key_env']} when set (never stored)",
        ]
    lines = [
        f"verifier: {card['name']}",
        f"  kind {card['kind']}; scoring: {card['scoring_rule']}",
        f"  fp32 sha256 {card['onnx_sha256']}",
    ]
    if "int8_sha256" in card.get("extra", {}):
        lines.append(f"  int8 sha256 {card['extra']['int8_sha256']}")
    lines.append(f"  validated on: {card['validated_on']}")
    for group, entry in card.get("extra", {}).get("validation", {}).get("left_out", {}).items():
        lines.append(f"  {group}: {entry['n']} pairs never trained on, paired with the bi-encoder:")
        for r in entry["vs_bi_encoder"]:  # A = this card, B = the bi-encoder
            lines.append(f"    {row_line(r)}")
    speed = (build or {}).get("speed")
    if speed:
        r = speed["pairs_per_s"]
        verdict = "meets" if speed["int8_meets_target"] else "is below"
        lines.append(
            f"  speed here: int8 {r['int8']} / fp32 {r['fp32']} short pairs/s on {speed['machine']}"
            f" (int8 {verdict} the {speed['int8_target_pairs_per_s']:.0f} pairs/s target)"
        )
    return lines
