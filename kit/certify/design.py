"""The declared design of a certification (paper Sections 3.4 and 6.1).

docs/architecture.md, "Certified leaderboard".

A design is written *before* any score is read (Definition 1 fixes eps_fair "before observing
any ranking"): the family of pairs, alpha, the window kind, per-readout tolerances, the
nuisance constants of Theorem 1, the clusters, and how readouts form axes and the composite.
:func:`parse_design` turns the JSON-Schema-validated mapping (``schemas/json/design.schema.json``)
into frozen dataclasses and checks what JSON Schema cannot (cross references).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kit.certify.inference import DEFAULT_DRAWS, DEFAULT_INFERENCE, INFERENCE
from kit.certify.nuisance import SystemNuisance
from kit.core.errors import ConfigError, check_param

COMPOSITE = "composite"
WINDOWS = ("system", "scaffold")
READOUT_KINDS = ("normalised", "quality", "style")
FAIR_MAX = 0.5  # Definition 1: 0 < eps_fair < 0.5 (0.5 or more on a [0, 1] score admits all)
# The Bonferroni family (``multiplicity:``). The default is what a reader of the outputs sees:
# every (pair, readout) row of pairs.csv, the composite included, so that a reader of EVERY
# verdict is protected at alpha. "pairs" narrows it explicitly to the pairs of one readout
# (the paper's "Bonferroni-corrected over all pairs of the table"): each readout is then its
# own family at alpha, and a reader of several readouts' verdicts is not protected.
MULTIPLICITY = ("pairs_x_readouts", "pairs")
DEFAULT_MULTIPLICITY = "pairs_x_readouts"
# How admissibility (Definition 1) is decided (``admissibility:``). "tested" (default): from the
# entry metadata of the score table (entry_hash, backbone, entry_condition, length_view); a table
# without them is refused. "assumed": the user asserts every pair admissible and exactly matched
# (eps_outside = 0) for a table that cannot show it (a plain task_id,system,score table); every
# verdict then carries ASSUMED_LABEL (pairs.csv, the kit certify summary, the board page).
ADMISSIBILITY = ("tested", "assumed")
ASSUMED_LABEL = "admissibility assumed by the user"


def family_description(multiplicity: str, n_pairs: int, n_readouts: int) -> str:
    """The Bonferroni family in words, as the outputs name it (CLI line, board page)."""
    if multiplicity == "pairs":
        return (
            f"the {n_pairs} pairs of each readout (multiplicity: pairs; each of the "
            f"{n_readouts} readouts is its own family at alpha)"
        )
    return (
        f"every (pair, readout) shown: {n_pairs} pairs x {n_readouts} readouts incl. the "
        "composite (multiplicity: pairs_x_readouts)"
    )


@dataclass(frozen=True)
class PerReadout:
    """A constant that may differ by readout: ``default`` unless ``by_readout`` names it."""

    default: float | None
    by_readout: Mapping[str, float] = field(default_factory=dict)

    def get(self, readout: str) -> float | None:
        return self.by_readout.get(readout, self.default)


@dataclass(frozen=True)
class Nuisance:
    """Theorem 1 constants: per-readout L_s, L_C, eps_protocol and per-system constants."""

    L_s: PerReadout
    L_C: PerReadout
    eps_protocol: PerReadout
    systems: Mapping[str, SystemNuisance]


@dataclass(frozen=True)
class Design:
    """A parsed certification design (see ``examples/certify/design.yaml``)."""

    alpha: float = 0.05
    family: tuple[tuple[str, str], ...] | None = None  # None: all pairs of the table
    window: str = "system"
    min_common_tasks: int = 10
    tolerance: PerReadout = field(default_factory=lambda: PerReadout(None))
    nuisance: Nuisance | None = None
    clusters: tuple[str, ...] | None = None
    systems: tuple[str, ...] | None = None
    axes: Mapping[str, tuple[str, ...]] | None = None  # None: each readout is its own axis
    readout_kinds: Mapping[str, str] = field(default_factory=dict)
    multiplicity: str = DEFAULT_MULTIPLICITY  # the Bonferroni family (MULTIPLICITY above)
    inference: str = DEFAULT_INFERENCE  # small-sample method of the radius (certify/inference.py)
    inference_draws: int = DEFAULT_DRAWS  # sign vectors of "signflip" when 2^K > draws
    inference_seed: int = 0  # seed of those random sign vectors (deterministic verdicts)
    admissibility: str = "tested"  # "assumed": every pair admitted unseen (ADMISSIBILITY above)
    source: str = "design"  # the design file, named by every error about the design
    # Pairs (sorted names) refused from declared conditions the score table does not carry,
    # with the reason: the harness logs' specs (kit.certify.harness.pair_refusals). Never read
    # from the YAML; applied by the engine before Definition 1 (kit.certify.engine.admissions).
    refused: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def pairs(self, systems: list[str]) -> list[tuple[str, str]]:
        """The declared family: explicit pairs, or all pairs of ``systems`` in sorted order."""
        if self.family is not None:
            return [tuple(sorted(p)) for p in self.family]  # type: ignore[misc]
        pool = sorted(self.systems) if self.systems is not None else sorted(systems)
        return list(itertools.combinations(pool, 2))


def _finite(value: Any, key: str, source: str) -> float:
    """``value`` as a float; a NaN or infinite declared constant is a :class:`ConfigError`
    naming the design file and the key (a NaN would compare False everywhere and an infinite
    constant would silently refuse or admit pairs)."""
    v = float(value)
    if not math.isfinite(v):
        raise ConfigError(
            "non_finite_design_value", f"{source}: {key} = {v} must be a finite number"
        )
    return v


def _per_readout(value: Any, name: str, source: str = "design") -> PerReadout:
    if value is None:
        return PerReadout(None)
    if isinstance(value, int | float):
        return PerReadout(_finite(value, name, source))
    by = {str(k): _finite(v, f"{name}.{k}", source) for k, v in value.items() if k != "default"}
    default = value.get("default")
    return PerReadout(None if default is None else _finite(default, f"{name}.default", source), by)


def parse_design(raw: Mapping[str, Any], source: str = "design") -> Design:
    """Build a :class:`Design` from a mapping already validated by the JSON Schema ``design``.

    Raises :class:`ConfigError`, naming ``source`` (the design file) and the key, for what the
    schema cannot express: a NaN or infinite constant (alpha, tolerance, nuisance), a pair with
    the same system twice or listed twice, an axis naming no readout, a readout on two axes, a
    declared tolerance outside (0, 0.5) (Definition 1).
    """
    alpha = _finite(raw.get("alpha", 0.05), "alpha", source)
    check_param("alpha", alpha, 0 < alpha < 1, "in (0, 1)", source)
    window = str(raw.get("window", "system"))
    check_param("window", window, window in WINDOWS, f"one of {WINDOWS}", source)
    fam = raw.get("family", "all_pairs")
    family: tuple[tuple[str, str], ...] | None = None
    if fam != "all_pairs":
        pairs = []
        for p in fam:
            a, b = str(p[0]), str(p[1])
            if a == b:
                raise ConfigError(
                    "bad_family", f"{source}: family pair ({a}, {b}) repeats a system"
                )
            pair = (a, b) if a < b else (b, a)
            if pair in pairs:
                raise ConfigError(
                    "bad_family",
                    f"{source}: family lists the pair ({pair[0]}, {pair[1]}) twice",
                )
            pairs.append(pair)
        family = tuple(sorted(pairs))
    min_tasks = int(raw.get("min_common_tasks", 10))
    check_param("min_common_tasks", min_tasks, min_tasks >= 2, "an integer >= 2", source)
    nuis = raw.get("nuisance")
    nuisance = None
    if nuis is not None:
        systems = {
            str(name): SystemNuisance(
                **{
                    key: _finite(c.get(key, dflt), f"nuisance.systems.{name}.{key}", source)
                    for key, dflt in (("L_M", 1.0), ("eps_in", 0.0), ("xi", 0.0), ("eps_cont", 0.0))
                }
            )
            for name, c in (nuis.get("systems") or {}).items()
        }
        nuisance = Nuisance(
            L_s=_per_readout(nuis.get("L_s", 1.0), "nuisance.L_s", source),
            L_C=_per_readout(nuis.get("L_C", 1.0), "nuisance.L_C", source),
            eps_protocol=_per_readout(
                nuis.get("eps_protocol", 0.0), "nuisance.eps_protocol", source
            ),
            systems=systems,
        )
    axes = None
    if raw.get("axes") is not None:
        axes = {str(k): tuple(str(r) for r in v) for k, v in raw["axes"].items()}
        seen: dict[str, str] = {}
        for axis, readouts in axes.items():
            if not readouts:
                raise ConfigError("bad_axes", f"{source}: axis '{axis}' names no readout")
            for r in readouts:
                if r in seen:
                    raise ConfigError(
                        "bad_axes",
                        f"{source}: readout '{r}' is on two axes ('{seen[r]}', '{axis}')",
                    )
                seen[r] = axis
    kinds = {
        str(k): str(v.get("kind", "normalised")) for k, v in (raw.get("readouts") or {}).items()
    }
    tol = _per_readout(raw.get("tolerance"), "tolerance", source)
    for name, v in [("default", tol.default), *tol.by_readout.items()]:
        if v is not None and not (math.isfinite(v) and 0 < v < FAIR_MAX):
            raise ConfigError(
                "bad_tolerance",
                f"{source}: tolerance '{name}' = {v} must be in (0, {FAIR_MAX}) (Definition 1: "
                "eps_fair >= 0.5 on a [0, 1] score would admit every pair)",
            )
    inference = str(raw.get("inference", DEFAULT_INFERENCE))
    check_param("inference", inference, inference in INFERENCE, f"one of {INFERENCE}", source)
    draws = int(raw.get("inference_draws", DEFAULT_DRAWS))
    check_param("inference_draws", draws, draws >= 1, "an integer >= 1", source)
    multiplicity = str(raw.get("multiplicity", DEFAULT_MULTIPLICITY))
    check_param(
        "multiplicity", multiplicity, multiplicity in MULTIPLICITY, f"one of {MULTIPLICITY}", source
    )
    admissibility = str(raw.get("admissibility", "tested"))
    check_param(
        "admissibility",
        admissibility,
        admissibility in ADMISSIBILITY,
        f"one of {ADMISSIBILITY}",
        source,
    )
    clusters = raw.get("clusters")
    systems_decl = raw.get("systems")
    return Design(
        alpha=alpha,
        family=family,
        window=window,
        min_common_tasks=min_tasks,
        tolerance=tol,
        nuisance=nuisance,
        clusters=None if clusters is None else tuple(str(c) for c in clusters),
        systems=None if systems_decl is None else tuple(str(s) for s in systems_decl),
        axes=axes,
        readout_kinds=kinds,
        multiplicity=multiplicity,
        inference=inference,
        inference_draws=draws,
        inference_seed=int(raw.get("inference_seed", 0)),
        admissibility=admissibility,
        source=source,
    )
