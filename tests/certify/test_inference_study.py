"""The inference simulation (evidence for the default method) and the unequal-cluster simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kit.certify.design import Design
from kit.certify.engine import certify_board, pair_verdicts, prepare_board
from kit.certify.inference import DEFAULT_INFERENCE
from kit.certify.inference_study import inference_study
from kit.certify.simulate import simulate_board, unequal_sizes
from kit.core.errors import ConfigError


@pytest.mark.parametrize("k", [4, 6, 8, 12, 23])
def test_unequal_sizes_sum_and_spread(k: int) -> None:
    sizes = unequal_sizes(60, k, 8.0)
    assert len(sizes) == k and sum(sizes) == 60 and min(sizes) >= 1
    assert list(sizes) == sorted(sizes) and max(sizes) > min(sizes)


def test_simulator_honours_cluster_sizes() -> None:
    frame = simulate_board(
        np.random.default_rng(0), {"A": 0.0, "B": 0.0}, n_tasks=20, n_clusters=3,
        cluster_sizes=[2, 6, 12],
    )  # fmt: skip
    per = frame.drop_duplicates("task_id").groupby("cluster").size()
    assert sorted(per.tolist()) == [2, 6, 12]
    with pytest.raises(ConfigError):
        simulate_board(np.random.default_rng(0), {"A": 0.0}, n_tasks=20, n_clusters=3,
                       cluster_sizes=[2, 6, 11])  # fmt: skip


def test_study_verdicts_are_the_certify_verdicts() -> None:
    frame = simulate_board(
        np.random.default_rng(4), {"A": 0.15, "B": 0.0, "C": 0.0}, n_tasks=40, n_clusters=6,
        cluster_sizes=unequal_sizes(40, 6), cluster_sd=0.08,
    )  # fmt: skip
    for method in ("cr1", "cr2", "crv3", "signflip"):
        design = Design(min_common_tasks=2, inference=method)
        v = pair_verdicts(prepare_board(frame, design), design)
        pairs = certify_board(frame, design).pairs.set_index(["readout", "system_a", "system_b"])
        for i, (a, b) in enumerate(v.fam.pairs):
            assert pairs.loc[("quality", a, b), "verdict"] == v.verdict[i]


def test_study_table_shape_and_ranges() -> None:
    table = inference_study([4], 3, seed=0)
    assert len(table) == 2 * 4
    assert table["fwer"].between(0, 1).all() and table["power"].between(0, 1).all()
    assert (table["fwer_lo"] <= table["fwer"]).all() and (table["fwer"] <= table["fwer_hi"]).all()
    # K = 4: no sign-flip p-value is below 2/16 > 0.005, so it can never certify
    sf = table[table["method"] == "signflip"]
    assert (sf["fwer"] == 0).all() and (sf["power"] == 0).all()


@pytest.mark.slow
def test_default_method_holds_alpha_in_every_cell_1000_boards() -> None:
    """Done-when of issue 15: >= 1,000 null boards per cell, FWER <= 0.05 + 3 MC sd."""
    n = 1000
    table = inference_study([4, 6, 8, 12, 23], n, seed=11, methods=(DEFAULT_INFERENCE,))
    slack = 3 * math.sqrt(0.05 * 0.95 / n)
    assert (table["fwer"] <= 0.05 + slack).all(), table.to_string()
