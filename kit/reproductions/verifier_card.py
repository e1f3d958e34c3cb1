"""The default verifier's validation, as a table on the board (seed 001, Table 2 protocol).

Reads the card that ``kit guard train`` wrote (``data/verifier-nli/card.json``): nothing is
re-scored here, so the table states exactly what the card promises. One row per held-out group
(a registry source's dev/test pairs, or PubMedQA positives against one construction-labelled
negative type): AUC supported-vs-unsupported with its DeLong CI, against contradicted and
against neutral pairs, per-class recall and specificity of the argmax class, kappa -- beside the
similarity bi-encoder's AUC on the same pairs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from kit import boundary

HUMAN = {
    "scifact": "human (experts)",
    "check_covid": "human (experts)",
    "covidfact": "human-validated; refuted claims machine-generated",
    "climate_fever": "human (annotators)",
    "sick": "human (crowd)",
    "snli": "human (crowd)",
}


def _auc(entry: dict[str, Any] | None, key: str) -> float | None:
    return None if entry is None else entry.get(key)


def verifier_validation(raw: Path, verifier_nli_dir: Path) -> dict[str, pd.DataFrame]:
    """The card's validation table (``raw`` is unused: the card names its data by sha256)."""
    card = boundary.read_json(Path(verifier_nli_dir) / "card.json", allow_non_finite=True)
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
                "labels": "construction-labelled (not human gold)"
                if src == "pubmedqa"
                else HUMAN.get(src, "see nli/README.md"),
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
    table["verifier"] = f"{card['name']} ({card['onnx_sha256'][:12]})"
    table["scoring"] = extra["scoring"]
    return {"guard_verifier_validation": table}
