"""Graph discrepancy between typed claim graphs ("What Can a Leaderboard Certify?", A.6).

Definition 13: a human review graph is a typed attributed directed graph (node types topic,
claim, evidence, paper, condition; relation types supports, contradicts, qualifies,
evidence-from, belongs-to-topic, valid-under-condition; importance weights w_V >= 0).

Eq. (20), fused Gromov-Wasserstein (Vayer et al. 2019), lambda_G in [0, 1]:

    d_FGW^2(G, G') = inf_{Gamma in Pi(m, m')} (1 - lambda_G) sum C_ii' Gamma_ii'
                     + lambda_G sum |R_ij - R'_i'j'|^2 Gamma_ii' Gamma_jj'.

The instantiation here (the paper leaves C and R open; these are kit choices):

* Node cost C in [0, 1]: a weighted mean of a type term [type differs], a text term
  (1 - cos) of hashed character-trigram vectors (or caller-given embeddings, clipped to
  [0, 1]; 0 when both nodes have no text, 1 when only one has) and a paper-identity term (0 same id, 1 different ids,
  0.5 when exactly one node names a paper, 0 when neither does).
* Structure R in [0, 1]: 0 on the diagonal; for nodes joined by a relation (either direction)
  the relation's code (``RELATION_CODES``: supports/evidence-from 0.25, belongs-to-topic/
  qualifies/valid-under-condition 0.5, contradicts 0.75, other relations 0.5); 1 when not
  joined. Direction is dropped (R is symmetric) -- a deviation from the directed Definition 13.
* Hard anchors on shared paper ids: for every paper id present in both graphs, transport from a
  node carrying it to a node not carrying it (or from a non-carrier to a carrier) is forbidden
  by a big-M penalty in the linear term of the solver (``100 / (1 - lambda_G)`` added to C,
  which outweighs any change of the structure gradient, bounded by 2). Anchors are exact when
  the shared papers' masses agree across the graphs: ``anchored_masses`` gives each shared paper
  the same mass in both graphs (u = 1 / max(|V|, |V'|), split among its nodes) and spreads the
  rest evenly -- the importance weights w_V are then not used (``node_masses`` says which rule
  produced the masses; "anchored" falls back to the weights when no paper id is shared). Any
  mass the solver still puts on forbidden pairs is reported
  (``anchor_violation``), never hidden; the reported value uses the unpenalised C.
* Solver: ``ot.gromov.fused_gromov_wasserstein`` (conditional gradient from the product
  coupling, square loss). The problem is non-convex: the value is a local optimum, an upper
  bound of the infimum. Null nodes / unbalanced transport are not implemented.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import ot

from kit.core.errors import ConfigError, check_param

NODE_TYPES = ("topic", "claim", "evidence", "paper", "condition", "section")
RELATION_CODES: dict[str, float] = {
    "supports": 0.25,
    "evidence-from": 0.25,
    "belongs-to-topic": 0.5,
    "qualifies": 0.5,
    "valid-under-condition": 0.5,
    "contradicts": 0.75,
}
OTHER_RELATION = 0.5
NO_RELATION = 1.0
TEXT_DIM = 256


@dataclass(frozen=True)
class ClaimGraph:
    """A typed claim graph; ``paper_ids[i]`` is "" when node i names no paper."""

    nodes: tuple[str, ...]
    types: tuple[str, ...]
    texts: tuple[str, ...]
    paper_ids: tuple[str, ...]
    weights: np.ndarray
    edges: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        n = len(self.nodes)
        if not (len(self.types) == len(self.texts) == len(self.paper_ids) == n):
            raise ConfigError("bad_parameter", "ClaimGraph: one type, text and paper id per node")
        if len(set(self.nodes)) != n or n == 0:
            raise ConfigError("bad_parameter", "ClaimGraph: node ids must be unique and non-empty")
        w = np.asarray(self.weights, dtype=float)
        ok = w.shape == (n,) and bool(np.all(w >= 0)) and float(w.sum()) > 0
        check_param(
            "weights", "shape/values", ok, "one weight >= 0 per node, sum > 0", "ClaimGraph"
        )
        known = set(self.nodes)
        for s, t, _ in self.edges:
            if s not in known or t not in known:
                raise ConfigError(
                    "unknown_node", f"ClaimGraph: edge {s!r} -> {t!r} names an unknown node"
                )


def hashed_trigram_embedding(texts: Sequence[str], dim: int = TEXT_DIM) -> np.ndarray:
    """Deterministic L2-normalised counts of character trigrams hashed (crc32) into ``dim`` bins.

    A dependency-free stand-in for a sentence encoder; empty texts give the zero vector.
    """
    out = np.zeros((len(texts), dim))
    for i, t in enumerate(texts):
        words = " ".join(t.lower().split())
        if not words:
            continue
        s = f"  {words} "
        for k in range(len(s) - 2):
            out[i, zlib.crc32(s[k : k + 3].encode()) % dim] += 1.0
        norm = np.linalg.norm(out[i])
        if norm > 0:
            out[i] /= norm
    return out


def node_cost(
    a: ClaimGraph,
    b: ClaimGraph,
    w_type: float = 1.0,
    w_text: float = 1.0,
    w_paper: float = 1.0,
    emb_a: np.ndarray | None = None,
    emb_b: np.ndarray | None = None,
) -> np.ndarray:
    """C_ii' in [0, 1]: weighted mean of type, text and paper-identity terms (module docstring)."""
    total = w_type + w_text + w_paper
    ok = min(w_type, w_text, w_paper) >= 0 and total > 0
    check_param(
        "w_type, w_text, w_paper", (w_type, w_text, w_paper), ok, ">= 0, sum > 0", "node_cost"
    )
    ta, tb = np.array(a.types, dtype=object), np.array(b.types, dtype=object)
    c_type = (ta[:, None] != tb[None, :]).astype(float)
    ea = hashed_trigram_embedding(a.texts) if emb_a is None else np.asarray(emb_a, float)
    eb = hashed_trigram_embedding(b.texts) if emb_b is None else np.asarray(emb_b, float)
    na = np.linalg.norm(ea, axis=1, keepdims=True)
    nb = np.linalg.norm(eb, axis=1, keepdims=True)
    cos = (ea / np.where(na > 0, na, 1.0)) @ (eb / np.where(nb > 0, nb, 1.0)).T
    c_text = np.clip(1.0 - cos, 0.0, 1.0)
    c_text[(na[:, 0] == 0)[:, None] & (nb[:, 0] == 0)[None, :]] = 0.0  # both texts empty
    pa, pb = np.array(a.paper_ids, dtype=object), np.array(b.paper_ids, dtype=object)
    has_a, has_b = pa != "", pb != ""
    both = has_a[:, None] & has_b[None, :]
    one = has_a[:, None] ^ has_b[None, :]
    c_paper = np.where(both, (pa[:, None] != pb[None, :]).astype(float), np.where(one, 0.5, 0.0))
    return (w_type * c_type + w_text * c_text + w_paper * c_paper) / total


def structure_matrix(g: ClaimGraph, codes: dict[str, float] | None = None) -> np.ndarray:
    """R in [0, 1]: 0 diagonal, the relation code on (undirected) edges, 1 elsewhere."""
    codes = RELATION_CODES if codes is None else codes
    idx = {s: i for i, s in enumerate(g.nodes)}
    n = len(g.nodes)
    r = np.full((n, n), NO_RELATION)
    for s, t, rel in g.edges:
        i, j = idx[s], idx[t]
        v = min(r[i, j], float(codes.get(rel, OTHER_RELATION)))
        r[i, j] = r[j, i] = v
    np.fill_diagonal(r, 0.0)
    return r


def shared_papers(a: ClaimGraph, b: ClaimGraph) -> list[str]:
    """Paper ids present in both graphs (the hard anchors)."""
    return sorted((set(a.paper_ids) & set(b.paper_ids)) - {""})


def forbidden_pairs(a: ClaimGraph, b: ClaimGraph) -> np.ndarray:
    """(i, i') forbidden by an anchor: one side carries a shared paper id the other lacks."""
    shared = set(shared_papers(a, b))
    pa, pb = np.array(a.paper_ids, dtype=object), np.array(b.paper_ids, dtype=object)
    anch_a = np.array([p in shared for p in a.paper_ids])
    anch_b = np.array([p in shared for p in b.paper_ids])
    differ = pa[:, None] != pb[None, :]
    return (anch_a[:, None] | anch_b[None, :]) & differ


MASSES = ("anchored", "weights", "uniform")


def _normalised(g: ClaimGraph) -> np.ndarray:
    return g.weights / g.weights.sum()


def node_masses(a: ClaimGraph, b: ClaimGraph, masses: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The node masses (m, m') of Eq. (20) under the rule ``masses`` and the rule actually used.

    "weights": the normalised importance weights w_V of Definition 13. "uniform": 1/|V|.
    "anchored": each paper id shared by both graphs gets u = 1/max(|V|, |V'|) in both graphs
    (split evenly among its nodes) and the rest of each graph shares 1 - |S| u evenly, which
    makes the anchors exact -- the weights w_V are then *not* used. It falls back to "weights"
    when no paper id is shared, or when a graph has no unanchored node left to carry its
    remaining mass (the anchors are then only as hard as the big-M penalty); the third value
    says which rule produced the masses ("anchored", "weights" or "uniform").
    """
    check_param("masses", masses, masses in MASSES, f"one of {', '.join(MASSES)}", "node_masses")
    if masses == "uniform":
        return (
            np.full(len(a.nodes), 1 / len(a.nodes)),
            np.full(len(b.nodes), 1 / len(b.nodes)),
            masses,
        )
    shared = shared_papers(a, b) if masses == "anchored" else set()
    if not shared:
        return _normalised(a), _normalised(b), "weights"
    u = 1.0 / max(len(a.nodes), len(b.nodes))
    out = []
    for g in (a, b):
        m = np.zeros(len(g.nodes))
        rest = [i for i, p in enumerate(g.paper_ids) if p not in shared]
        for p in shared:
            carriers = [i for i, q in enumerate(g.paper_ids) if q == p]
            m[carriers] = u / len(carriers)
        remaining = 1.0 - len(shared) * u
        if remaining > 1e-12 and not rest:
            return _normalised(a), _normalised(b), "weights"
        if rest:
            m[rest] = remaining / len(rest)
        out.append(m)
    return out[0], out[1], "anchored"


def anchored_masses(a: ClaimGraph, b: ClaimGraph) -> tuple[np.ndarray, np.ndarray]:
    """Masses under which the anchors are exact (:func:`node_masses` with "anchored")."""
    p, q, _ = node_masses(a, b, "anchored")
    return p, q


@dataclass(frozen=True)
class FGWResult:
    """Eq. (20) at the solver's coupling (unpenalised costs)."""

    value: float  # (1 - lam) feature + lam structure
    feature: float  # sum C Gamma
    structure: float  # sum |R - R'|^2 Gamma Gamma
    lam: float
    n_anchors: int
    anchor_violation: float  # mass on anchor-forbidden pairs
    plan: np.ndarray
    masses: str = "weights"  # the rule that produced the node masses (node_masses)


def fgw_objective(
    c: np.ndarray, r1: np.ndarray, r2: np.ndarray, plan: np.ndarray, lam: float
) -> tuple[float, float, float]:
    """(value, feature, structure) of Eq. (20) at ``plan`` (exact marginals assumed)."""
    p, q = plan.sum(axis=1), plan.sum(axis=0)
    feature = float(np.sum(c * plan))
    cross = float(np.sum((r1 @ plan @ r2.T) * plan))
    structure = float(p @ (r1**2) @ p + q @ (r2**2) @ q - 2.0 * cross)
    structure = max(structure, 0.0)
    return (1 - lam) * feature + lam * structure, feature, structure


def fgw_distance(
    a: ClaimGraph,
    b: ClaimGraph,
    lam: float = 0.5,
    anchors: bool = True,
    masses: str = "anchored",
    cost: np.ndarray | None = None,
    w_type: float = 1.0,
    w_text: float = 1.0,
    w_paper: float = 1.0,
) -> FGWResult:
    """Eq. (20) between two claim graphs with hard anchors on shared paper ids.

    ``masses``: "anchored", "weights" (normalised w_V) or "uniform" (:func:`node_masses`);
    ``FGWResult.masses`` says which rule was used ("anchored" ignores w_V).
    ``cost`` overrides the node cost C (shape |V| x |V'|, values in [0, 1]).
    """
    check_param("lam", lam, 0 <= lam <= 1, "in [0, 1]", "fgw_distance")
    c = node_cost(a, b, w_type, w_text, w_paper) if cost is None else np.asarray(cost, float)
    if c.shape != (len(a.nodes), len(b.nodes)):
        raise ConfigError("bad_parameter", "fgw_distance: cost must be |V| x |V'|")
    r1, r2 = structure_matrix(a), structure_matrix(b)
    p, q, used = node_masses(a, b, masses)
    forb = forbidden_pairs(a, b) if anchors else np.zeros_like(c, dtype=bool)
    n_anchors = len(shared_papers(a, b)) if anchors else 0
    if forb.any() and lam >= 1:
        raise ConfigError(
            "bad_parameter",
            "fgw_distance: hard anchors act through the feature term; use lambda_G < 1",
        )
    m_solve = c + (100.0 / (1.0 - lam)) * forb if forb.any() else c
    if lam == 0:
        plan = ot.emd(p, q, m_solve)
    else:
        plan = ot.gromov.fused_gromov_wasserstein(
            m_solve, r1, r2, p, q, loss_fun="square_loss", alpha=lam, symmetric=True
        )
    plan = np.asarray(plan, dtype=float)
    value, feature, structure = fgw_objective(c, r1, r2, plan, lam)
    violation = float(np.sum(plan[forb]))
    return FGWResult(value, feature, structure, lam, n_anchors, violation, plan, used)
