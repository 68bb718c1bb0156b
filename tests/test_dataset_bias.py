"""Selection bias (toxicity paper Eq. 4) and overamplification bias (Eq. 5) on hand-made counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from biasrepro.metrics.dataset_bias import group_counts, overamplification_bias, selection_bias

ATTRIBUTES = {
    "gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
    "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
    "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]},
}


def test_overamplification_reproduces_the_papers_figures():
    # §6.5: gender 5795, race 5795, religion 6118.5 (a mean of two counts), max-normalized
    counts = {
        "female": {"n": 1000, "n_toxic": 0}, "male": {"n": 6795, "n_toxic": 0},
        "black": {"n": 2000, "n_toxic": 0}, "asian": {"n": 4000, "n_toxic": 0},
        "white": {"n": 8795, "n_toxic": 0},
        "jewish": {"n": 1000, "n_toxic": 0}, "muslim": {"n": 2001, "n_toxic": 0},
        "christian": {"n": 7619, "n_toxic": 0},
    }
    out = overamplification_bias(counts, ATTRIBUTES)
    assert {a: v["raw"] for a, v in out.items()} == {"gender": 5795, "race": 5795,
                                                      "religion": 6118.5}
    assert out["religion"]["normalized"] == 1.0
    assert out["gender"]["normalized"] == pytest.approx(0.94712756)
    assert out["race"]["normalized"] == out["gender"]["normalized"]


def test_selection_bias_uses_the_mean_ratio_of_a_multi_group_side():
    counts = {
        "female": {"n": 100, "n_toxic": 20}, "male": {"n": 200, "n_toxic": 20},
        "black": {"n": 50, "n_toxic": 10}, "asian": {"n": 40, "n_toxic": 4},
        "white": {"n": 100, "n_toxic": 5},
        "jewish": {"n": 10, "n_toxic": 1}, "muslim": {"n": 30, "n_toxic": 9},
        "christian": {"n": 80, "n_toxic": 20},
    }
    out = selection_bias(counts, ATTRIBUTES)
    assert out["gender"] == pytest.approx(0.1)          # |0.2 - 0.1|
    assert out["race"] == pytest.approx(0.1)            # |(0.2 + 0.1) / 2 - 0.05|
    assert out["religion"] == pytest.approx(0.05)       # |(0.1 + 0.3) / 2 - 0.25|


def test_selection_bias_is_nan_for_an_empty_group_and_missing_groups_are_named():
    counts = {"female": {"n": 0, "n_toxic": 0}, "male": {"n": 10, "n_toxic": 1}}
    assert math.isnan(selection_bias(counts, {"gender": ATTRIBUTES["gender"]})["gender"])
    with pytest.raises(ValueError, match="race.*black, asian"):
        selection_bias(counts, {"race": ATTRIBUTES["race"]})


def test_equal_sizes_normalize_to_zero():
    counts = {g: {"n": 5, "n_toxic": 1} for g in ("female", "male")}
    assert overamplification_bias(counts, {"gender": ATTRIBUTES["gender"]}) == {
        "gender": {"raw": 0.0, "normalized": 0.0}}


def test_group_counts_from_a_prepared_table():
    df = pd.DataFrame({
        "female": [1.0, 0.5, 0.49, np.nan, 0.8],
        "male": [0.0, 0.5, 0.0, np.nan, 0.1],
        "label": [1, 0, 1, 1, 0],
    })
    # 0.5 is a member (>=); a row with both identities counts for both; NaN is no member
    assert group_counts(df, ["female", "male"], 0.5) == {
        "female": {"n": 3, "n_toxic": 1}, "male": {"n": 1, "n_toxic": 0}}


# Counts with multi-group sides where the mean, the max and the min of a side all differ.
#   gender:   female 15/100 = 0.15
#             vs male 30/300 = 0.10
#   race:     black 12/40 = 0.30, asian 5/50 = 0.10, latino 1/20 = 0.05
#             vs white 20/200 = 0.10
#   religion: jewish 5/25 = 0.20, muslim 24/60 = 0.40
#             vs christian 8/80 = 0.10, atheist 5/20 = 0.25
MULTI_ATTRIBUTES = {
    "gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
    "race": {"marginalized": ["black", "asian", "latino"], "non_marginalized": ["white"]},
    "religion": {"marginalized": ["jewish", "muslim"],
                 "non_marginalized": ["christian", "atheist"]},
}
MULTI_COUNTS = {
    "female": {"n": 100, "n_toxic": 15}, "male": {"n": 300, "n_toxic": 30},
    "black": {"n": 40, "n_toxic": 12}, "asian": {"n": 50, "n_toxic": 5},
    "latino": {"n": 20, "n_toxic": 1}, "white": {"n": 200, "n_toxic": 20},
    "jewish": {"n": 25, "n_toxic": 5}, "muslim": {"n": 60, "n_toxic": 24},
    "christian": {"n": 80, "n_toxic": 8}, "atheist": {"n": 20, "n_toxic": 5},
}


def test_eq4_on_multi_group_sides_in_closed_form():
    out = selection_bias(MULTI_COUNTS, MULTI_ATTRIBUTES)
    assert out["gender"] == pytest.approx(0.05)          # |0.15 - 0.10|
    # mean of the side: (0.30 + 0.10 + 0.05) / 3 = 0.15 -> |0.15 - 0.10| = 0.05
    # (its max, 0.30, would give 0.20; pooled rows, 18/110, 0.0636)
    assert out["race"] == pytest.approx(0.05)
    # (0.20 + 0.40) / 2 = 0.30 against (0.10 + 0.25) / 2 = 0.175 -> 0.125
    # (max against max: |0.40 - 0.25| = 0.15; pooled: 29/85 - 13/100 = 0.2112)
    assert out["religion"] == pytest.approx(0.125)


def test_eq5_on_multi_group_sides_in_closed_form():
    out = overamplification_bias(MULTI_COUNTS, MULTI_ATTRIBUTES)
    raw = {a: v["raw"] for a, v in out.items()}
    assert raw["gender"] == pytest.approx(200)            # |100 - 300|
    assert raw["race"] == pytest.approx(490 / 3)          # |(40 + 50 + 20) / 3 - 200|
    assert raw["religion"] == pytest.approx(7.5)          # |(25 + 60) / 2 - (80 + 20) / 2|
    # max normalization: divided by the largest raw value, 200
    assert out["gender"]["normalized"] == pytest.approx(1.0)
    assert out["race"]["normalized"] == pytest.approx(490 / 600)
    assert out["religion"]["normalized"] == pytest.approx(7.5 / 200)


def test_eq4_and_eq5_from_rows_with_those_counts():
    """The same counts as rows of a table (one identity column per group, one group per
    row), through group_counts: the same closed-form values."""
    groups = list(MULTI_COUNTS)
    rows = []
    for g, c in MULTI_COUNTS.items():
        for k in range(c["n"]):
            rows.append({**{h: float(h == g) for h in groups}, "label": int(k < c["n_toxic"])})
    counts = group_counts(pd.DataFrame(rows), groups, 0.5)
    assert counts == MULTI_COUNTS
    assert selection_bias(counts, MULTI_ATTRIBUTES) == pytest.approx(
        {"gender": 0.05, "race": 0.05, "religion": 0.125})
    assert overamplification_bias(counts, MULTI_ATTRIBUTES)["race"]["raw"] == pytest.approx(
        490 / 3)
