"""Loading calibration score sets (I/O edge of the conformal rule).

A calibration source is either

* a registry name: ``qasa`` (alias) or a registered path such as
  ``citation-guard/qasa_calibration_scores.json``, resolved under the fetched ``data/raw``;
* a JSON file with a list ``unsupported_p_attr_scores`` (the QASA release format) or
  ``unsupported_scores``; optional ``supported_p_attr_scores`` / ``supported_scores``;
* a CSV file validated against ``schemas/guard_calibration.yaml``: columns ``score`` (float in
  [0, 1]) and ``label`` (``unsupported`` or ``supported``).

* a sealed calibration artifact written by ``kit guard calibrate`` (JSON with ``kind`` =
  ``litaudit-guard-calibration``, schemas/json/guard_calibration_artifact.schema.json): the
  lab's own labelled sample scored by a named verifier. Loading checks the seal (sha256 of the
  canonical JSON of everything else); :func:`check_verifier` checks that the verifier used now
  has the artifact's ONNX sha256.

The calibration-set hash (sha256 of the sorted unsupported scores written as ``%.17g`` lines)
names exactly which numbers tau came from, independently of the file format.

:func:`guard_rule` turns a calibration set into the flag threshold (pooled split-conformal, or
Mondrian per negative type when the artifact was calibrated per type) and :func:`guarantee`
writes what every report shows next to a tau: the guarantee with its condition, where the
calibration came from, the false-flag rate on supported calibration citations (Wilson CI), the
review budget on the audited citations and the shift check (:mod:`kit.guard.conformal.shift`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location, check_param
from kit.core.schema import read_table
from kit.guard.conformal.rule import Threshold, rank_of
from kit.guard.verifiers.card import card_identity, identity_entry
from kit.registry.fetch import DEFAULT_DEST, raw_path
from kit.stats.wilson import wilson_ci

ALIASES = {"qasa": "citation-guard/qasa_calibration_scores.json"}
ARTIFACT_KIND = "litaudit-guard-calibration"
ARTIFACT_VERSION = 1


@dataclass(frozen=True)
class CalibrationSet:
    source: str
    unsupported: np.ndarray
    supported: np.ndarray | None
    published: dict[str, object] | None  # the published tau curve when the file carries one
    kind: str = "scores"  # "scores" (a score file or registry name) | "artifact"
    name: str | None = None  # the labelled sample's name (artifact)
    sample_sha256: str | None = None  # sha256 of the labelled sample file (artifact)
    negative_types: np.ndarray | None = None  # one type per unsupported score (artifact)
    by_type: bool = False  # Mondrian calibration per negative type (artifact)
    verifier: dict[str, str] | None = None  # {name, onnx_sha256 | instrument_sha256}
    seal: str | None = None
    alpha: float | None = None  # the alpha the artifact was calibrated at

    @property
    def sha256(self) -> str:
        return scores_sha256(self.unsupported)

    @property
    def source_sha256(self) -> str:
        """sha256 naming the calibration source: the labelled sample file for an artifact,
        else the hash of the unsupported scores."""
        return self.sample_sha256 or self.sha256

    @property
    def display_name(self) -> str:
        return self.name or self.source

    @property
    def types_present(self) -> list[str]:
        if self.negative_types is None:
            return []
        return sorted({str(x) for x in self.negative_types})


def flag_rate_ci(supported: np.ndarray, tau: float, level: float) -> dict[str, Any]:
    """Share of supported scores flagged (s <= tau) with its Wilson interval."""
    w = wilson_ci(int(np.sum(supported <= tau)), int(supported.size), level)
    return {
        "k": w.k,
        "n": w.n,
        "estimate": w.estimate,
        "lo": min(w.lo, w.estimate),  # Wilson at k = 0 can round to 3e-17
        "hi": max(w.hi, w.estimate),
        "level": level,
    }


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
    obj = boundary.read_json(path)
    if not isinstance(obj, dict):
        raise InputError("bad_calibration", "expected a JSON object", where=Location(str(path)))
    if obj.get("kind") == ARTIFACT_KIND:
        return _from_artifact(obj, path)
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


# ----------------------------------------------------------------------------- the artifact

LABEL_SUPPORTED = "entailment"
LABELS = ("entailment", "neutral", "contradiction")


def artifact_seal(artifact: dict[str, Any]) -> str:
    """sha256 of the canonical JSON (sorted keys, no white space) of everything but ``seal``."""
    body = {k: v for k, v in artifact.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def build_artifact(
    *,
    name: str,
    sample_sha256: str,
    labels: Sequence[str],
    scores: np.ndarray | Sequence[float],
    alpha: float,
    verifier: Mapping[str, Any],
    types: Sequence[str] | None = None,
    by_type: bool = True,
    label_map: Mapping[str, str] | None = None,
    level: float = 0.95,
    kit_version: str = "",
) -> dict[str, Any]:
    """The sealed calibration artifact of a scored, labelled sample (pure).

    ``labels`` are normalised (entailment / neutral / contradiction): entailment = supported,
    the other two = unsupported. The negative type of an unsupported pair is ``types[i]`` when
    given (a ``type`` column), else its label (contradiction vs neutral/NEI). With two or more
    negative types and ``by_type``, tau is Mondrian (:func:`kit.guard.conformal.rule.mondrian_tau`:
    one tau per type, flag threshold = the largest); else pooled split-conformal. Refuses
    (ConfigError) when the sample has too few unsupported pairs for alpha, saying how many are
    needed. The false-flag rate is the flag rate of the supported pairs at the final tau, with a
    Wilson interval: tau is fitted on the unsupported pairs only, so the supported pairs are an
    independent test sample for it.
    """
    from kit.guard.conformal.rule import conformal_tau, min_calibration_size, mondrian_tau

    lab = np.asarray([str(x) for x in labels], dtype=object)
    s = np.asarray(scores, dtype=float).ravel()
    check_param("labels", f"{lab.size} labels", lab.size == s.size, "one per score", "artifact")
    bad = sorted({x for x in lab if x not in LABELS})
    check_param("labels", bad, not bad, f"in {LABELS}", "build_artifact")
    unsup = lab != LABEL_SUPPORTED
    u, sup = s[unsup], s[~unsup]
    if types is not None:
        typ = np.asarray([str(x) for x in types], dtype=object)[unsup]
    else:
        typ = lab[unsup]
    need = min_calibration_size(alpha)
    if u.size < need:
        k = rank_of(u.size, alpha)
        raise ConfigError(
            "too_little_calibration",
            f"the labelled sample {name!r} has {u.size} unsupported citation(s) "
            f"({sup.size} supported); alpha={alpha:g} needs k = ceil((n+1)(1-alpha)) = {k} <= n, "
            f"i.e. at least {need} labelled unsupported citations. Label "
            f"{need - u.size} more unsupported citation(s), or raise --alpha",
        )
    pooled = conformal_tau(u, alpha)
    present = sorted({str(x) for x in typ})
    per: dict[str, Any] = {}
    rule = "split_conformal"
    tau = pooled.tau
    if by_type and len(present) >= 2:
        m = mondrian_tau(u, typ, alpha)
        rule, tau = "mondrian", m.tau
        for t_name, th in sorted(m.per_type.items()):
            caught = float(np.mean(u[typ == t_name] <= tau))
            per[t_name] = {
                "n": th.n_cal,
                "k": th.k,
                "tau": th.tau,
                "cal_recall": th.cal_recall,
                "cal_recall_at_tau": caught,
            }
    false_flag = flag_rate_ci(sup, tau, level) if sup.size else None
    art: dict[str, Any] = {
        "kind": ARTIFACT_KIND,
        "version": ARTIFACT_VERSION,
        "kit_version": kit_version,
        "name": name,
        "sample": {
            "sha256": sample_sha256,
            "n": int(s.size),
            "n_unsupported": int(u.size),
            "n_supported": int(sup.size),
            "label_counts": {x: int(np.sum(lab == x)) for x in LABELS},
            "negative_types": present,
            "type_source": "type column" if types is not None else "label",
            "label_map": dict(sorted((label_map or {}).items())),
        },
        "verifier": {
            "name": str(verifier["name"]),
            **identity_entry(verifier),  # onnx_sha256 (ONNX) or instrument_sha256 (LLM card)
            "scoring_rule": str(verifier.get("scoring_rule", "")),
        },
        "alpha": float(alpha),
        "rule": rule,
        "tau": float(tau),
        "k": pooled.k,
        "n": pooled.n_cal,
        "pooled": {"n": pooled.n_cal, "k": pooled.k, "tau": pooled.tau},
        "per_type": per,
        "false_flag": false_flag,
        "unsupported_scores": [float(x) for x in u],
        "unsupported_types": [str(x) for x in typ],
        "supported_scores": [float(x) for x in sup],
    }
    art["seal"] = artifact_seal(art)
    return art


def _from_artifact(obj: dict[str, Any], path: Path) -> CalibrationSet:
    from kit.core.errors import IntegrityError
    from kit.core.schema import validate_json

    validate_json(obj, "guard_calibration_artifact", str(path))
    got = artifact_seal(obj)
    if got != obj["seal"]:
        raise IntegrityError(
            "seal_mismatch",
            f"{path}: the calibration artifact's seal does not match its contents (sha256 "
            f"{got[:16]}... != seal {obj['seal'][:16]}...); it was changed after `kit guard "
            "calibrate` wrote it -- recalibrate instead of editing it",
        )
    u = np.asarray(obj["unsupported_scores"], dtype=float)
    types = np.asarray(obj["unsupported_types"], dtype=object)
    if types.size != u.size:
        raise InputError(
            "bad_calibration",
            f"{types.size} unsupported_types for {u.size} unsupported_scores",
            where=Location(str(path), column="unsupported_types"),
        )
    sup = np.asarray(obj["supported_scores"], dtype=float)
    return CalibrationSet(
        source=str(path),
        unsupported=u,
        supported=sup if sup.size else None,
        published=None,
        kind="artifact",
        name=str(obj["name"]),
        sample_sha256=str(obj["sample"]["sha256"]),
        negative_types=types,
        by_type=obj["rule"] == "mondrian",
        verifier={k: str(v) for k, v in obj["verifier"].items() if k != "scoring_rule"},
        seal=str(obj["seal"]),
        alpha=float(obj["alpha"]),
    )


def check_verifier(cal: CalibrationSet, card: Mapping[str, Any]) -> bool | None:
    """True when the calibration names this verifier's identity (its ONNX sha256, or an LLM
    card's instrument sha256: :func:`kit.guard.verifiers.card.card_identity`); None when it names
    none.

    A calibration artifact made with another verifier is refused (ConfigError): its scores, and
    so its tau, mean nothing for this verifier.
    """
    if cal.verifier is None:
        return None
    field, sha = card_identity(card)
    made = {k: v for k, v in cal.verifier.items() if k != "name"}
    if made.get(field) != sha:
        (made_field, made_sha), *_ = made.items() or [("identity", "")]
        raise ConfigError(
            "calibration_verifier_mismatch",
            f"calibration {cal.source} was made with verifier {cal.verifier['name']!r} "
            f"({made_field.replace('_', ' ')} {made_sha[:16]}...) but this run uses "
            f"{card['name']!r} ({field.replace('_', ' ')} {sha[:16]}...); pass the verifier the "
            "calibration was made with, or recalibrate with `kit guard calibrate LABELLED "
            "--verifier CARD`",
        )
    return True


# ----------------------------------------------------------------------------- the rule


@dataclass(frozen=True)
class GuardRule:
    """The flag threshold a report uses, with how it was obtained."""

    alpha: float
    tau: float
    k: int  # pooled k (Mondrian: see per_type)
    n_cal: int
    cal_recall: float  # fraction of the unsupported calibration scores <= tau
    rule: str  # "split_conformal" | "mondrian"
    per_type: dict[str, Threshold]


def guard_rule(cal: CalibrationSet, alpha: float) -> GuardRule:
    """tau at ``alpha``: Mondrian per type when the calibration was made per type, else pooled.

    Recomputed from the stored scores (so ``--alpha`` may differ from the artifact's alpha);
    refusals (k > n) are those of :func:`kit.guard.conformal.rule.conformal_tau` / ``mondrian_tau``.
    """
    from kit.guard.conformal.rule import conformal_tau, mondrian_tau

    pooled = conformal_tau(cal.unsupported, alpha)
    if cal.by_type and cal.negative_types is not None and len(cal.types_present) >= 2:
        m = mondrian_tau(cal.unsupported, cal.negative_types, alpha)
        return GuardRule(
            alpha=float(alpha),
            tau=m.tau,
            k=pooled.k,
            n_cal=pooled.n_cal,
            cal_recall=float(np.mean(cal.unsupported <= m.tau)),
            rule="mondrian",
            per_type=dict(m.per_type),
        )
    return GuardRule(
        alpha=float(alpha),
        tau=pooled.tau,
        k=pooled.k,
        n_cal=pooled.n_cal,
        cal_recall=pooled.cal_recall,
        rule="split_conformal",
        per_type={},
    )


def _pct(x: float) -> str:
    return f"{100.0 * x:.4g}%"


def catch_statement(target: float, who: str, condition: str) -> str:
    """The catch guarantee WITH its condition, the sentence's one home: "catch >= 90% of
    unsupported citations exchangeable with CAL" (``who``: unsupported, or a negative type)."""
    return f"catch >= {_pct(target)} of {who} citations exchangeable with {condition}"


def calibration_source(cal: CalibrationSet, same_verifier: bool | None) -> dict[str, Any]:
    """Where the calibration came from (name, sha256, n, negative types), JSON-ready."""
    return {
        "name": cal.display_name,
        "kind": cal.kind,
        "sha256": cal.source_sha256,
        "scores_sha256": cal.sha256,
        "n_unsupported": int(cal.unsupported.size),
        "n_supported": 0 if cal.supported is None else int(cal.supported.size),
        "negative_types": cal.types_present,
        "verifier": cal.verifier,
        "same_verifier": same_verifier,
    }


def condition_text(cal_name: str, sha: str, n_u: int, n_s: int, types: Sequence[str]) -> str:
    """'CAL' as the reports name it: name, sha256 prefix, n, negative types."""
    kinds = ", ".join(types) if types else "not recorded"
    sup = f", {n_s} supported" if n_s else ", no supported pairs"
    return f"{cal_name} (sha256 {sha[:12]}, n = {n_u} unsupported{sup}; negative types: {kinds})"


def guarantee_columns(cal: CalibrationSet, alphas: np.ndarray) -> dict[str, list[Any]]:
    """Per-alpha columns every tau table carries beside its tau (issue 13).

    * ``guarantee``: "catch >= (1 - alpha) of unsupported citations exchangeable with CAL", the
      condition named by :func:`condition_text`;
    * ``false_flag_rate`` / ``_lo`` / ``_hi``: flag rate (Wilson 95%) of the supported
      calibration scores at the tau fitted on the whole unsupported pool at that alpha; NaN
      when there are no supported scores or alpha needs k > n_cal.
    """
    from kit.guard.conformal.rule import conformal_tau

    sup = cal.supported
    n_u = int(cal.unsupported.size)
    text = condition_text(
        cal.display_name,
        cal.source_sha256,
        n_u,
        0 if sup is None else int(sup.size),
        cal.types_present,
    )
    cols: dict[str, list[Any]] = {
        "guarantee": [],
        "false_flag_rate": [],
        "false_flag_lo": [],
        "false_flag_hi": [],
    }
    for a in np.asarray(alphas, dtype=float):
        cols["guarantee"].append(catch_statement(1.0 - a, "unsupported", text))
        if sup is None or sup.size == 0 or a * (n_u + 1) < 1:
            vals = [np.nan, np.nan, np.nan]
        else:
            tau = conformal_tau(cal.unsupported, float(a)).tau
            w = wilson_ci(int(np.sum(sup <= tau)), int(sup.size))
            vals = [w.estimate, w.lo, w.hi]
        for key, v in zip(("false_flag_rate", "false_flag_lo", "false_flag_hi"), vals, strict=True):
            cols[key].append(v)
    return cols


def guarantee(
    cal: CalibrationSet,
    rule: GuardRule,
    audit_scores: np.ndarray | Sequence[float],
    same_verifier: bool | None,
    level: float = 0.95,
    shift_level: float = 0.05,
) -> dict[str, Any]:
    """What every report shows next to a tau (issue 13), as a JSON-ready dict.

    * ``statement``: the guarantee WITH its condition, e.g. "catch >= 90% of unsupported
      citations exchangeable with CAL", CAL named by :func:`condition_text`;
    * ``per_type``: the Mondrian statement per negative type (empty when pooled);
    * ``calibration``: :func:`calibration_source`;
    * ``false_flag_rate``: flag rate of the supported calibration pairs at tau (Wilson CI), or
      null with a reason when the calibration has no supported pairs;
    * ``review_budget``: flag rate (s <= tau) of the audited citations that have a score
      (Wilson CI, citations treated as independent), null when none;
    * ``shift``: :func:`kit.guard.conformal.shift.ks_shift_check` between the whole calibration sample
      and the audited scores.
    """
    from kit.guard.conformal.shift import ks_shift_check

    src = calibration_source(cal, same_verifier)
    cal_text = condition_text(
        src["name"], src["sha256"], src["n_unsupported"], src["n_supported"], src["negative_types"]
    )
    target = 1.0 - rule.alpha
    statement = catch_statement(target, "unsupported", cal_text)
    condition = (
        "holds for unsupported citations exchangeable with the calibration sample's unsupported "
        "citations (same population of claims and passages, same verifier and scoring rule); "
        "marginal over the calibration draw"
        + ("" if same_verifier else "; the calibration source does not name its verifier")
    )
    per_type = []
    for name, th in sorted(rule.per_type.items()):
        mask = cal.negative_types == name if cal.negative_types is not None else None
        n_t = int(th.n_cal)
        per_type.append(
            {
                "type": name,
                "n": n_t,
                "k": th.k,
                "tau": th.tau,
                "cal_catch_at_tau": float(np.mean(cal.unsupported[mask] <= rule.tau))
                if mask is not None
                else None,
                "statement": catch_statement(
                    target,
                    name,
                    f"the {n_t} {name} citations of {src['name']} (tau_{name} = {th.tau:.4g}; "
                    f"flag threshold = max over types = {rule.tau:.4g})",
                ),
            }
        )
    false_flag: dict[str, Any] | None = None
    if cal.supported is not None and cal.supported.size:
        false_flag = flag_rate_ci(cal.supported, rule.tau, level)
        w = wilson_ci(false_flag["k"], false_flag["n"], level)
        false_flag = {
            **false_flag,
            "text": f"false-flag rate on supported citations {w.estimate:.3f} "
            f"[{w.lo:.3f}, {w.hi:.3f}] ({w.k}/{w.n} supported calibration pairs, Wilson "
            f"{_pct(level)})",
        }
    aud = np.asarray(audit_scores, dtype=float).ravel()
    aud = aud[np.isfinite(aud)]
    budget: dict[str, Any] | None = None
    if aud.size:
        b = wilson_ci(int(np.sum(aud <= rule.tau)), int(aud.size), level)
        budget = {
            "k": b.k,
            "n": b.n,
            "estimate": b.estimate,
            "lo": min(b.lo, b.estimate),
            "hi": max(b.hi, b.estimate),
            "level": level,
            "text": f"review budget {b.estimate:.3f} [{b.lo:.3f}, {b.hi:.3f}] ({b.k}/{b.n} "
            "audited citations flagged)",
        }
    shift = ks_shift_check(cal.unsupported, cal.supported, aud, shift_level).to_dict()
    return {
        "statement": statement,
        "condition": condition,
        "target_catch": target,
        "alpha": rule.alpha,
        "tau": rule.tau,
        "rule": rule.rule,
        "per_type": per_type,
        "calibration": src,
        "false_flag_rate": false_flag,
        "false_flag_note": None
        if false_flag
        else "not measurable: the calibration source has no supported pairs",
        "review_budget": budget,
        "shift": shift,
    }


def guarantee_line(g: Mapping[str, Any]) -> str:
    """One printable line: statement; false-flag rate; review budget; shift warning."""
    parts = [str(g["statement"])]
    ff = g.get("false_flag_rate")
    parts.append(ff["text"] if ff else "false-flag rate on supported citations: not measurable")
    if g.get("review_budget"):
        parts.append(g["review_budget"]["text"])
    sh = g.get("shift") or {}
    if sh.get("warning"):
        parts.append(str(sh["message"]))
    return "; ".join(parts)
