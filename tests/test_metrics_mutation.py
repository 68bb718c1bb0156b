"""Tests found by mutation testing (scripts/mutation, mutmut): each kills surviving mutants of
the metrics modules, with expectations worked out by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from biasrepro.errors import ConfigError, DataError
from biasrepro.metrics import group_fairness as gf
from biasrepro.metrics.classification import classification_metrics
from biasrepro.metrics.counterfactual import sense_score
from biasrepro.metrics.dataset_bias import group_counts, overamplification_bias

G = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]}}
AD = {"a": {"marginalized": ["A"], "non_marginalized": ["D"]}}


# ---- classification ---------------------------------------------------------------------
def test_cls_probability_at_threshold_is_positive_and_threshold_reported() -> None:
    m = classification_metrics([1, 0], [0.5, 0.2])            # 0.5 >= 0.5: predicted 1
    assert m["accuracy"] == 1.0 and m["f1"] == 1.0 and m["threshold"] == 0.5
    assert classification_metrics([1, 0], [0.7, 0.2], threshold=0.7)["threshold"] == 0.7


def test_cls_empty_input_gives_none() -> None:
    assert classification_metrics([], []) == {"n": 0, "positive_rate": None, "threshold": 0.5,
                                              "accuracy": None, "f1": None, "roc_auc": None}


def test_cls_f1_without_positives_is_zero_and_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert classification_metrics([0, 0], [0.1, 0.2])["f1"] == 0.0


# ---- counterfactual ---------------------------------------------------------------------
def test_sense_probabilities_0_and_1_are_valid() -> None:
    assert sense_score([0.0, 1.0], [1.0, 1.0]) == pytest.approx(0.5)


def test_sense_error_names_the_value_and_the_column() -> None:
    with pytest.raises(DataError, match=r"row 1, column 'prob_g': probability 1\.5 is outside"):
        sense_score([1.5, 0.2], [0.3, 0.4])
    with pytest.raises(DataError, match=r"row 2, column 'prob_g_hat': probability 1\.2 is out"):
        sense_score([0.1, 0.2], [0.3, 1.2])
    with pytest.raises(DataError, match=r"^SenseScore of no sentence pairs is undefined$"):
        sense_score([], [])
    with pytest.raises(DataError, match=r"got \(2,\) and \(1,\) probabilities$"):
        sense_score([0.1, 0.2], [0.3])


# ---- dataset_bias -----------------------------------------------------------------------
def test_group_counts_missing_value_in_a_nullable_column_is_no_member() -> None:
    df = pd.DataFrame({"female": pd.array([1.0, pd.NA, 0.2], dtype="Float64"),
                       "label": [1, 1, 0]})
    assert group_counts(df, ["female"], 0.5) == {"female": {"n": 1, "n_toxic": 1}}


def test_overamplification_names_the_attribute_of_a_missing_group_and_allows_none() -> None:
    with pytest.raises(ValueError, match=r"attribute 'gender': no counts for group\(s\) male"):
        overamplification_bias({"female": {"n": 3, "n_toxic": 1}}, G)
    assert overamplification_bias({}, {}) == {}


# ---- group_fairness ---------------------------------------------------------------------
def test_gf_counts_and_exact_notes_per_group() -> None:
    t = gf.group_metrics([0, 0, 1, 1, 1, 1], [0.1, 0.6, 0.4, 0.9, 0.2, 0.9],
                         ["A", "A", "A", "A", "z", "z"]).set_index("group")
    assert t.loc["A", ["n", "positives", "negatives"]].tolist() == [4, 2, 2]
    assert t.loc["z", ["n", "positives", "negatives"]].tolist() == [2, 2, 0]
    assert t.loc["A", "note"] == ""
    assert t.loc["z", "note"] == "no negatives: FPR undefined; one class only: AUC undefined"
    t = gf.group_metrics([0, 0], [0.2, 0.7], ["x", "x"]).set_index("group")
    assert t.loc["x", "note"] == "no positives: TPR undefined; one class only: AUC undefined"


def test_gf_probability_at_threshold_is_a_positive_prediction() -> None:
    labels, probs = [0, 1] * 40, [0.5] * 40 + [0.0] * 40        # 20 of each class per group
    groups = ["A"] * 40 + ["D"] * 40
    t = gf.group_metrics(labels, probs, groups).set_index("group")
    assert t.loc["A", ["fpr", "tpr"]].tolist() == [1.0, 1.0]
    gaps = gf.fairness_gaps(labels, probs, groups, AD, resamples=50).set_index("metric")
    for m in ("FPR_gap", "TPR_gap"):                 # every resample: 1 - 0, no widening
        assert gaps.loc[m, ["value", "low", "high", "resamples"]].tolist() == [1, 1, 1, 50]
        assert gaps.loc[m, "note"] == ""


def test_gf_undefined_metrics_notes_and_counts_exactly() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # 0/0 is NaN silently, no RuntimeWarning
        t = gf.fairness_gaps([0, 0, 0, 0], [0.2, 0.7, 0.9, 0.1], ["x", "x", "y", "y"],
                             {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}},
                             resamples=20).set_index("metric")
        gf._auc(np.array([[1, 1]]), np.array([[0.2, 0.3]]))
    assert t.loc["TPR_gap", "note"] == "group 'x' has no positives; group 'y' has no positives"
    assert t.loc["AUC_gap", "note"] == ("group 'x' has one class only; "
                                        "group 'y' has one class only")
    assert t.loc["TPR_gap", "resamples"] == 0 and np.isnan(t.loc["TPR_gap", "low"])
    assert t.loc["FPR_gap", "note"] == "" and t.loc["FPR_gap", "resamples"] == 20
    u = gf.fairness_gaps([1, 1, 0, 1], [0.2, 0.7, 0.9, 0.1], ["x", "x", "y", "y"],
                         {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}},
                         resamples=20).set_index("metric")
    assert u.loc["FPR_gap", "note"] == "group 'x' has no negatives"


def test_gf_error_messages_name_value_row_and_column() -> None:
    with pytest.raises(DataError, match=r"row 2, column 'label': label 2 is not 0 or 1"):
        gf.fairness_gaps([0, 2], [0.1, 0.2], ["A", "D"], AD, resamples=5)
    with pytest.raises(DataError, match=r"row 2, column 'prob': probability 1\.5 is outside"):
        gf.fairness_gaps([0, 1], [0.1, 1.5], ["A", "D"], AD, resamples=5)
    with pytest.raises(DataError, match=r"^column 'group': attribute 'a': no row of group 'D' "
                                        r"in the fairness set$"):
        gf.fairness_gaps([0, 1], [0.1, 0.5], ["A", "A"], AD, resamples=5)
    with pytest.raises(ConfigError, match=r"needs a marginalized and a non-marginalized group$"):
        gf.fairness_gaps([0, 1], [0.1, 0.5], ["A", "D"],
                         {"a": {"marginalized": ["A"], "non_marginalized": []}}, resamples=5)


@pytest.mark.parametrize("confidence", [0, 1, 1.5])
def test_gf_confidence_must_be_strictly_between_0_and_1(confidence) -> None:
    with pytest.raises(ConfigError, match=rf"confidence must be in \(0, 1\), not {confidence}"):
        gf.fairness_gaps([0, 1], [0.1, 0.5], ["A", "D"], AD, confidence=confidence)
    with pytest.raises(ConfigError, match="resamples must be at least 1, not 0"):
        gf.fairness_gaps([0, 1], [0.1, 0.5], ["A", "D"], AD, resamples=0)


def test_gf_defaults_are_1000_resamples_seed_0() -> None:
    args = ([0, 1, 0, 1, 0, 1], [0.2, 0.7, 0.6, 0.4, 0.3, 0.8], ["A", "A", "A", "D", "D", "D"], AD)
    t = gf.fairness_gaps(*args)
    assert t.equals(gf.fairness_gaps(*args, resamples=1000, seed=0))


def test_gf_missing_cluster_id_located_also_for_nan_in_strings() -> None:
    args = ([0, 1, 0, 1], [0.2, 0.7, 0.6, 0.9], ["x", "x", "y", "y"],
            {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}})
    with pytest.raises(DataError, match=r"^row 2, column 'source_id': missing cluster id$"):
        gf.fairness_gaps(*args, resamples=5, clusters=["s1", np.nan, "s1", "s2"])


def test_gf_paired_resamples_that_lose_a_class_are_nan_and_not_counted() -> None:
    # 2 clusters: a resample drawing cluster 1 twice has no negatives (FPR NaN); drawing
    # cluster 0 once gives exactly one negative per group (FPR defined)
    labels, probs = [0, 1, 0, 1], [0.6, 0.8, 0.3, 0.7]
    groups, clusters = ["x", "x", "y", "y"], ["s0", "s1", "s0", "s1"]
    attrs = {"a": {"marginalized": ["x"], "non_marginalized": ["y"]}}
    t = gf.fairness_gaps(labels, probs, groups, attrs, resamples=200, seed=0,
                         clusters=clusters).set_index("metric")
    draws = np.random.default_rng(0).integers(0, 2, size=(200, 2))
    both = int(((draws == 0).any(axis=1) & (draws == 1).any(axis=1)).sum())
    assert t.loc["FPR_gap", "resamples"] == int((draws == 0).any(axis=1).sum())
    assert t.loc["TPR_gap", "resamples"] == int((draws == 1).any(axis=1).sum())
    assert t.loc["AUC_gap", "resamples"] == both


def test_gf_paired_chunks_that_do_not_divide_the_resamples(monkeypatch) -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 40)
    p, g, c = rng.random(40), np.repeat(["a", "b"], 20), np.tile(np.arange(20), 2)
    one = gf._paired(y, p, g, c.astype(str), ["a", "b"], 0.5, 10, np.random.default_rng(7))
    monkeypatch.setattr(gf, "CHUNK_CELLS", 120)             # step 3: chunks 3, 3, 3, 1
    many = gf._paired(y, p, g, c.astype(str), ["a", "b"], 0.5, 10, np.random.default_rng(7))
    for m in one:
        for grp in one[m]:
            np.testing.assert_array_equal(one[m][grp], many[m][grp])


def test_borkan_aucs_empty_identity_int_masks_and_identity_key() -> None:
    labels, probs = [0, 1, 0, 1], [0.1, 0.9, 0.8, 0.2]
    t = gf.borkan_aucs(labels, probs, {"none": [False] * 4, "ints": [1, 1, 0, 0]})
    empty, ints = t.iloc[0], t.iloc[1]
    assert empty["identity"] == "none" and empty["n"] == 0
    assert np.isnan(empty[["subgroup_auc", "bpsn_auc", "bnsp_auc"]].astype(float)).all()
    assert empty["note"] == ("subgroup_auc: one class only; bpsn_auc: one class only; "
                             "bnsp_auc: one class only")
    want = gf.borkan_aucs(labels, probs, {"ints": np.array([True, True, False, False])})
    assert ints["n"] == 2 and ints["subgroup_auc"] == 1.0
    pd.testing.assert_series_equal(ints, want.iloc[0], check_names=False)
    with pytest.raises(DataError, match=r"identity 'x': 3 memberships for 4 rows"):
        gf.borkan_aucs(labels, probs, {"x": [True, False, True]})


def test_generalized_mean_zero_and_positive_powers() -> None:
    assert np.isnan(gf.generalized_mean([0.0, 0.5]))              # 0 ** -5: undefined
    assert gf.generalized_mean([0.0, 0.25], power=0.5) == pytest.approx(0.0625)
