"""Eq. (20) fused Gromov-Wasserstein between typed claim graphs, with hard anchors (A.6)."""

from __future__ import annotations

import itertools

import numpy as np
import ot
import pytest

from kit.certify import graph as G
from kit.core.errors import ConfigError


def review() -> G.ClaimGraph:
    return G.ClaimGraph(
        ("t", "c1", "c2", "p1", "p2"),
        ("topic", "claim", "claim", "paper", "paper"),
        ("statins", "statins reduce LDL", "statins raise diabetes risk", "", ""),
        ("", "", "", "PMID1", "PMID2"),
        np.ones(5),
        (
            ("c1", "t", "belongs-to-topic"),
            ("c2", "t", "belongs-to-topic"),
            ("p1", "c1", "supports"),
            ("p2", "c2", "supports"),
        ),
    )


def generated() -> G.ClaimGraph:
    return G.ClaimGraph(
        ("T", "C1", "P3", "P1"),
        ("topic", "claim", "paper", "paper"),
        ("statin therapy", "statins lower LDL cholesterol", "", ""),
        ("", "", "PMID3", "PMID1"),
        np.ones(4),
        (("C1", "T", "belongs-to-topic"), ("P1", "C1", "supports"), ("P3", "C1", "contradicts")),
    )


def test_objective_matches_brute_force() -> None:
    a, b = review(), generated()
    c, r1, r2 = G.node_cost(a, b), G.structure_matrix(a), G.structure_matrix(b)
    plan = np.random.default_rng(0).dirichlet(np.ones(20)).reshape(5, 4)
    brute = sum(
        (r1[i, j] - r2[k, m]) ** 2 * plan[i, k] * plan[j, m]
        for i, j, k, m in itertools.product(range(5), range(5), range(4), range(4))
    )
    value, feature, structure = G.fgw_objective(c, r1, r2, plan, 0.3)
    assert structure == pytest.approx(brute, abs=1e-12)
    assert feature == pytest.approx(float(np.sum(c * plan)))
    assert value == pytest.approx(0.7 * feature + 0.3 * brute)


def test_lambda_zero_is_exact_ot() -> None:
    a, b = review(), generated()
    r = G.fgw_distance(a, b, lam=0.0, anchors=False, masses="uniform")
    c = G.node_cost(a, b)
    assert r.value == pytest.approx(ot.emd2(np.full(5, 0.2), np.full(4, 0.25), c), abs=1e-12)


def test_identical_graphs_are_at_zero() -> None:
    r = G.fgw_distance(review(), review(), lam=0.5)
    assert r.value == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(r.plan, np.eye(5) / 5)


def test_hard_anchor_on_shared_paper() -> None:
    a, b = review(), generated()
    r = G.fgw_distance(a, b, lam=0.5)
    assert r.n_anchors == 1 and r.anchor_violation <= 1e-12
    i, k = a.nodes.index("p1"), b.nodes.index("P1")
    p, q = G.anchored_masses(a, b)
    assert p[i] == pytest.approx(q[k]) == pytest.approx(r.plan[i, k])
    assert r.plan[i].sum() == pytest.approx(r.plan[i, k])  # all of p1's mass goes to P1
    # the solver's value never exceeds the product coupling's (conditional gradient descends)
    free = G.fgw_distance(a, b, lam=0.5, anchors=False, masses="uniform")
    prod = np.full((5, 4), 1 / 20)
    start = G.fgw_objective(
        G.node_cost(a, b), G.structure_matrix(a), G.structure_matrix(b), prod, 0.5
    )[0]
    assert free.value <= start + 1e-12


def test_anchor_needs_a_feature_term_and_bad_graphs_fail() -> None:
    with pytest.raises(ConfigError, match="lambda_G < 1"):
        G.fgw_distance(review(), generated(), lam=1.0)
    assert G.fgw_distance(review(), generated(), lam=1.0, anchors=False).value >= 0
    with pytest.raises(ConfigError):
        G.ClaimGraph(("a",), ("claim",), ("x",), ("",), np.ones(1), (("a", "zz", "supports"),))


def test_text_embedding_is_deterministic_and_normalised() -> None:
    e1 = G.hashed_trigram_embedding(["Statins reduce LDL", ""])
    e2 = G.hashed_trigram_embedding(["statins   reduce ldl", ""])
    assert np.array_equal(e1, e2)
    assert np.linalg.norm(e1[0]) == pytest.approx(1.0) and not e1[1].any()


def test_infeasible_anchors_are_reported_not_hidden() -> None:
    """A's two nodes are both anchored but B has a third node: masses cannot match exactly."""
    a = G.ClaimGraph(("p1", "p2"), ("paper", "paper"), ("", ""), ("X", "Y"), np.ones(2))
    b = G.ClaimGraph(
        ("q1", "q2", "c"),
        ("paper", "paper", "claim"),
        ("", "", "a claim"),
        ("X", "Y", ""),
        np.ones(3),
    )
    r = G.fgw_distance(a, b, lam=0.5)
    assert r.n_anchors == 2
    assert r.anchor_violation == pytest.approx(1 / 3, abs=1e-9)  # B's claim must be fed by p1/p2
    assert r.plan[0, 0] == pytest.approx(1 / 3) and r.plan[1, 1] == pytest.approx(1 / 3)
