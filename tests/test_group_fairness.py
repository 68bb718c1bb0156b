"""Group fairness: FPR/TPR/AUC gaps (toxicity paper Eqs. 1–3), Borkan et al.'s AUCs, and the
vectorized bootstrap, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from biasrepro.errors import ConfigError, DataError
from biasrepro.metrics import group_fairness as gf

#       group A: preds at 0.5 = 0 1 0 1 -> FPR 1/2, TPR 1/2; AUC: 3 of 4 pairs ordered = 0.75
#       group B: preds 1 1 0          -> FPR 1,   TPR 1/2; AUC: 1 of 2 pairs = 0.5
#       group D: preds 0 1            -> FPR 0,   TPR 1,   AUC 1
LABELS = [0, 0, 1, 1, 0, 1, 1, 0, 1]
PROBS = [0.1, 0.6, 0.4, 0.9, 0.7, 0.8, 0.2, 0.2, 0.9]
GROUPS = ["A", "A", "A", "A", "B", "B", "B", "D", "D"]
ATTRS = {"race": {"marginalized": ["A", "B"], "non_marginalized": ["D"]}}


def test_group_rates_and_aucs_by_hand() -> None:
    t = gf.group_metrics(LABELS, PROBS, GROUPS).set_index("group")
    assert t.loc["A", ["fpr", "tpr", "auc"]].tolist() == [0.5, 0.5, 0.75]
    assert t.loc["B", ["fpr", "tpr", "auc"]].tolist() == [1.0, 0.5, 0.5]
    assert t.loc["D", ["fpr", "tpr", "auc"]].tolist() == [0.0, 1.0, 1.0]
    assert (t["note"] == "").all()


def test_gaps_use_the_mean_of_the_marginalized_groups() -> None:
    t = gf.fairness_gaps(LABELS, PROBS, GROUPS, ATTRS, resamples=200, seed=1)
    value = t.set_index("metric")["value"]
    assert value["FPR_gap"] == pytest.approx(0.75)        # |(0.5 + 1)/2 - 0|
    assert value["TPR_gap"] == pytest.approx(0.5)         # |(0.5 + 0.5)/2 - 1|
    assert value["AUC_gap"] == pytest.approx(0.375)       # |(0.75 + 0.5)/2 - 1|
    assert (t["low"] <= t["high"]).all()
    again = gf.fairness_gaps(LABELS, PROBS, GROUPS, ATTRS, resamples=200, seed=1)
    assert again.equals(t)
    other = gf.fairness_gaps(LABELS, PROBS, GROUPS, ATTRS, resamples=200, seed=2)
    assert not other[["low", "high"]].equals(t[["low", "high"]])


def test_bootstrap_interval_covers_the_value_on_a_large_sample() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    groups = rng.choice(["f", "m"], size=n)
    labels = rng.integers(0, 2, size=n)
    shift = np.where(groups == "f", 0.15, 0.0)
    probs = np.clip(0.35 + 0.3 * labels + shift + rng.normal(0, 0.2, n), 0, 1)
    attrs = {"gender": {"marginalized": ["f"], "non_marginalized": ["m"]}}
    t = gf.fairness_gaps(labels, probs, groups, attrs, resamples=500, seed=0)
    for row in t.itertuples():
        assert row.low <= row.value <= row.high, row
        assert row.high - row.low < 0.1, row
    assert t.set_index("metric").loc["FPR_gap", "value"] > 0.1


def test_rank_auc_matches_sklearn_with_ties_row_by_row() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, size=(5, 40))
    probs = np.round(rng.random((5, 40)), 1)                  # many ties
    got = gf._auc(labels, probs)
    want = [roc_auc_score(labels[i], probs[i]) for i in range(5)]
    np.testing.assert_allclose(got, want)


def test_undefined_rates_are_nan_with_a_reason_never_zero() -> None:
    labels, probs, groups = [0, 0, 1, 0], [0.2, 0.7, 0.9, 0.1], ["x", "x", "y", "y"]
    t = gf.group_metrics(labels, probs, groups).set_index("group")
    assert np.isnan(t.loc["x", "tpr"]) and np.isnan(t.loc["x", "auc"])
    assert "no positives" in t.loc["x", "note"] and "AUC undefined" in t.loc["x", "note"]
    gaps = gf.fairness_gaps(labels, probs, groups,
                            {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}},
                            resamples=50)
    tpr = gaps.set_index("metric").loc["TPR_gap"]
    assert np.isnan(tpr["value"]) and "group 'x' has no positives" in tpr["note"]


def test_borkan_aucs_by_their_definitions() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, size=200)
    probs = rng.random(200)
    member = rng.random(200) < 0.3
    row = gf.borkan_aucs(labels, probs, {"muslim": member}).iloc[0]
    assert row["subgroup_auc"] == pytest.approx(roc_auc_score(labels[member], probs[member]))
    bpsn = (member & (labels == 0)) | (~member & (labels == 1))
    bnsp = (member & (labels == 1)) | (~member & (labels == 0))
    assert row["bpsn_auc"] == pytest.approx(roc_auc_score(labels[bpsn], probs[bpsn]))
    assert row["bnsp_auc"] == pytest.approx(roc_auc_score(labels[bnsp], probs[bnsp]))
    assert row["n"] == member.sum() and row["note"] == ""


def test_generalized_mean_power_minus_five() -> None:
    assert gf.generalized_mean([0.8, 0.9]) == pytest.approx(((0.8**-5 + 0.9**-5) / 2) ** -0.2)
    assert gf.generalized_mean([0.8, float("nan")]) == pytest.approx(0.8)
    assert gf.generalized_mean([0.7, 0.7, 0.7]) == pytest.approx(0.7)
    assert np.isnan(gf.generalized_mean([]))
    # the worst identity weighs most: below the arithmetic mean
    assert gf.generalized_mean([0.6, 0.95]) < (0.6 + 0.95) / 2


@pytest.mark.parametrize(("labels", "probs", "groups", "attrs", "error", "match"), [
    ([0, 2], [0.1, 0.2], ["A", "D"], ATTRS, DataError, r"row 2, column 'label'"),
    ([0, 1], [0.1, 1.5], ["A", "D"], ATTRS, DataError, r"row 2, column 'prob'"),
    ([0, 1], [0.1, 0.5], ["A", "D"], ATTRS, DataError, r"no row of group 'B'"),
    ([0, 1], [0.1, 0.5], ["A", "D"], {"g": {"marginalized": ["A"], "non_marginalized": []}},
     ConfigError, "attributes.g"),
    ([0, 1, 1], [0.1, 0.5], ["A", "D", "D"], ATTRS, DataError, "equally long"),
])
def test_bad_input_is_a_clear_error(labels, probs, groups, attrs, error, match) -> None:
    with pytest.raises(error, match=match):
        gf.fairness_gaps(labels, probs, groups, attrs, resamples=10)

