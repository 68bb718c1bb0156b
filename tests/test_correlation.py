"""Pearson correlations with n, p-value, Fisher-z interval, distinct counts and permutation
p-values (toxicity paper Table 9)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from biasrepro.errors import DataError
from biasrepro.metrics.correlation import PERMUTATIONS, SEED, pearson


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


def test_distinct_counts_and_a_note_when_points_share_an_x() -> None:
    x = [0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.9, 0.9, 0.9]          # 3 models x 3 attributes
    y = [0.01, 0.02, 0.03, 0.05, 0.04, 0.06, 0.09, 0.08, 0.08]
    r = pearson(x, y)
    assert (r["n"], r["distinct_x"], r["distinct_y"]) == (9, 3, 8)
    assert "share 3 x values" in r["note"]
    # whole clusters shuffled: 3! orderings, the observed one the most extreme
    assert r["cluster_permutations"] == "exact (6 orderings)"
    assert r["p_cluster"] == pytest.approx(1 / 6)
    assert r["permutations"] == "exact (362880 orderings)" and r["p_permutation"] < 0.01
    assert pearson([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])["note"] == ""


def test_exact_permutation_p_matches_brute_force() -> None:
    x = np.array([0.3, 1.2, 0.7, 2.5, 1.9, 0.1])
    y = np.array([0.2, 0.9, 1.1, 1.7, 2.2, 0.4])
    r = pearson(x, y)
    observed = abs(np.corrcoef(x, y)[0, 1])
    perms = [abs(np.corrcoef(x, y[list(p)])[0, 1]) for p in itertools.permutations(range(6))]
    want = sum(v >= observed - 1e-12 for v in perms) / len(perms)
    assert r["permutations"] == "exact (720 orderings)"
    assert r["p_permutation"] == pytest.approx(want, abs=1e-12)
    assert r["p_cluster"] == r["p_permutation"]                # every x distinct
    # ties in x: clusters (x = 1, 1 | 2 | 3, 3) take each of the 3! orders of the x values
    tx, ty = np.array([1.0, 1.0, 2.0, 3.0, 3.0]), np.array([0.1, 0.3, 0.2, 0.8, 0.5])
    values, labels = np.unique(tx, return_inverse=True)
    obs = abs(np.corrcoef(tx, ty)[0, 1])
    clus = [abs(np.corrcoef(values[list(p)][labels], ty)[0, 1])
            for p in itertools.permutations(range(3))]
    assert pearson(tx, ty)["p_cluster"] == pytest.approx(
        sum(v >= obs - 1e-12 for v in clus) / 6)


def test_random_permutation_p_is_close_to_pearsons_on_a_large_sample() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=400), rng.normal(size=400)        # independent pairs
    r = pearson(x, y)
    assert r["permutations"] == f"random ({PERMUTATIONS} orderings, seed {SEED})"
    # 10,000 draws: standard error at most 0.005
    assert r["p_permutation"] == pytest.approx(stats.pearsonr(x, y).pvalue, abs=0.015)


def test_permutation_p_is_seeded() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=30), rng.normal(size=30)
    first, again = pearson(x, y), pearson(x, y)
    assert first["p_permutation"] == again["p_permutation"]
    other = pearson(x, y, seed=1, permutations=500)
    assert other["permutations"] == "random (500 orderings, seed 1)"
    assert other["p_permutation"] != first["p_permutation"]


def test_a_negative_correlation_stays_negative() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    y = [0.9, 0.7, 0.8, 0.4, 0.3, 0.1]
    r = pearson(x, y)
    assert r["rho"] < -0.9 and r["high"] < 0
    assert r["rho"] == pytest.approx(-pearson(x, [-v for v in y])["rho"])
    assert r["p_permutation"] == pytest.approx(pearson(x, [-v for v in y])["p_permutation"])
    assert r["p_permutation"] < 0.05
