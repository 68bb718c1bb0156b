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


# --- hand-computed values: the sign of ρ and everything derived from it -------------------

def test_a_perfect_negative_line_by_hand() -> None:
    # y = 10 - 2x: every point on a falling line, so ρ = −1 exactly. Of the 4! = 24 orders
    # of y, only the observed one (ρ = −1) and its reversal (ρ = +1) reach |ρ| = 1: p = 2/24.
    r = pearson([1.0, 2.0, 3.0, 4.0], [8.0, 6.0, 4.0, 2.0])
    assert r["rho"] == pytest.approx(-1.0, abs=1e-12)
    assert r["high"] == pytest.approx(-1.0, abs=1e-6) and r["low"] == pytest.approx(-1.0)
    assert r["p_value"] == pytest.approx(0.0, abs=1e-12)
    assert r["permutations"] == "exact (24 orderings)"
    assert r["p_permutation"] == pytest.approx(2 / 24)
    rising = pearson([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0])
    assert rising["rho"] == pytest.approx(1.0, abs=1e-12) and rising["low"] > 0.999


# x = 1..5, mean 3, deviations dx = (−2, −1, 0, 1, 2), Σdx² = 10.
# y+ = (2, 1, 4, 3, 5): dy = (−1, −2, 1, 0, 2), Σdy² = 10, Σdx·dy = 2 + 2 + 0 + 0 + 4 = 8
#   → ρ = 8 / sqrt(10 · 10) = 0.8.
# y− = (4, 5, 2, 3, 1): dy = (1, 2, −1, 0, −2), Σdx·dy = −2 − 2 + 0 + 0 − 4 = −8 → ρ = −0.8.
# t = ρ·sqrt(n − 2) / sqrt(1 − ρ²) = 0.8·sqrt(3)/0.6 = 2.3094 on 3 degrees of freedom:
#   two-sided p = 0.10408 (either sign).
# Fisher z: atanh(0.8) = ln 3 = 1.098612, se = 1/sqrt(5 − 3) = 0.707107,
#   half width 1.959964 · 0.707107 = 1.385904:
#   ρ = +0.8: [tanh(−0.287292), tanh(2.484516)] = [−0.279640, 0.986196]
#   ρ = −0.8: the mirror image, [−0.986196, 0.279640].
X5 = [1.0, 2.0, 3.0, 4.0, 5.0]
Y_UP, Y_DOWN = [2.0, 1.0, 4.0, 3.0, 5.0], [4.0, 5.0, 2.0, 3.0, 1.0]


def test_a_non_trivial_positive_and_negative_rho_by_hand() -> None:
    up, down = pearson(X5, Y_UP), pearson(X5, Y_DOWN)
    assert up["rho"] == pytest.approx(0.8, abs=1e-12)
    assert down["rho"] == pytest.approx(-0.8, abs=1e-12)
    for r in (up, down):
        assert r["p_value"] == pytest.approx(0.10408, abs=5e-5)
        assert r["n"] == 5 and r["note"] == ""
    assert (up["low"], up["high"]) == (pytest.approx(-0.279640, abs=1e-5),
                                       pytest.approx(0.986196, abs=1e-5))
    assert (down["low"], down["high"]) == (pytest.approx(-0.986196, abs=1e-5),
                                           pytest.approx(0.279640, abs=1e-5))
    # the interval holds ρ on its own side of 0: mostly below 0 for the negative one
    assert down["low"] < down["rho"] < down["high"] and down["low"] + down["high"] < 0


def test_the_permutation_p_of_the_hand_example_by_enumeration() -> None:
    # the 120 orders of y+ enumerated here: ρ of each from its own Σdx·dy / 10
    dx = [-2, -1, 0, 1, 2]
    sums = [sum(a * (b - 3) for a, b in zip(dx, order, strict=True))
            for order in itertools.permutations(Y_UP)]
    extreme = sum(abs(s) >= 8 for s in sums)            # |ρ| >= 0.8 <=> |Σdx·dy| >= 8
    up, down = pearson(X5, Y_UP), pearson(X5, Y_DOWN)
    assert up["permutations"] == "exact (120 orderings)"
    assert up["p_permutation"] == pytest.approx(extreme / 120)
    assert down["p_permutation"] == pytest.approx(extreme / 120)   # two-sided: same p


def test_undefined_results_have_every_key_of_a_defined_one() -> None:
    defined = pearson(X5, Y_UP)
    for undefined in (pearson([1.0, 2.0], [2.0, 1.0]), pearson([1.0] * 4, [1.0, 2.0, 3.0, 4.0])):
        assert set(undefined) == set(defined)
        assert all(math.isnan(undefined[k]) for k in ("rho", "p_value", "low", "high",
                                                      "p_permutation", "p_cluster"))


def test_a_side_spanning_exactly_one_is_not_constant() -> None:
    # x = 1..4: dx = (−1.5, −0.5, 0.5, 1.5), Σdx² = 5; y = (0, 1, 0, 1): dy = ±0.5, Σdy² = 1,
    # Σdx·dy = 0.75 − 0.25 − 0.25 + 0.75 = 1 -> ρ = 1 / sqrt(5)
    r = pearson([1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.0, 1.0])
    assert r["rho"] == pytest.approx(1 / math.sqrt(5)) and r["note"] == ""
    assert pearson([0.0, 1.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0])["rho"] == pytest.approx(
        1 / math.sqrt(5))


def test_many_clusters_are_shuffled_at_random_with_the_given_draws() -> None:
    # 10 distinct x values, each twice: 10! orderings of the clusters is past EXACT_LIMIT
    x = [float(v) for v in range(10) for _ in range(2)]
    y = [v + 0.1 * (i % 3) for i, v in enumerate(x)]
    r = pearson(x, y, permutations=300, seed=2)
    assert r["cluster_permutations"] == "random (300 orderings, seed 2)"
    assert r["permutations"] == "random (300 orderings, seed 2)"
    # y rises with x: no shuffle of the clusters gets as close to a line; p = 1 / 301
    assert r["p_cluster"] == pytest.approx(1 / 301)


def test_adjust_adds_benjamini_hochberg_beside_each_p_over_the_defined_ones() -> None:
    """Worked by hand: four defined p (m = 4) sorted 0.01, 0.03, 0.04, 0.5 scale to 0.04,
    0.06, 0.0533, 0.5; the running minimum from the largest gives 0.04, 0.0533, 0.0533, 0.5.
    An undefined p stays undefined and does not count in m."""
    import pandas as pd

    from biasrepro.metrics.correlation import adjust

    table = pd.DataFrame({"rho": [0.1] * 5, "p_value": [0.01, 0.04, 0.03, math.nan, 0.5],
                          "p_cluster": [0.5] * 5, "note": [""] * 5})
    out = adjust(table)
    assert list(out.columns) == ["rho", "p_value", "p_value_bh", "p_cluster", "p_cluster_bh",
                                 "note"]
    assert out["p_value_bh"].tolist()[:3] == pytest.approx([0.04, 0.16 / 3, 0.16 / 3])
    assert math.isnan(out["p_value_bh"][3]) and out["p_value_bh"][4] == pytest.approx(0.5)
    assert out["p_cluster_bh"].tolist() == pytest.approx([0.5] * 5)
    assert list(table.columns) == ["rho", "p_value", "p_cluster", "note"]  # not changed


def test_adjust_keeps_an_empty_or_undefined_table_undefined() -> None:
    import pandas as pd

    from biasrepro.metrics.correlation import adjust

    empty = adjust(pd.DataFrame(columns=["p_value", "p_cluster"]))
    assert list(empty.columns) == ["p_value", "p_value_bh", "p_cluster", "p_cluster_bh"]
    nan = adjust(pd.DataFrame({"p_value": [math.nan], "p_cluster": [math.nan]}))
    assert nan.isna().all().all()
