"""The naive small-n baseline is the order statistic s_(floor(n (1 - alpha))) (seed 001, S3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kit.core.errors import ConfigError
from kit.guard.conformal import rule as conformal


@pytest.mark.parametrize("n", [10, 25, 50, 99, 200])
@pytest.mark.parametrize("alpha", [0.02, 0.05, 0.1, 0.2])
def test_naive_tau_is_lower_order_statistic(n: int, alpha: float) -> None:
    s = np.random.default_rng(n).random(n)
    k = math.floor(round(n * (1 - alpha), 9))
    if k < 1:
        with pytest.raises(ConfigError):
            conformal.naive_tau(s, alpha)
        return
    tau = conformal.naive_tau(s, alpha)
    assert tau == np.sort(s)[k - 1]
    assert tau == np.quantile(s, 1 - alpha, method="inverted_cdf") or n * (1 - alpha) % 1 != 0
    assert np.mean(s <= tau) <= 1 - alpha + 1e-12  # empirical CDF never above 1 - alpha


def test_paper_case_n25() -> None:
    s = np.arange(1, 26) / 100.0
    assert conformal.naive_tau(s, 0.1) == 0.22  # s_(22) of 25
    assert conformal.naive_tau(np.arange(1, 11) / 10, 0.1) == 0.9  # n(1-alpha) = 9 exactly


def test_naive_refuses_when_no_order_statistic() -> None:
    with pytest.raises(ConfigError, match="no order statistic"):
        conformal.naive_tau([0.3], 0.5)
