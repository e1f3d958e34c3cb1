"""Loading calibration score sets (I/O edge of the conformal rule).

A calibration source is either

* a registry name: ``qasa`` (alias) or a registered path such as
  ``citation-guard/qasa_calibration_scores.json``, resolved under the fetched ``data/raw``;
* a JSON file with a list ``unsupported_p_attr_scores`` (the QASA release format) or
  ``unsupported_scores``; optional ``supported_p_attr_scores`` / ``supported_scores``;
* a CSV file validated against ``schemas/guard_calibration.yaml``: columns ``score`` (float in
  [0, 1]) and ``label`` (``unsupported`` or ``supported``).

The calibration-set hash (sha256 of the sorted unsupported scores written as ``%.17g`` lines)
names exactly which numbers tau came from, independently of the file format.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kit.errors import InputError, Location
from kit.registry.fetch import DEFAULT_DEST, raw_path
from kit.schema import read_table

ALIASES = {"qasa": "citation-guard/qasa_calibration_scores.json"}


@dataclass(frozen=True)
class CalibrationSet:
    source: str
    unsupported: np.ndarray
    supported: np.ndarray | None
    published: dict[str, object] | None  # the published tau curve when the file carries one

    @property
    def sha256(self) -> str:
        return scores_sha256(self.unsupported)


def scores_sha256(scores: np.ndarray) -> str:
    text = "\n".join(f"{v:.17g}" for v in np.sort(np.asarray(scores, dtype=float)))
    return hashlib.sha256(text.encode()).hexdigest()


def _float_list(obj: object, path: Path, key: str) -> np.ndarray:
    if not isinstance(obj, list) or not obj:
        raise InputError(
            "bad_calibration",
            f"expected a non-empty list of numbers, got {type(obj).__name__}",
            where=Location(str(path), column=key),
        )
    out = []
    for i, v in enumerate(obj):
        if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v):
            raise InputError(
                "bad_calibration",
                f"item {i} is {v!r}; expected a finite number",
                where=Location(str(path), column=key),
            )
        out.append(float(v))
    return np.asarray(out)


def _from_json(path: Path, source: str) -> CalibrationSet:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            "unreadable_json", f"not valid JSON: {exc}", where=Location(str(path))
        ) from None
    if not isinstance(obj, dict):
        raise InputError("bad_calibration", "expected a JSON object", where=Location(str(path)))
    ukey = next((k for k in ("unsupported_p_attr_scores", "unsupported_scores") if k in obj), None)
    if ukey is None:
        raise InputError(
            "bad_calibration",
            "no 'unsupported_p_attr_scores' or 'unsupported_scores' list",
            where=Location(str(path)),
        )
    skey = next((k for k in ("supported_p_attr_scores", "supported_scores") if k in obj), None)
    published = obj.get("tau_curve") if isinstance(obj.get("tau_curve"), dict) else None
    return CalibrationSet(
        source=source,
        unsupported=_float_list(obj[ukey], path, ukey),
        supported=_float_list(obj[skey], path, skey) if skey else None,
        published=published,
    )


def load_calibration(spec: str, raw: Path = DEFAULT_DEST) -> CalibrationSet:
    """Resolve ``spec`` (file or registry name) to a :class:`CalibrationSet`."""
    p = Path(spec)
    if not p.is_file():
        name = ALIASES.get(spec, spec)
        if "/" not in name:
            raise InputError(
                "missing_file",
                f"'{spec}' is neither a file nor a registry name (known: {', '.join(ALIASES)})",
                where=Location(spec),
            )
        p = raw_path(name, raw)
        spec = f"registry:{name}"
    if p.suffix.lower() == ".json":
        return _from_json(p, spec)
    frame = read_table(p, "guard_calibration")
    unsup = frame.loc[frame["label"] == "unsupported", "score"].to_numpy(dtype=float)
    sup = frame.loc[frame["label"] == "supported", "score"].to_numpy(dtype=float)
    if unsup.size == 0:
        raise InputError(
            "bad_calibration",
            "no rows with label 'unsupported'",
            where=Location(str(p), column="label"),
        )
    return CalibrationSet(
        source=spec, unsupported=unsup, supported=sup if sup.size else None, published=None
    )
