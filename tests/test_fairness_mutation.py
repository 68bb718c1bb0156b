"""Tests written from mutation testing (scripts/mutation) of fairness/evaluation.py and
fairness/correlations.py: each pins a value, column or message that a planted bug changed
without any other test noticing. Expectations are worked out by hand in the comments (or,
for a correlation, with scipy), never by calling the code under test."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasrepro.errors import DataError
from biasrepro.fairness.evaluation import dataset_bias, evaluate, join_predictions, sense_scores

GENDER = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]}}
RACE = {"race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]}}
SENSE_COLUMNS = ["attribute", "g", "g_hat", "n_pairs", "sense_score", "mean_difference",
                 "sense_score_factual", "note"]
BIAS_COLUMNS = ["attribute", "selection", "overamplification_raw", "overamplification",
                "overamplification_share", "note"]
GROUP_COLUMNS = ["group", "n", "n_positive", "positive_ratio"]


def _power_mean(values: list[float], p: float = -5.0) -> float:
    return (sum(v ** p for v in values) / len(values)) ** (1 / p)


# ---------------------------------------------------------------- join_predictions


FSET = pd.DataFrame({"id": ["a", "b", "c"], "label": [0, 1, 0], "identity": ["male"] * 3})


def _error(predictions: pd.DataFrame) -> str:
    with pytest.raises(DataError) as err:
        join_predictions(FSET, predictions, file="p.parquet")
    return str(err.value)


def test_join_names_a_missing_column_and_the_file() -> None:
    assert _error(pd.DataFrame({"prob": [0.1]})) == (
        "p.parquet, column 'id': missing required column")
    assert _error(pd.DataFrame({"id": ["a"]})) == (
        "p.parquet, column 'prob': missing required column")


def test_join_names_the_first_duplicated_id() -> None:
    # duplicated() marks the second "a" (row 3) and the second "c" (row 5): "a" comes first
    pred = pd.DataFrame({"id": ["a", "b", "a", "c", "c"], "prob": [0.1] * 5})
    assert _error(pred) == "p.parquet, column 'id': id 'a' occurs twice"


def test_join_names_the_first_probability_outside_0_1_by_its_1_based_row() -> None:
    # 0 and 1 are allowed; 1.5 (row 4) is the first bad value, -0.2 (row 5) the second
    pred = pd.DataFrame({"id": ["a", "b", "c", "d", "e"],
                         "prob": np.array([0.5, 0.0, 1.0, 1.5, -0.2])})
    assert _error(pred) == "p.parquet, row 4, column 'prob': probability 1.5 is not in [0, 1]"
    text = pd.DataFrame({"id": ["a", "b", "c"], "prob": pd.Series([0.5, "x", 0.2],
                                                                  dtype=object)})
    assert _error(text) == "p.parquet, row 2, column 'prob': probability 'x' is not in [0, 1]"
    bounds = pd.DataFrame({"id": ["a", "b", "c"], "prob": [0.0, 1.0, 0.0]})
    assert list(join_predictions(FSET, bounds, file="p")["prob"]) == [0.0, 1.0, 0.0]


def test_join_gives_float_probabilities_whatever_the_file_holds() -> None:
    pred = pd.DataFrame({"id": ["a", "b", "c"], "prob": np.array([0, 1, 0], dtype=np.int64)})
    joined = join_predictions(FSET, pred, file="p")
    assert joined["prob"].dtype == np.float64
    assert list(joined["prob"]) == [0.0, 1.0, 0.0]


def test_join_refuses_extra_or_unmatched_prediction_rows() -> None:
    extra = pd.DataFrame({"id": ["c", "b", "a", "z"], "prob": [0.1, 0.2, 0.3, 0.4]})
    assert _error(extra) == (
        "p.parquet: the predictions do not cover the fairness set's 3 rows one to one "
        "(first unmatched id: '(extra rows)'); re-run predict on it")
    other = pd.DataFrame({"id": ["a", "x", "y"], "prob": [0.1, 0.2, 0.3]})
    assert _error(other) == (
        "p.parquet: the predictions do not cover the fairness set's 3 rows one to one "
        "(first unmatched id: 'b'); re-run predict on it")


def test_join_names_the_first_label_that_differs() -> None:
    pred = pd.DataFrame({"id": ["c", "b", "a"], "label": [1, 1, 0], "prob": [0.1, 0.2, 0.3]})
    # in the fairness set's order: a 0 = 0, b 1 = 1, c: prediction 1, fairness set 0; the
    # values as written, not NumPy reprs
    assert _error(pred) == ("p.parquet, column 'label': label 1 differs from the fairness "
                            "set's 0 for id 'c'")


# ---------------------------------------------------------------- evaluate


def _scored() -> pd.DataFrame:
    """male: negatives 0.1, 0.6, positives 0.7, 0.9; female: negatives 0.2, 0.4, positives
    0.3, 0.8; one row of a group in no attribute (left out of every table)."""
    rows = [("m1", "male", 0, 0.1), ("m2", "male", 0, 0.6), ("m3", "male", 1, 0.7),
            ("m4", "male", 1, 0.9), ("f1", "female", 0, 0.2), ("f2", "female", 0, 0.4),
            ("f3", "female", 1, 0.3), ("f4", "female", 1, 0.8), ("o1", "other", 1, 0.0)]
    frame = pd.DataFrame(rows, columns=["id", "identity", "label", "prob"])
    return frame.assign(source_id=frame["id"])


def test_evaluate_uses_the_given_threshold_for_rates_and_gaps() -> None:
    # at 0.65: male FPR 0/2, TPR 2/2; female FPR 0/2, TPR 1/2 -> FPR_gap 0, TPR_gap 0.5
    # (at the default 0.5 male's 0.6 negative would count: FPR 1/2 and FPR_gap 0.5)
    out = evaluate(_scored(), GENDER, threshold=0.65, resamples=20, confidence=0.9, seed=0)
    groups = out["groups"].set_index("group")
    assert groups.loc["male", "fpr"] == 0.0 and groups.loc["male", "tpr"] == 1.0
    assert groups.loc["female", "fpr"] == 0.0 and groups.loc["female", "tpr"] == 0.5
    assert set(groups.index) == {"male", "female"}
    gaps = out["gaps"].set_index("metric")["value"]
    assert gaps["FPR_gap"] == pytest.approx(0.0)
    assert gaps["TPR_gap"] == pytest.approx(0.5)
    at_half = evaluate(_scored(), GENDER, threshold=0.5, resamples=20, confidence=0.9, seed=0)
    assert at_half["gaps"].set_index("metric").loc["FPR_gap", "value"] == pytest.approx(0.5)
    assert at_half["groups"].set_index("group").loc["male", "fpr"] == 0.5


def test_evaluate_borkan_aucs_per_identity_and_their_power_mean() -> None:
    # subgroup: male 4/4 pairs ordered = 1.0; female 0.3 < 0.4 -> 3/4 = 0.75
    # BPSN male: male negatives (0.1, 0.6) vs female positives (0.3, 0.8) -> 3/4
    # BNSP male: male positives (0.7, 0.9) vs female negatives (0.2, 0.4) -> 1.0
    # BPSN female: (0.2, 0.4) vs (0.7, 0.9) -> 1.0; BNSP female: (0.3, 0.8) vs (0.1, 0.6) -> 3/4
    borkan = evaluate(_scored(), GENDER, threshold=0.5, resamples=20, confidence=0.9,
                      seed=0)["borkan"]
    assert list(borkan.index) == [0, 1, 2]
    by = borkan.set_index("identity")
    assert by.loc["male", "subgroup_auc"] == pytest.approx(1.0)
    assert by.loc["female", "subgroup_auc"] == pytest.approx(0.75)
    assert by.loc["male", "bpsn_auc"] == pytest.approx(0.75)
    assert by.loc["male", "bnsp_auc"] == pytest.approx(1.0)
    assert by.loc["female", "bpsn_auc"] == pytest.approx(1.0)
    assert by.loc["female", "bnsp_auc"] == pytest.approx(0.75)
    mean = by.loc["power_mean_-5"]
    for column in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
        assert mean[column] == pytest.approx(_power_mean([1.0, 0.75]))
    assert mean["n"] == 8                          # the "other" row is not counted
    assert mean["note"] == "generalized mean over the identities (Borkan et al. 2019, p = -5)"
    assert by.loc["male", "n"] == 4


# ---------------------------------------------------------------- sense_scores


def _versions(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["source_id", "source_identity", "identity", "prob"])


def test_sense_scores_skip_an_attribute_without_a_pair_and_keep_going() -> None:
    frame = _versions([("s1", "male", "male", 0.2), ("s1", "male", "female", 0.5),
                       ("s2", "female", "male", 0.4), ("s2", "female", "female", 0.6)])
    table = sense_scores(frame, {"gender": ["male", "female"]}, ["religion", "gender"])
    assert list(table.columns) == SENSE_COLUMNS
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["attribute"], row["g"], row["g_hat"], row["n_pairs"]) == (
        "gender", "male", "female", 2)
    # f(female) - f(male): s1 0.3, s2 0.2
    assert row["mean_difference"] == pytest.approx(0.25)
    # literal reading: s1 written about male counts +0.3, s2 about female counts -0.2
    assert row["sense_score_factual"] == pytest.approx(0.05)
    assert row["note"] == ""


def test_sense_scores_note_a_missing_group_and_a_pair_never_seen_together() -> None:
    only_black = _versions([("s1", "black", "black", 0.2), ("s2", "black", "black", 0.3)])
    table = sense_scores(only_black, {"race": ["black", "white"]}, ["race"])
    assert list(table.columns) == SENSE_COLUMNS
    row = table.iloc[0]
    assert (row["g"], row["g_hat"], row["n_pairs"]) == ("black", "white", 0)
    assert row["note"] == "no sentence of the balanced set is about 'black' and 'white'"
    assert math.isnan(row["sense_score"]) and math.isnan(row["mean_difference"])
    assert math.isnan(row["sense_score_factual"])
    apart = _versions([("s1", "black", "black", 0.2), ("s2", "white", "white", 0.3)])
    row = sense_scores(apart, {"race": ["black", "white"]}, ["race"]).iloc[0]
    assert row["n_pairs"] == 0
    assert row["note"] == "no source sentence has both versions"
    assert math.isnan(row["sense_score"]) and math.isnan(row["sense_score_factual"])


def test_sense_scores_without_a_configured_pair_is_an_empty_table_with_columns() -> None:
    frame = _versions([("s1", "male", "male", 0.2), ("s1", "male", "female", 0.5)])
    table = sense_scores(frame, {"gender": ["male", "female"]}, ["religion"])
    assert list(table.columns) == SENSE_COLUMNS and len(table) == 0


# ---------------------------------------------------------------- dataset_bias


def test_dataset_bias_counts_a_gender_column_per_group() -> None:
    train = pd.DataFrame({"label": [1, 0, 1, 1, 0],
                          "gender": ["male", "male", "female", "female", "female"]})
    bias, groups = dataset_bias(train, GENDER, identity_threshold=0.5)
    assert list(groups.columns) == GROUP_COLUMNS
    by = groups.set_index("group")
    assert (by.loc["male", "n"], by.loc["male", "n_positive"]) == (2, 1)
    assert (by.loc["female", "n"], by.loc["female", "n_positive"]) == (3, 2)
    assert by.loc["female", "positive_ratio"] == pytest.approx(2 / 3)
    # |P(toxic | female) - P(toxic | male)| = |2/3 - 1/2|; |N_f - N_m| / N = 1/5
    assert bias.loc[0, "selection"] == pytest.approx(1 / 6)
    assert bias.loc[0, "overamplification_share"] == pytest.approx(0.2)
    assert bias.loc[0, "note"] == ""


def test_dataset_bias_refuses_some_identity_columns_naming_the_first_missing() -> None:
    train = pd.DataFrame({"label": [0, 1], "male": [1.0, 0.0], "female": [0.0, 1.0]})
    with pytest.raises(DataError) as err:
        dataset_bias(train, GENDER | RACE, identity_threshold=0.5)
    assert err.value.column == "asian"            # sorted groups: asian, black, female, ...
    assert ("missing identity column (the training set has some of the attributes' "
            "identity columns but not all)") in str(err.value)


def test_dataset_bias_without_annotation_has_the_full_nan_tables() -> None:
    bias, groups = dataset_bias(pd.DataFrame({"label": [0, 1]}), GENDER | RACE,
                                identity_threshold=0.5)
    assert list(bias.columns) == BIAS_COLUMNS
    assert list(bias["attribute"]) == ["gender", "race"]
    assert (bias["note"] == "no identity annotation in this training set").all()
    assert bias[BIAS_COLUMNS[1:5]].isna().all().all()
    assert list(groups.columns) == GROUP_COLUMNS and len(groups) == 0


def test_dataset_bias_notes_the_groups_without_examples() -> None:
    # race: no black and no asian row; gender: both present
    train = pd.DataFrame({"label": [1, 0, 0, 1], "male": [1, 1, 0, 0.0],
                          "female": [0, 0, 1, 0.0], "black": [0.0] * 4, "asian": [0.0] * 4,
                          "white": [0, 0, 0, 1.0]})
    bias, groups = dataset_bias(train, GENDER | RACE, identity_threshold=0.5)
    notes = bias.set_index("attribute")["note"]
    assert notes["gender"] == ""
    assert notes["race"] == "no example of group(s) black, asian"
    assert list(groups.columns) == GROUP_COLUMNS
    # |mean(N_black, N_asian) - N_white| / N = |0 - 1| / 4
    assert bias.set_index("attribute").loc["race", "overamplification_share"] == (
        pytest.approx(0.25))


def test_dataset_bias_of_an_empty_training_set_divides_nothing_by_zero() -> None:
    train = pd.DataFrame({"label": pd.Series([], dtype="int64"),
                          "male": pd.Series([], dtype=float),
                          "female": pd.Series([], dtype=float)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        bias, groups = dataset_bias(train, GENDER, identity_threshold=0.5)
    assert math.isnan(bias.loc[0, "overamplification_share"])
    assert bias.loc[0, "note"] == "no example of group(s) female, male"
    assert list(groups["n"]) == [0, 0]
    assert np.isnan(groups["positive_ratio"]).all()


# ---------------------------------------------------------------- correlation_table

MODELS, METHODS, SETS = ("bert", "roberta"), ("baseline", "perturbed"), ("balanced", "original")
ATTRIBUTES = ("gender", "race", "religion")
GAP_METRICS = ("FPR_gap", "TPR_gap", "AUC_gap")


def _gap_values(seed: int = 7) -> dict[tuple[str, str, str, str, str], float]:
    rng = np.random.default_rng(seed)
    return {(m, meth, fs, a, metric): float(rng.random())
            for m in MODELS for meth in METHODS for fs in SETS for a in ATTRIBUTES
            for metric in GAP_METRICS}


def _gaps(values: dict[tuple[str, str, str, str, str], float]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "method": meth, "fairness_set": fs, "attribute": a,
                          "metric": metric, "value": v}
                         for (m, meth, fs, a, metric), v in values.items()])


def _bias_values(seed: int = 11) -> dict[tuple[str, str, str], float]:
    rng = np.random.default_rng(seed)
    return {(meth, a, source): float(rng.random()) for meth in METHODS for a in ATTRIBUTES
            for source in ("selection", "overamplification", "overamplification_raw")}


def _bias(values: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    return pd.DataFrame([{"method": meth, "attribute": a,
                          **{s: values[meth, a, s] for s in ("selection", "overamplification",
                                                             "overamplification_raw")}}
                         for meth in METHODS for a in ATTRIBUTES])


def test_fairness_metric_rows_correlate_the_baseline_gaps_of_each_set() -> None:
    from scipy.stats import pearsonr

    from biasrepro.fairness.correlations import correlation_table

    gv = _gap_values()
    table = correlation_table(_gaps(gv), _bias(_bias_values()))
    fm = table[table["group"] == "fairness_metrics"]
    pairs = [("FPR_gap", "TPR_gap"), ("FPR_gap", "AUC_gap"), ("TPR_gap", "AUC_gap")]
    assert list(zip(fm["model"], fm["fairness_set"], fm["x"], fm["y"], strict=True)) == [
        ("all", fs, a, b) for fs in SETS for a, b in pairs]
    assert (fm["points"] == "baseline model x attribute").all()
    assert list(table.columns) == [
        "group", "model", "fairness_set", "x", "y", "rho", "n", "p_value", "p_value_bh", "low",
        "high", "distinct_x", "distinct_y", "p_permutation", "permutations", "p_cluster",
        "p_cluster_bh", "cluster_permutations", "points", "note"]
    for row in fm.itertuples():
        x = [gv[m, "baseline", row.fairness_set, a, row.x] for m in MODELS for a in ATTRIBUTES]
        y = [gv[m, "baseline", row.fairness_set, a, row.y] for m in MODELS for a in ATTRIBUTES]
        assert row.n == 6
        assert row.rho == pytest.approx(pearsonr(x, y)[0])


def test_bias_rows_name_their_points_and_correlate_the_right_pairs() -> None:
    from scipy.stats import pearsonr

    from biasrepro.fairness.correlations import correlation_table

    gv, bv = _gap_values(), _bias_values()
    table = correlation_table(_gaps(gv), _bias(bv))
    within = table[table["group"] == "bias_vs_fairness"]
    assert set(within.loc[within["model"] != "all", "points"]) == {"attribute"}
    assert set(within.loc[within["model"] == "all", "points"]) == {"model x attribute"}
    across = table[table["group"] == "bias_vs_fairness_across_methods"]
    assert set(across["points"]) == {"method x attribute"}
    one = within[(within["model"] == "roberta") & (within["fairness_set"] == "original")
                 & (within["x"] == "overamplification") & (within["y"] == "TPR_gap")]
    x = [bv["baseline", a, "overamplification"] for a in ATTRIBUTES]
    y = [gv["roberta", "baseline", "original", a, "TPR_gap"] for a in ATTRIBUTES]
    assert len(one) == 1 and one["rho"].iloc[0] == pytest.approx(pearsonr(x, y)[0])
    one = across[(across["model"] == "bert") & (across["fairness_set"] == "balanced")
                 & (across["x"] == "overamplification_raw") & (across["y"] == "FPR_gap")]
    x = [bv[meth, a, "overamplification_raw"] for meth in METHODS for a in ATTRIBUTES]
    y = [gv["bert", meth, "balanced", a, "FPR_gap"] for meth in METHODS for a in ATTRIBUTES]
    assert len(one) == 1 and one["rho"].iloc[0] == pytest.approx(pearsonr(x, y)[0])


def test_a_model_whose_gaps_are_all_undefined_keeps_its_rows() -> None:
    from biasrepro.fairness.correlations import correlation_table

    gv = {k: (math.nan if k[0] == "roberta" else v) for k, v in _gap_values().items()}
    table = correlation_table(_gaps(gv), _bias(_bias_values()))
    roberta = table[table["model"] == "roberta"]
    # per fairness set: 2 sources x 3 metrics within, the same across methods
    assert len(roberta) == 2 * (2 * 3 + 2 * 3)
    assert (roberta["n"] == 0).all()
    fm = table[table["group"] == "fairness_metrics"]
    assert set(fm["n"]) == {3}                     # bert's three attributes only


def test_an_empty_bias_table_leaves_only_the_fairness_metric_rows() -> None:
    from biasrepro.fairness.correlations import correlation_table

    empty = _bias(_bias_values()).iloc[:0]
    table = correlation_table(_gaps(_gap_values()), empty)
    assert list(table["group"]) == ["fairness_metrics"] * 6


def test_correlations_name_the_missing_bias_column() -> None:
    from biasrepro.fairness.correlations import correlation_table

    with pytest.raises(DataError) as err:
        correlation_table(_gaps(_gap_values()), _bias(_bias_values()).drop(columns="selection"))
    assert str(err.value) == (
        "column 'selection': the dataset-bias table lacks a column the correlations need")


# ---------------------------------------------------------------- report


def test_gaps_markdown_is_the_documented_table() -> None:
    from biasrepro.fairness.report import _gaps_markdown

    tags = {"fairness_set": "balanced", "model": "bert", "method": "baseline",
            "attribute": "gender", "resampling": "paired", "model_works": True}
    gaps = pd.DataFrame([
        {**tags, "metric": "FPR_gap", "value": 0.25, "low": 0.1, "high": 0.4, "note": ""},
        {**tags, "metric": "TPR_gap", "value": math.nan, "low": math.nan, "high": math.nan,
         "note": "no positives"},
        {**tags, "metric": "AUC_gap", "value": math.nan, "low": math.nan, "high": math.nan,
         "note": ""},
        *({**tags, "method": "debiased", "model_works": False, "metric": m, "value": 0.0,
           "low": 0.0, "high": 0.0, "note": ""} for m in ("FPR_gap", "TPR_gap", "AUC_gap"))])
    assert _gaps_markdown(gaps, "toxicity") == (
        "# Group fairness gaps (toxicity)\n\n"
        "|marginalized mean - non-marginalized| (Eqs. 1-3) with percentile bootstrap "
        "intervals of the signed difference mapped through |.|: paired (whole source "
        "sentences resampled with all their counterfactual versions) on the balanced set, "
        "stratified by group on the original set (column resampling). A model marked *below "
        "the floor* failed the model-works gate (models.csv): its gaps are near 0 because it "
        "learned nothing, not because it is fair.\n\n"
        "| fairness_set | model | method | attribute | FPR_gap | TPR_gap | AUC_gap | "
        "resampling |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| balanced | bert | baseline | gender | 0.2500 [0.1000, 0.4000] | NaN (no positives) "
        "| NaN | paired |\n"
        "| balanced | bert (below the floor) | debiased | gender | 0.0000 [0.0000, 0.0000] | "
        "0.0000 [0.0000, 0.0000] | 0.0000 [0.0000, 0.0000] | paired |\n")


def _fairness_file(tmp_path: Path, frame: pd.DataFrame, name: str = "set.parquet") -> Path:
    from biasrepro.io import write_parquet

    path = tmp_path / name
    write_parquet(frame, path)
    return path


def test_read_fairness_set_requires_the_pairing_columns_only_of_the_balanced_set(
        tmp_path: Path) -> None:
    from biasrepro.fairness.report import read_fairness_set

    plain = pd.DataFrame({"id": [3, 4], "label": [0, 1], "identity": ["male", "female"]})
    path = _fairness_file(tmp_path, plain)
    original = read_fairness_set(path, "original")
    assert list(original["id"]) == ["3", "4"]          # ids as text, as predictions match
    with pytest.raises(DataError) as err:
        read_fairness_set(path, "balanced")
    assert str(err.value).startswith(f"{path}: missing required columns 'source_id', "
                                     "'source_identity'")
    paired = plain.assign(source_id=["3", "3"], source_identity=["male", "male"])
    no_identity = _fairness_file(tmp_path, paired.drop(columns="identity"), "b.parquet")
    with pytest.raises(DataError, match="identity"):
        read_fairness_set(no_identity, "balanced")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="not a readable balanced fairness set"):
        read_fairness_set(broken, "balanced")


def test_read_fairness_set_locates_bad_ids_and_labels_and_types_the_labels(
        tmp_path: Path) -> None:
    from biasrepro.fairness.report import read_fairness_set

    floats = pd.DataFrame({"id": ["a", "b"], "label": [0.0, 1.0], "identity": ["x", "y"]})
    read = read_fairness_set(_fairness_file(tmp_path, floats), "original")
    assert read["label"].dtype == np.int64 and list(read["label"]) == [0, 1]
    assert list(read["id"]) == ["a", "b"]
    twice = _fairness_file(tmp_path, floats.assign(id=["a", "a"]), "twice.parquet")
    with pytest.raises(DataError) as err:
        read_fairness_set(twice, "original")
    assert str(err.value) == (f"{twice}, row 2, column 'id': duplicate id 'a' (first seen "
                              "at row 1)")
    bad = _fairness_file(tmp_path, floats.assign(label=[0.0, 2.0]), "bad.parquet")
    with pytest.raises(DataError) as err:
        read_fairness_set(bad, "original")
    assert str(err.value).startswith(f"{bad}, row 2, column 'label': label must be 0 or 1")
