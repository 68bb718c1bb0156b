"""Tests written from mutation testing (scripts/mutation) of analysis/cross_study.py and
analysis/figures.py: each pins a value, column or message that a planted bug changed
without any other test noticing. Expectations are worked out by hand in the comments or
read back from what a figure hands to matplotlib, never by calling the code under test
for the expected value."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.analysis.cross_study import (
    CORRELATION_COLUMNS,
    correlations,
    headline,
    read_table4,
)
from biasrepro.errors import DataError

TABLE4 = ["model", "method", "threshold", "characteristic", "btc_rate", "aligned_btc_rate"]


# ---------------------------------------------------------------- cross_study.read_table4


def _table4(tmp: Path, rows: list[tuple], name: str = "table4.csv",
            columns: list[str] = TABLE4) -> Path:
    path = tmp / name
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


def _table4_error(path: Path, attributes: list[str]) -> str:
    with pytest.raises(DataError) as err:
        read_table4(path, attributes)
    return str(err.value)


def test_table4_keeps_the_attribute_rows_renumbered_with_blank_rates_as_nan(
        tmp_path: Path) -> None:
    path = _table4(tmp_path, [("m", "b", 0.5, "occupation", 0.9, 0.9),
                              ("m", "b", 0.5, "gender", 0.25, None),
                              ("m", "d", 0.5, "total", 0.9, 0.9),
                              ("m", "d", 0.5, "gender", 0.0, 1.0)])
    got = read_table4(path, ["gender"])
    # rows 2 and 4 of the file, renumbered 0, 1; 'characteristic' renamed 'attribute'
    assert list(got.columns) == ["model", "method", "attribute", "btc_rate",
                                 "aligned_btc_rate"]
    assert list(got.index) == [0, 1]
    assert list(got["method"]) == ["b", "d"] and list(got["attribute"]) == ["gender"] * 2
    assert list(got["btc_rate"]) == [0.25, 0.0]
    assert math.isnan(got.at[0, "aligned_btc_rate"]) and got.at[1, "aligned_btc_rate"] == 1.0


def test_table4_with_a_header_only_is_no_attribute_found(tmp_path: Path) -> None:
    path = _table4(tmp_path, [])
    assert _table4_error(path, ["gender"]) == (
        f"{path}, column 'characteristic': no characteristic is a fairness attribute of the "
        "task (gender); found: ")


def test_table4_without_an_attribute_lists_both_sides(tmp_path: Path) -> None:
    path = _table4(tmp_path, [("m", "b", 0.5, "total", 0.1, 0.1),
                              ("m", "b", 0.5, "occupation", 0.1, 0.1)])
    assert _table4_error(path, ["gender", "race"]) == (
        f"{path}, column 'characteristic': no characteristic is a fairness attribute of the "
        "task (gender, race); found: occupation, total")


def test_table4_missing_column_is_named(tmp_path: Path) -> None:
    path = _table4(tmp_path, [("m", "b", 0.5, "gender", 0.1)], columns=TABLE4[:-1])
    assert _table4_error(path, ["gender"]).startswith(
        f"{path}, column 'aligned_btc_rate': missing required column")


def test_table4_unreadable_parquet_says_what_it_should_be(tmp_path: Path) -> None:
    path = tmp_path / "table4.parquet"
    path.write_bytes(b"not parquet at all")
    message = _table4_error(path, ["gender"])
    assert message.startswith(f"{path}: not a readable Parquet BiasFinder table (")


def test_table4_duplicate_key_names_file_row_and_key(tmp_path: Path) -> None:
    path = _table4(tmp_path, [("m", "b", 0.5, "gender", 0.1, 0.1),
                              ("m", "b", 0.5, "gender", 0.2, 0.1)])
    assert _table4_error(path, ["gender"]) == (
        f"{path}, row 2, column 'characteristic': model/method/characteristic given twice "
        "(got 'm/b/gender')")


@pytest.mark.parametrize(("column", "bad", "message"), [
    ("btc_rate", "many", "not a number (got 'many')"),
    ("aligned_btc_rate", "x", "not a number (got 'x')"),
    ("btc_rate", "1.5", "value outside [0, 1] (got 1.5)"),
    ("aligned_btc_rate", "-0.1", "value outside [0, 1] (got -0.1)"),
])
def test_table4_bad_rate_names_file_row_and_column(tmp_path: Path, column: str, bad: str,
                                                   message: str) -> None:
    rows = pd.DataFrame([("m", "b", 0.5, "gender", "0.1", "0.1"),
                         ("m", "d", 0.5, "gender", "0.2", "0.2")], columns=TABLE4)
    rows.loc[1, column] = bad
    path = tmp_path / "table4.csv"
    rows.to_csv(path, index=False)
    assert _table4_error(path, ["gender"]) == f"{path}, row 2, column '{column}': {message}"


# ---------------------------------------------------------------- cross_study.headline


def _corr_row(attribute: str, y: str, rho: float, *, x: str = "btc_rate",
              fset: str = "balanced", task: str = "toxicity", note: str = "") -> dict:
    return {"task": task, "fairness_set": fset, "attribute": attribute, "x": x, "y": y,
            "points": "model x method", "n": 6, "rho": rho, "p_value": 0.01, "low": 0.2,
            "high": 0.9, "distinct_x": 5, "distinct_y": 6, "p_permutation": 0.02,
            "permutations": "exact (720 orderings)", "p_cluster": 0.03,
            "cluster_permutations": "exact", "note": note}


def test_headline_prefers_the_pooled_row_wherever_it_stands() -> None:
    # the pooled row first, a per-attribute row after it: the pooled one is the headline
    table = pd.DataFrame([_corr_row("all", "FPR_gap", 0.7),
                          _corr_row("gender", "FPR_gap", -0.4),
                          _corr_row("all", "FPR_gap", 0.1, x="aligned_btc_rate"),
                          _corr_row("gender", "TPR_gap", 0.3, fset="original", note="few")],
                         columns=CORRELATION_COLUMNS)
    got = headline(table)
    assert got == {"toxicity": {
        "balanced": {"FPR_gap": {
            "attribute": "all", "rho": 0.7, "n": 6, "p_value": 0.01, "low": 0.2,
            "high": 0.9, "distinct_x": 5, "p_permutation": 0.02, "p_cluster": 0.03,
            "note": ""}},
        "original": {"TPR_gap": {
            "attribute": "gender", "rho": 0.3, "n": 6, "p_value": 0.01, "low": 0.2,
            "high": 0.9, "distinct_x": 5, "p_permutation": 0.02, "p_cluster": 0.03,
            "note": "few"}}}}


# ---------------------------------------------------------------- cross_study Markdown


def _exact_permutation_p(x: list[float], y: list[float]) -> float:
    """Share of the orderings of y whose |r| reaches the observed one (exact test)."""
    from itertools import permutations

    from scipy.stats import pearsonr

    observed = abs(pearsonr(x, y)[0])
    orders = list(permutations(y))
    return sum(abs(pearsonr(x, o)[0]) >= observed - 1e-12 for o in orders) / len(orders)


def test_markdown_rows_and_header_of_the_sentiment_points(tmp_path: Path) -> None:
    from scipy.stats import pearsonr
    from test_cross_study import _run, _sentiment_inputs

    assert _run(tmp_path, *_sentiment_inputs(tmp_path)) == 0
    md = (tmp_path / "out" / "correlations.md").read_text(encoding="utf-8")
    header, table = md.split("\n\n| task |")
    # BTC rates 0.1..0.5 against FPR gaps 0.1, 0.3, 0.2, 0.5, 0.4: rho 0.8 (see
    # test_cross_study), Fisher-z interval tanh(atanh(0.8) -+ 1.96 / sqrt(5 - 3))
    x, fpr = [0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.3, 0.2, 0.5, 0.4]
    z, half = math.atanh(0.8), 1.959964 / math.sqrt(2)
    p = pearsonr(x, fpr)[1]
    perm = _exact_permutation_p(x, fpr)
    fpr_line = (f"| sentiment | original | gender | btc_rate | FPR_gap | 5 | 5, 5 | 0.800 | "
                f"[{math.tanh(z - half):.3f}, {math.tanh(z + half):.3f}] | {p:.3g} | "
                f"{perm:.3g} | {perm:.3g} | {2 * perm:.3g} |  |")
    # Benjamini-Hochberg over the four defined p_cluster (FPR 0.133 twice, AUC 1 twice):
    # the two smallest become min(4/1, 4/2) x 0.133 = 2 x 0.133, the ones stay 1
    assert fpr_line in table.splitlines()
    # the constant TPR gap: rho, interval and p-values undefined
    assert ("| sentiment | original | gender | btc_rate | TPR_gap | 5 | 5, 1 | NaN |  | NaN | "
            "NaN | NaN | NaN | one side is constant") in table
    # AUC: the three points with both values (0.1, 0.1), (0.3, 0.3), (0.5, 0.2)
    auc_p, auc_perm = pearsonr([0.1, 0.3, 0.5], [0.1, 0.3, 0.2])[1], _exact_permutation_p(
        [0.1, 0.3, 0.5], [0.1, 0.3, 0.2])
    assert (f"| sentiment | original | gender | btc_rate | AUC_gap | 3 | 3, 3 | 0.500 |  | "
            f"{auc_p:.3g} | {auc_perm:.3g} | {auc_perm:.3g} | 1 | 3 paired values") in table
    # the header: five model x method points, and its sentences intact across the lines
    assert header.endswith("Points: sentiment: 5 model x method.")
    for phrase in (
            "# Cross-study: metamorphic bias (BTC rate) against group-fairness gaps\n\nEach "
            "row correlates a model's rate of bias-uncovering test cases (BTCs: two versions",
            "they mention, and that the model labels differently) with its group-fairness gap "
            "(|mean of the marginalized groups - non-marginalized group| of FPR, TPR or AUC) "
            "over every model x debiasing method that has both. Sentiment: BiasFinder's rate "
            "on IMDB templates (all cross-class pairs, and aligned pairs only) against the SST "
            "fairness set's gaps. Toxicity: BiasFinder-style templates from the balanced "
            "Civil Comments fairness set (one template per source sentence, one mutant per "
            "group of its attribute; labels at probability >= 0.5) against the gaps on the "
            "balanced and on the original set. A row per attribute has one point per model x "
            "method; `all` pools the attributes, whose scales differ, so read it together "
            "with the per-attribute rows. n counts the points with both values; the interval "
            "is Fisher-z at 0.95 and p_value scipy's, both for independent points; p_perm "
            "shuffles y over the points and p_cluster shuffles the distinct x values over "
            "the points that share them (every ordering up to",
            "correlations.csv says which); p_cluster BH is p_cluster adjusted by "
            "Benjamini–Hochberg over every row of this table (correlations.csv also has "
            "p_value_bh), the false discovery rate of reading many correlations at once; "
            "distinct x and y count the different values of "
            "each side; a positive rho means models with more metamorphic failures also "
            "have larger gaps. On the toxicity balanced set the FPR and TPR gaps are bounded "
            "by the share of templates with a BTC (every group holds the same sentences), so "
            "those rows agree largely by construction; the original set and the sentiment "
            "rows are independent of the BTC templates. Points:"):
        assert phrase in header, phrase
    # the table's own header and rule, one row per line, a final newline
    assert md.count("\n\n| task | fairness_set | attribute | x | y | n | distinct x, y | rho | "
                    "CI | p_value | p_perm | p_cluster | p_cluster BH | note |\n|"
                    + "---|" * 14 + "\n| "
                    "sentiment | original | gender | btc_rate | FPR_gap |") == 1
    assert md.endswith(" |\n") and not md.endswith("\n\n")
    assert len(table.splitlines()) == 2 + 6                 # 2 measures x 3 gaps


def test_join_points_without_aligned_rates_gives_a_float_nan_column() -> None:
    from biasrepro.analysis.cross_study import join_points

    # race is method d's attribute, gender method b's: sorting by method would swap them
    btc = pd.DataFrame({"model": ["a", "a"], "method": ["d", "b"],
                        "attribute": ["race", "gender"], "btc_rate": [0.25, 0.5]})
    gaps = pd.DataFrame({"model": ["a"] * 4, "method": ["d", "b", "d", "b"],
                         "fairness_set": ["original", "original", "balanced", "balanced"],
                         "attribute": ["race", "gender", "race", "gender"],
                         "FPR_gap": [0.1, 0.2, 0.3, 0.4], "TPR_gap": [0.0] * 4,
                         "AUC_gap": [0.5] * 4})
    points = join_points("toxicity", btc, gaps, ["race", "gender"])
    # balanced before original; race before gender as the attributes are listed
    assert list(zip(points["fairness_set"], points["attribute"], points["FPR_gap"],
                    strict=True)) == [("balanced", "race", 0.3), ("balanced", "gender", 0.4),
                                      ("original", "race", 0.1), ("original", "gender", 0.2)]
    assert points["aligned_btc_rate"].dtype == "float64"
    assert points["aligned_btc_rate"].isna().all()
    assert list(points.columns) == ["task", "fairness_set", "attribute", "model", "method",
                                    "btc_rate", "aligned_btc_rate", "FPR_gap", "TPR_gap",
                                    "AUC_gap"]
    assert list(points.index) == [0, 1, 2, 3]
    # per attribute one point per model x method; pooled over the two attributes
    table = correlations(points, {"toxicity": ["race", "gender"]}, confidence=0.95)
    assert list(zip(table["fairness_set"], table["attribute"], table["points"],
                    strict=True)) == [
        (fset, attribute, what) for fset in ("balanced", "original")
        for attribute, what in (("race", "model x method"), ("gender", "model x method"),
                                ("all", "model x method x attribute"))
        for _ in range(3)]


def test_correlations_use_the_given_confidence_and_keep_their_columns_when_empty() -> None:
    # BTC rates 0.1..0.5 against FPR gaps 0.1, 0.3, 0.2, 0.5, 0.4: rho 0.8; at 90 % the
    # Fisher-z interval is tanh(atanh(0.8) -+ 1.644854 / sqrt(5 - 3))
    points = pd.DataFrame({"task": "sentiment", "fairness_set": "original",
                           "attribute": "gender", "model": list("abcde"), "method": "m",
                           "btc_rate": [0.1, 0.2, 0.3, 0.4, 0.5],
                           "aligned_btc_rate": [0.1, 0.2, 0.3, 0.4, 0.5],
                           "FPR_gap": [0.1, 0.3, 0.2, 0.5, 0.4], "TPR_gap": 0.2,
                           "AUC_gap": 0.3})
    table = correlations(points, {"sentiment": ["gender"]}, confidence=0.9)
    row = table[(table["x"] == "btc_rate") & (table["y"] == "FPR_gap")].iloc[0]
    z, half = math.atanh(0.8), 1.644854 / math.sqrt(2)
    assert row["low"] == pytest.approx(math.tanh(z - half), abs=1e-5)
    assert row["high"] == pytest.approx(math.tanh(z + half), abs=1e-5)
    assert row["points"] == "model x method"
    empty = correlations(points.iloc[:0], {"sentiment": ["gender"]}, confidence=0.9)
    assert list(empty.columns) == [
        "task", "fairness_set", "attribute", "x", "y", "points", "n", "rho", "p_value",
        "p_value_bh", "low", "high", "distinct_x", "distinct_y", "p_permutation",
        "permutations", "p_cluster", "p_cluster_bh", "cluster_permutations", "note"]
    assert empty.empty


# ---------------------------------------------------------------- cross_study.read_gaps

GAPS = ["model", "method", "fairness_set", "attribute", "metric", "value", "low", "high"]


def _gaps_error(path: Path, attributes: list[str]) -> str:
    from biasrepro.analysis.cross_study import read_gaps

    with pytest.raises(DataError) as err:
        read_gaps(path, attributes)
    return str(err.value)


def _gaps_file(tmp: Path, rows: list[tuple], columns: list[str] = GAPS) -> Path:
    path = tmp / "gaps.csv"
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


def test_gaps_header_only_or_no_matching_row_is_one_error(tmp_path: Path) -> None:
    path = _gaps_file(tmp_path, [])
    want = f"{path}: no FPR_gap/TPR_gap/AUC_gap row for the attributes gender, race"
    assert _gaps_error(path, ["gender", "race"]) == want
    # a gap metric of another attribute, another metric of the attribute: neither counts
    path = _gaps_file(tmp_path, [("m", "b", "original", "religion", "FPR_gap", 0.1, 0, 1),
                                 ("m", "b", "original", "gender", "accuracy", 0.1, 0, 1)])
    assert _gaps_error(path, ["gender", "race"]) == want


def test_gaps_missing_column_unreadable_file_and_duplicate_key(tmp_path: Path) -> None:
    path = _gaps_file(tmp_path, [("m", "b", "original", "gender", "FPR_gap", 0.1)],
                      columns=GAPS[:-2])
    assert _gaps_error(_gaps_file(tmp_path, [("m", "b", "original", "gender", "FPR_gap")],
                                  columns=GAPS[:5]), ["gender"]).startswith(
        f"{path}, column 'value': missing required column")
    parquet = tmp_path / "gaps.parquet"
    parquet.write_bytes(b"PAR1 but not really")
    assert _gaps_error(parquet, ["gender"]).startswith(
        f"{parquet}: not a readable Parquet gaps table (")
    path = _gaps_file(tmp_path, [("m", "b", "original", "gender", "FPR_gap", 0.1, 0, 1),
                                 ("m", "b", "original", "gender", "FPR_gap", 0.2, 0, 1)])
    assert _gaps_error(path, ["gender"]) == (
        f"{path}, row 2, column 'metric': model/method/fairness_set/attribute/metric given "
        "twice (got 'm/b/original/gender/FPR_gap')")


def test_gap_value_outside_0_1_names_file_row_and_column(tmp_path: Path) -> None:
    path = _gaps_file(tmp_path, [("m", "b", "original", "gender", "FPR_gap", 0.1, 0, 1),
                                 ("m", "b", "original", "gender", "TPR_gap", 1.5, 0, 1)])
    assert _gaps_error(path, ["gender"]) == (
        f"{path}, row 2, column 'value': value outside [0, 1] (got 1.5)")


def test_gaps_without_a_metric_get_a_float_nan_column(tmp_path: Path) -> None:
    from biasrepro.analysis.cross_study import read_gaps

    path = _gaps_file(tmp_path, [("m", "b", "original", "gender", "FPR_gap", 0.1, 0, 1)])
    wide = read_gaps(path, ["gender"])
    assert list(wide.columns) == ["model", "method", "fairness_set", "attribute", "FPR_gap",
                                  "TPR_gap", "AUC_gap"]
    assert wide["FPR_gap"].tolist() == [0.1]
    for metric in ("TPR_gap", "AUC_gap"):
        assert wide[metric].dtype == "float64" and wide[metric].isna().all()


def test_table4_blank_key_cell_names_file_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "table4.csv"
    path.write_text("model,method,threshold,characteristic,btc_rate,aligned_btc_rate\n"
                    "m,b,0.5,gender,0.1,0.1\n"
                    "m, ,0.5,gender,0.1,0.1\n", encoding="utf-8")
    assert _table4_error(path, ["gender"]) == (
        f"{path}, row 2, column 'method': text is empty (got ' ')")


# ---------------------------------------------------------------- cross_study settings


def _settings_error(settings: dict, **inputs: Path) -> str:
    import tempfile

    from biasrepro.analysis.cross_study import write_cross_study
    from biasrepro.errors import ConfigError

    with tempfile.TemporaryDirectory() as out, pytest.raises(ConfigError) as err:
        write_cross_study(settings=settings, out_dir=Path(out) / "never-written", **inputs)
    return str(err.value)


SET = {"attributes": {"sentiment": ["gender"]}}


@pytest.mark.parametrize(("threshold", "confidence"), [(0.0, 0.95), (1.0, 0.95),
                                                       (0.5, 0.999), (0.5, 0.001)])
def test_settings_at_their_bounds_are_accepted(threshold: float, confidence: float) -> None:
    # accepted settings reach the next check: no inputs at all
    assert _settings_error({**SET, "threshold": threshold, "confidence": confidence}) == (
        "nothing to correlate: give the sentiment inputs, the toxicity inputs, or both")


@pytest.mark.parametrize(("threshold", "confidence"), [(-0.1, 0.95), (1.5, 0.95),
                                                       (2.5, 0.95), (0.5, 0.0),
                                                       (0.5, 1.0), (0.5, 1.5)])
def test_settings_out_of_range_are_refused(threshold: float, confidence: float) -> None:
    assert _settings_error({**SET, "threshold": threshold, "confidence": confidence}) == (
        f"threshold must be in [0, 1] and confidence in (0, 1), not {threshold} and "
        f"{confidence}")


def test_settings_missing_a_key_say_which() -> None:
    assert _settings_error({**SET, "threshold": 0.5}) == (
        "cross-study settings need threshold, confidence and attributes per task "
        "(KeyError('confidence'))")


def test_half_inputs_are_refused_with_what_is_needed(tmp_path: Path) -> None:
    ok = {**SET, "threshold": 0.5, "confidence": 0.95}
    assert _settings_error(ok, sentiment_gaps=tmp_path / "g.csv") == (
        "the sentiment cross-study needs both the BiasFinder table and the sentiment gaps")
    assert _settings_error(ok, toxicity_gaps=tmp_path / "g.csv") == (
        "the toxicity cross-study needs the balanced fairness set, its predictions and the "
        "toxicity gaps")
    assert _settings_error(ok, toxicity_balanced=tmp_path / "b.parquet",
                           toxicity_predictions=[tmp_path / "p.parquet"],
                           toxicity_gaps=tmp_path / "g.csv") == (
        "fairness.attributes has no entry for task 'toxicity'")


# ---------------------------------------------------------------- cross_study.write_cross_study

BTC_HEADER = ("model,method,attribute,threshold,templates,mutants,possible_pairs,btc,btc_rate,"
              "templates_with_btc,templates_with_btc_share\n")


def test_sentiment_only_run_needs_no_toxicity_attributes(tmp_path: Path) -> None:
    import json

    from test_cross_study import _sentiment_inputs

    from biasrepro.analysis.cross_study import write_cross_study

    args = _sentiment_inputs(tmp_path)
    write_cross_study(settings={**SET, "threshold": 0.5, "confidence": 0.95},
                      out_dir=tmp_path / "out", biasfinder=Path(args[1]),
                      sentiment_gaps=Path(args[3]))
    # no toxicity inputs: a header-only BTC table and no pooled toxicity rate
    assert (tmp_path / "out" / "toxicity_btc.csv").read_text(encoding="utf-8") == BTC_HEADER
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["toxicity_btc_rate_pooled"] == {}
    assert (summary["threshold"], summary["confidence"]) == (0.5, 0.95)
    assert summary["points"] == {"sentiment": 5}
    assert set(summary["headline"]) == {"sentiment"}


def _tox_kwargs(tmp: Path) -> dict:
    from test_cross_study import _tox_inputs

    args = _tox_inputs(tmp)
    i, j = args.index("--toxicity-predictions"), args.index("--toxicity-gaps")
    return {"toxicity_balanced": Path(args[1]), "toxicity_predictions": args[i + 1:j],
            "toxicity_gaps": Path(args[j + 1])}


TOX_SET = {"threshold": 0.5, "confidence": 0.95, "attributes": {"toxicity": ["gender", "race"]}}


def _write_error(tmp: Path, **kwargs: object) -> str:
    from biasrepro.analysis.cross_study import write_cross_study

    with pytest.raises(DataError) as err:
        write_cross_study(settings=TOX_SET, out_dir=tmp / "out", **kwargs)
    return str(err.value)


def test_toxicity_inputs_that_are_refused_name_their_file(tmp_path: Path) -> None:
    kwargs = _tox_kwargs(tmp_path)
    balanced = kwargs["toxicity_balanced"]
    # predictions on the original set
    original = tmp_path / "o" / "a" / "baseline" / "fairness-original.parquet"
    original.parent.mkdir(parents=True)
    original.write_bytes(Path(kwargs["toxicity_predictions"][0]).read_bytes())
    assert _write_error(tmp_path, **{**kwargs, "toxicity_predictions": [str(original)]}) == (
        f"{original}: BTCs need predictions on the balanced fairness set "
        "(fairness-balanced.parquet)")
    # a second file for a/baseline
    first = Path(kwargs["toxicity_predictions"][0])
    second = tmp_path / "again" / "a" / "baseline" / "fairness-balanced.parquet"
    second.parent.mkdir(parents=True)
    second.write_bytes(first.read_bytes())
    assert _write_error(tmp_path, **{**kwargs, "toxicity_predictions": [
        str(first), str(second)]}) == (
        f"{second}: a second predictions file for a/baseline (also {first})")
    # the balanced set without its source ids; then not Parquet at all
    pd.read_parquet(balanced).drop(columns="source_id").to_parquet(balanced)
    assert _write_error(tmp_path, **kwargs).startswith(
        f"{balanced}, column 'source_id': missing required column")
    balanced.write_bytes(b"no parquet here")
    assert _write_error(tmp_path, **kwargs).startswith(
        f"{balanced}: not a readable balanced fairness set (")


def test_unreadable_predictions_and_inputs_from_different_runs(tmp_path: Path) -> None:
    from test_cross_study import _sentiment_inputs

    from biasrepro.analysis.cross_study import write_cross_study

    kwargs = _tox_kwargs(tmp_path)
    bad = Path(kwargs["toxicity_predictions"][1])
    good = bad.read_bytes()
    bad.write_bytes(b"garbage")
    assert _write_error(tmp_path, **kwargs).startswith(f"{bad}: not a readable predictions (")
    bad.write_bytes(good)
    sent = _sentiment_inputs(tmp_path)
    both = {**kwargs, "biasfinder": Path(sent[1]), "sentiment_gaps": Path(sent[3])}
    settings = {**TOX_SET, "attributes": {"toxicity": ["gender", "race"],
                                          "sentiment": ["gender"]}}
    # toxicity gaps of another model: the toxicity gaps file is named
    tox_gaps = kwargs["toxicity_gaps"]
    pd.read_csv(tox_gaps).assign(model="z").to_csv(tox_gaps, index=False)
    with pytest.raises(DataError) as err:
        write_cross_study(settings=settings, out_dir=tmp_path / "out", **both)
    assert str(err.value) == (f"{tox_gaps}: no toxicity model/method/attribute has both a "
                              "BTC rate and gaps (are the two inputs from the same run?)")
    # sentiment gaps of another model, toxicity fine: the sentiment gaps file is named
    (tmp_path / "fresh").mkdir()
    kwargs = _tox_kwargs(tmp_path / "fresh")
    sent_gaps = Path(sent[3])
    pd.read_csv(sent_gaps).assign(model=lambda f: "z" + f["model"]).to_csv(sent_gaps, index=False)
    with pytest.raises(DataError) as err:
        write_cross_study(settings=settings, out_dir=tmp_path / "out",
                          **{**both, **kwargs})
    assert str(err.value) == (f"{sent_gaps}: no sentiment model/method/attribute has both a "
                              "BTC rate and gaps (are the two inputs from the same run?)")


def test_toxicity_run_pools_btc_over_pairs_and_writes_plain_csv(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import json
    import logging
    import re

    from biasrepro.analysis.cross_study import write_cross_study

    with caplog.at_level(logging.INFO, logger="biasrepro.analysis.cross_study"):
        write_cross_study(settings=TOX_SET, out_dir=tmp_path / "out",
                          **_tox_kwargs(tmp_path))
    # points: 2 methods x 2 attributes x 2 fairness sets; correlations: 2 sets x (2
    # attributes + pooled) x 3 gaps
    logged = [r.getMessage() for r in caplog.records if r.name.endswith("cross_study")]
    found = re.fullmatch(r"cross-study: 8 points, 18 correlations -> (.+) in (\d+\.\d) s",
                         logged[-1])
    assert found and found[1] == str(tmp_path / "out") and float(found[2]) < 60, logged
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    # test_cross_study counts by hand: gender 1 + 0 BTCs of 2 + 2 pairs, race 2 + 0 of 6 + 6
    assert summary["toxicity_btc_rate_pooled"] == {"gender": pytest.approx(1 / 4),
                                                   "race": pytest.approx(2 / 12)}
    assert summary["points"] == {"toxicity": 2}
    assert (summary["threshold"], summary["confidence"]) == (0.5, 0.95)
    btc = (tmp_path / "out" / "toxicity_btc.csv").read_bytes().decode("utf-8")
    assert btc.startswith(BTC_HEADER + "a,baseline,gender,0.5,2,4,2,1,0.5,1,0.5\n")
    points = (tmp_path / "out" / "points.csv").read_bytes().decode("utf-8")
    assert points.startswith("task,fairness_set,attribute,model,method,btc_rate,"
                             "aligned_btc_rate,FPR_gap,TPR_gap,AUC_gap\n")
    corr = (tmp_path / "out" / "correlations.csv").read_bytes().decode("utf-8")
    assert corr.startswith("task,fairness_set,attribute,x,y,points,n,rho,p_value,p_value_bh,"
                           "low,high,distinct_x,distinct_y,p_permutation,permutations,"
                           "p_cluster,p_cluster_bh,cluster_permutations,note\n")
    for text in (btc, points, corr):
        assert "\r" not in text and text.endswith("\n")


def test_toxicity_btc_without_a_template_of_the_attributes(tmp_path: Path) -> None:
    from test_cross_study import BALANCED

    from biasrepro.analysis.cross_study import balanced_mutants, toxicity_btc

    mutants = balanced_mutants(BALANCED, file=tmp_path / "b.parquet")
    with pytest.raises(DataError) as err:
        toxicity_btc(mutants, {}, attributes=["religion", "age"], threshold=0.5,
                     mutants_file=tmp_path / "b.parquet")
    assert str(err.value) == (f"{tmp_path / 'b.parquet'}, column 'attribute': no template of "
                              "the attributes religion, age")


def test_balanced_mutants_columns_and_their_checks(tmp_path: Path) -> None:
    from test_cross_study import BALANCED

    from biasrepro.analysis.cross_study import balanced_mutants, toxicity_btc

    file = tmp_path / "b.parquet"
    mutants = balanced_mutants(BALANCED, file=file)
    assert list(mutants.columns) == ["id", "template_id", "characteristic", "class", "align",
                                     "text", "label"]
    assert mutants["align"].tolist() == [""] * 10
    assert mutants["label"].tolist() == [0, 0, 1, 1, 0, 0, 0, 1, 1, 1]
    assert mutants["class"].tolist()[:3] == ["male", "female", "female"]
    # a blank text (row 2) is refused, naming the balanced set
    blank = BALANCED.assign(text=["he is fine .", " ", *BALANCED["text"][2:]])
    with pytest.raises(DataError) as err:
        balanced_mutants(blank, file=file)
    assert str(err.value) == f"{file}, row 2, column 'text': empty"
    # no predictions at all: an empty table that still has its columns
    empty = toxicity_btc(mutants, {}, attributes=["gender"], threshold=0.5)
    assert empty.empty and list(empty.columns) == BTC_HEADER.strip().split(",")
    # toxicity_btc checks mutants it is handed directly, naming their file
    twice = mutants.assign(id=["s1", *mutants["id"][1:-1], "s1"])
    preds = {("a", "b"): (tmp_path / "p.parquet",
                          pd.DataFrame({"id": mutants["id"], "label": mutants["label"],
                                        "prob": 0.5, "pred": 1}))}
    with pytest.raises(DataError) as err:
        toxicity_btc(twice, preds, attributes=["gender"], threshold=0.5, mutants_file=file)
    assert str(err.value).startswith(f"{file}, row 10")


# ---------------------------------------------------------------- figures: names, order, colour


def test_figure_names_in_order_for_one_task_with_and_without_biasfinder() -> None:
    from biasrepro.analysis.figures import figure_files, figure_names

    one = ["toxicity_training_groups", "toxicity_gaps_original", "toxicity_gaps_balanced",
           "toxicity_correlations_fairness_metrics", "toxicity_correlations_bias_vs_fairness",
           "toxicity_correlations_bias_vs_fairness_across_methods"]
    assert figure_names(["toxicity"], False) == one
    assert figure_names(["toxicity"], True) == [*one, "biasfinder_btc_rates"]
    assert figure_names([], True) == ["biasfinder_btc_rates"]
    assert figure_files(["a", "b"]) == ["a.png", "a.svg", "b.png", "b.svg"]


def test_method_colours_registry_and_spare_palette() -> None:
    import zlib

    from biasrepro.analysis.figures import method_colour

    assert method_colour("baseline") == "#4d4d4d"
    assert method_colour("upstream-sentDebias-race") == "#c5b0d5"
    spare = ("#bcbd22", "#e377c2", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a",
             "#f7b6d2", "#dbdb8d", "#393b79", "#637939", "#8c6d31", "#843c39")
    for name in ("my-new-method", "another", "x"):
        assert method_colour(name) == spare[zlib.crc32(name.encode("utf-8")) % 12], name


def test_methods_in_registry_order_then_alphabetical_and_other_orders() -> None:
    from biasrepro.analysis.figures import _label, _ordered, ordered_methods

    assert ordered_methods(["zeta", "upstream-sentDebias-race", "alpha", "baseline",
                            "downstream-perturbed-data", "baseline"]) == [
        "baseline", "downstream-perturbed-data", "upstream-sentDebias-race", "alpha", "zeta"]
    assert _ordered(["c", "TPR_gap", "a", "FPR_gap", "c"], ("FPR_gap", "TPR_gap", "AUC_gap")) == [
        "FPR_gap", "TPR_gap", "a", "c"]
    assert _label("FPR_gap") == "FPR gap (Eq.\u00a01)" and _label("my_metric") == "my_metric"


@pytest.mark.parametrize(("p", "stars"), [(0.0005, "***"), (0.001, "**"), (0.0099, "**"),
                                          (0.01, "*"), (0.0499, "*"), (0.05, ""), (0.9, ""),
                                          (float("nan"), "")])
def test_stars_at_their_thresholds(p: float, stars: str) -> None:
    from biasrepro.analysis.figures import _stars

    assert _stars(p) == stars


@pytest.mark.parametrize(("values", "text"), [([4.0, 4.0, float("nan")], "n = 4"),
                                               ([7.0, 2.0, 4.0], "n = 2-7"),
                                               ([float("nan")], "n = ?"), ([], "n = ?"),
                                               ([3.0], "n = 3")])
def test_span_of_the_point_counts(values: list[float], text: str) -> None:
    from biasrepro.analysis.figures import _span

    assert _span(values) == text


def test_attribute_blocks_follow_the_task_attributes_then_others() -> None:
    from biasrepro.analysis.figures import _attribute_blocks

    report = {"settings": {
        "attributes": {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
                       "race": {"marginalized": ["black", "asian"],
                                "non_marginalized": ["white"]},
                       "mixed": {"marginalized": ["female", "nonbinary"]}},
        "fairness": {"attributes": {"toxicity": ["race", "religion", "gender", "mixed"]}}}}
    groups = ["male", "female", "white", "black", "zz", "nonbinary", "aa", "male"]
    # race first (its marginalized groups first, asian absent), religion unknown: no block,
    # female only once (in gender), the rest alphabetically under "other"
    assert _attribute_blocks(groups, report, "toxicity") == [
        ("race", ["black", "white"]), ("gender", ["female", "male"]),
        ("mixed", ["nonbinary"]), ("other", ["aa", "zz"])]
    assert _attribute_blocks(["female"], report, "toxicity") == [
        ("gender", ["female"])]


# ---------------------------------------------------------------- figures: reading


def _fig_error(call, *args: object) -> str:
    with pytest.raises(DataError) as err:
        call(*args)
    return str(err.value)


def test_figure_table_checks_text_numbers_and_keys(tmp_path: Path) -> None:
    from biasrepro.analysis.figures import read_table

    path = tmp_path / "t.csv"

    def read(text: str) -> pd.DataFrame:
        path.write_text(text, encoding="utf-8")
        return read_table(path, ["model", "method"], ["value"], ["model", "method"],
                          optional_text=["note"])

    got = read("model,method,value,note\na,b,0.5,\na,c,,why\n")
    assert got["value"].tolist()[0] == 0.5 and math.isnan(got["value"].tolist()[1])
    assert got["value"].dtype == "float64"
    assert read("model,method,value,note\n").empty                   # header only is fine
    assert _fig_error(read, "model,method,value,note\na, ,0.5,\n") == (
        f"{path}, row 1, column 'method': text is empty (got ' ')")
    assert _fig_error(read, "model,method,value,note\na,b,0.5,\na,c,high,\n") == (
        f"{path}, row 2, column 'value': not a number (got 'high')")
    assert _fig_error(read, "model,method,value\na,b,0.5\n").startswith(
        f"{path}, column 'note': missing required column")
    assert _fig_error(read, "model,method,value,note\na,b,0.5,\na,c,1,\na,b,0.7,x\n") == (
        f"{path}, row 3: a second row for model=a, method=b")


def test_btc_table_needs_both_rates_and_one_row_per_key(tmp_path: Path) -> None:
    from biasrepro.analysis.figures import read_btc

    path = tmp_path / "table4.csv"
    path.write_text("model,method,characteristic,btc_rate\nm,b,gender,0.1\n", encoding="utf-8")
    assert _fig_error(read_btc, path).startswith(
        f"{path}, column 'aligned_btc_rate': missing required column")
    path.write_text("model,method,characteristic,btc_rate,aligned_btc_rate\n"
                    "m,b,gender,0.1,0.1\nm,b,gender,0.2,x\n", encoding="utf-8")
    assert _fig_error(read_btc, path) == (
        f"{path}, row 2, column 'aligned_btc_rate': not a number (got 'x')")
    path.write_text("model,method,characteristic,btc_rate,aligned_btc_rate\n"
                    "m,b,gender,0.1,0.1\nm,b,gender,0.2,0.3\n", encoding="utf-8")
    assert _fig_error(read_btc, path) == (
        f"{path}, row 2: a second row for model=m, method=b, characteristic=gender")
    path.write_text("model,method,characteristic,btc_rate,aligned_btc_rate\n"
                    "m,b,gender,0.1,0.1\nm,b,total,0.2,0.3\n", encoding="utf-8")
    assert read_btc(path)["aligned_btc_rate"].tolist() == [0.1, 0.3]


def _report(tmp: Path, report: dict) -> Path:
    import json

    path = tmp / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


GOOD_REPORT = {"task": "toxicity", "training": {"baseline": {"path": "t.parquet"}},
               "settings": {"attributes": {}, "fairness": {
                   "attributes": {"toxicity": ["gender"]}, "bootstrap": {"confidence": 0.9}}}}


def test_report_keys_each_named_when_missing(tmp_path: Path) -> None:
    import copy

    from biasrepro.analysis.figures import read_report

    assert read_report(_report(tmp_path, GOOD_REPORT), "toxicity") == GOOD_REPORT
    path = _report(tmp_path, GOOD_REPORT)
    assert _fig_error(read_report, path, "sentiment") == (
        f"{path}: this is the 'toxicity' report, not the 'sentiment' one")
    for dotted in ("task", "training", "settings.attributes",
                   "settings.fairness.attributes.toxicity",
                   "settings.fairness.bootstrap.confidence"):
        report = copy.deepcopy(GOOD_REPORT)
        *parents, last = dotted.split(".")
        node = report
        for key in parents:
            node = node[key]
        del node[last]
        path = _report(tmp_path, report)
        assert _fig_error(read_report, path, "toxicity") == f"{path}: missing key {dotted!r}"
    for entry in ({"rows": 4}, "t.parquet"):
        report = copy.deepcopy(GOOD_REPORT)
        report["training"]["baseline"] = entry
        path = _report(tmp_path, report)
        assert _fig_error(read_report, path, "toxicity") == (
            f"{path}: missing key 'training.baseline.path'")


def test_btc_table_is_read_as_comma_separated_whatever_its_name(tmp_path: Path) -> None:
    from biasrepro.analysis.figures import read_btc

    path = tmp_path / "table4.tsv"
    path.write_text("model,method,characteristic,btc_rate,aligned_btc_rate\n"
                    "m,b,gender,0.25,0.125\n", encoding="utf-8")
    got = read_btc(path)
    assert got[["btc_rate", "aligned_btc_rate"]].values.tolist() == [[0.25, 0.125]]


def test_markdown_counts_the_points_of_both_tasks(tmp_path: Path) -> None:
    from test_cross_study import _sentiment_inputs

    from biasrepro.analysis.cross_study import write_cross_study

    sent = _sentiment_inputs(tmp_path)
    settings = {**TOX_SET, "attributes": {"toxicity": ["gender", "race"],
                                          "sentiment": ["gender"]}}
    write_cross_study(settings=settings, out_dir=tmp_path / "out", biasfinder=Path(sent[1]),
                      sentiment_gaps=Path(sent[3]), **_tox_kwargs(tmp_path))
    md = (tmp_path / "out" / "correlations.md").read_text(encoding="utf-8")
    # 5 sentiment model x method points (m9 has no BTC rate), 2 toxicity ones
    assert "Points: sentiment: 5 model x method, toxicity: 2 model x method.\n\n" in md


def test_a_fairness_set_without_gaps_is_an_empty_figure_that_says_so() -> None:
    from biasrepro.analysis.figures import gaps_figure

    gaps = pd.DataFrame(columns=["model", "method", "fairness_set", "attribute", "metric",
                                 "value", "low", "high"])
    data = {"task": "toxicity", "gaps": gaps, "report": {"settings": {"fairness": {
        "attributes": {"toxicity": ["gender"]}, "bootstrap": {"confidence": 0.9}}}}}
    import matplotlib

    with matplotlib.rc_context({"font.size": 8}):    # the figures' own size; the message: 10
        fig = gaps_figure(data, "balanced")
    assert fig._suptitle.get_text() == (
        "toxicity: group fairness gaps on the balanced fairness set, with 90% bootstrap "
        "intervals")
    assert not fig.axes
    [text] = [t for t in fig.texts if t.get_text() == "gaps.csv has no rows for the balanced set"]
    assert text.get_position() == (0.5, 0.5)
    assert (text.get_ha(), text.get_va(), text.get_fontsize()) == ("center", "center", 10)
