"""Pearson correlations with n, p-value and Fisher-z interval (toxicity paper Table 9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from biasrepro.errors import DataError
from biasrepro.metrics.correlation import pearson


def test_rho_p_value_and_fisher_interval() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = 0.6 * x + rng.normal(size=50)
    r = pearson(x, y)
    want = stats.pearsonr(x, y)
    assert r["rho"] == pytest.approx(want.statistic) and r["p_value"] == pytest.approx(
        want.pvalue)
    z, se = math.atanh(r["rho"]), 1 / math.sqrt(47)
    assert r["low"] == pytest.approx(math.tanh(z - 1.959964 * se), abs=1e-6)
    assert r["high"] == pytest.approx(math.tanh(z + 1.959964 * se), abs=1e-6)
    assert r["low"] < r["rho"] < r["high"] and r["n"] == 50 and r["note"] == ""


def test_three_points_as_in_the_paper() -> None:
    # selection bias of gender, race, religion against an FPR gap: three points
    r = pearson([0.027, 0.053, 0.077], [0.01, 0.03, 0.02])
    assert r["n"] == 3 and -1 <= r["rho"] <= 1 and 0 <= r["p_value"] <= 1
    assert math.isnan(r["low"]) and "no confidence interval" in r["note"]


def test_undefined_cases_say_why() -> None:
    assert "at least 3" in pearson([1.0, 2.0], [2.0, 1.0])["note"]
    nan_pairs = pearson([1.0, 2.0, float("nan"), 4.0], [1.0, float("nan"), 3.0, 4.0])
    assert nan_pairs["n"] == 2 and math.isnan(nan_pairs["rho"])
    assert "constant" in pearson([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])["note"]
    with pytest.raises(DataError, match="paired values"):
        pearson([1.0, 2.0, 3.0], [1.0, 2.0])
