"""The seed tables piece by piece, with expectations worked out by hand: each claim check on
hand-built tables (with decoy rows that a wrong filter would pick up), the statistics of cells
with missing and non-numeric values, row and column order, the Markdown summary and the
files written. Written from a mutation run of ``analysis/seeds.py`` (see docs/testing.md)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.analysis import seeds
from biasrepro.errors import ConfigError, DataError

P = seeds.PERTURBED
BF_HEADER = "model,method,characteristic,btc,btc_rate,aligned_btc_rate,templates_with_btc\n"


def _bf(path: Path, *rows: str) -> Path:
    path.write_text(BF_HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def _gaps(*rows: tuple) -> dict[str, pd.DataFrame]:
    """``toxicity_gaps`` from (model, method, fairness_set, attribute, metric, value) rows."""
    return {"toxicity_gaps": pd.DataFrame(rows, columns=["model", "method", "fairness_set",
                                                         "attribute", "metric", "value"])}


# -- one file per seed --------------------------------------------------------------------


def test_per_seed_takes_one_path_a_list_or_nothing() -> None:
    assert seeds.per_seed(None, 2, "toxicity") == [None, None]
    assert seeds.per_seed("a/report.json", 1, "toxicity") == [Path("a/report.json")]
    assert seeds.per_seed(Path("b.csv"), 1, "biasfinder") == [Path("b.csv")]
    assert seeds.per_seed(["a", Path("b")], 2, "toxicity") == [Path("a"), Path("b")]
    with pytest.raises(ConfigError) as e:
        seeds.per_seed(["a"], 3, "cross_study")
    assert str(e.value) == "--cross-study: give one file per seed (3), got 1"


def test_output_names_list_every_table_of_every_given_file() -> None:
    rep = seeds.Replicate(1, toxicity=Path("t"), sentiment=Path("s"),
                          classification=Path("c"), biasfinder=Path("b"),
                          cross_study=Path("x"))
    tables = ("gaps", "group_metrics", "borkan", "sensescore", "correlations")
    assert seeds.output_names(rep) == [
        *(f"toxicity_{t}.csv" for t in tables), *(f"sentiment_{t}.csv" for t in tables),
        "classification.csv", "biasfinder.csv", "cross_study_correlations.csv",
        "cross_study_toxicity_btc.csv", "claims.csv", "seeds.md"]
    assert seeds.output_names(seeds.Replicate(2, sentiment=Path("s"))) == [
        *(f"sentiment_{t}.csv" for t in tables), "claims.csv", "seeds.md"]


# -- reading ------------------------------------------------------------------------------


def test_classification_records_keep_their_columns_and_may_be_empty(tmp_path: Path) -> None:
    path = tmp_path / "cls.json"
    path.write_text('[{"task": "toxicity", "model": "m", "method": "baseline", "set": "test",'
                    ' "accuracy": 0.5, "f1": 0.25, "roc_auc": 0.75}]', encoding="utf-8")
    frame = seeds._classification(path)
    assert list(frame.columns) == ["task", "model", "method", "set", "accuracy", "f1",
                                   "roc_auc"]
    assert isinstance(frame.index, pd.RangeIndex) and list(frame.index) == [0]
    assert frame["roc_auc"].dtype == float
    empty = tmp_path / "cls.csv"
    empty.write_text("task,model,method,set,accuracy,f1,roc_auc\n", encoding="utf-8")
    assert seeds._classification(empty).empty
    short = tmp_path / "short.csv"
    short.write_text("task,model,method,set,accuracy,f1\ntoxicity,m,baseline,test,1,1\n",
                     encoding="utf-8")
    with pytest.raises(DataError, match="short.csv.*roc_auc"):
        seeds._classification(short)
    broken = tmp_path / "cls.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(DataError, match="not a readable Parquet classification records"):
        seeds._classification(broken)


def test_only_empty_cells_are_missing_in_the_per_seed_tables(tmp_path: Path) -> None:
    """"NA" (pandas' default missing marker) is a key like any other; an empty cell is
    missing."""
    path = _bf(tmp_path / "bf.csv", "m,baseline,NA,1,0.5,,2")
    frame = seeds._csv(path, ["model"])
    assert frame["characteristic"].tolist() == ["NA"]
    assert math.isnan(frame["aligned_btc_rate"].iloc[0])


def test_a_replicate_without_toxicity_still_gathers_sentiment(tmp_path: Path) -> None:
    from test_seeds import _report

    rep = seeds.Replicate(1, sentiment=_report(tmp_path / "s", 1))
    assert sorted(seeds._tables(rep)) == sorted(f"sentiment_{n}" for n in seeds.STUDY_TABLES)
    # and no claim can be checked on sentiment tables alone: an empty table with its columns
    table = seeds.claims([rep])
    assert table.empty and list(table.columns) == list(seeds.CLAIM_COLUMNS)


# -- gathering ----------------------------------------------------------------------------


def _three_seeds(tmp_path: Path) -> list[seeds.Replicate]:
    """Seeds 3, 1, 2 (in that order): btc in all three, btc_rate in two, templates_with_btc in
    one ("n/a" and an empty cell elsewhere), aligned_btc_rate in none; "occupation" comes
    before "gender" and "country" in the files."""
    rows = {3: "m,baseline,occupation,30,0.5,,0.3", 1: "m,baseline,occupation,10,0.1,,n/a",
            2: "m,baseline,occupation,20,,,"}
    same = ("m,baseline,gender,3,0.5,,1", "m,baseline,country,1,0.5,,1")
    return [seeds.Replicate(s, biasfinder=_bf(tmp_path / f"bf{s}.csv", rows[s], *same))
            for s in (3, 1, 2)]


def test_statistics_skip_missing_values_cell_by_cell(tmp_path: Path) -> None:
    with warnings.catch_warnings():  # an all-missing cell is no warning (numpy's all-NaN)
        warnings.simplefilter("error")
        table = seeds.gather(_three_seeds(tmp_path))["biasfinder"]
    assert list(table.columns) == ["model", "method", "characteristic", "measure", "seeds",
                                   "mean", "sd", "min", "max", "seed_3", "seed_1", "seed_2"]
    assert isinstance(table.index, pd.RangeIndex)
    # first-appearance order of cells and measures, not sorted
    assert list(zip(table["characteristic"], table["measure"], strict=True)) == [
        (c, m) for c in ("occupation", "gender", "country")
        for m in ("btc", "btc_rate", "aligned_btc_rate", "templates_with_btc")]
    for col in ("mean", "sd", "min", "max", "seed_3", "seed_1", "seed_2"):
        assert table[col].dtype == float, col
    occ = table[table["characteristic"] == "occupation"].set_index("measure")
    nan = float("nan")
    expected = {  # measure: seeds, mean, sd, min, max, seed_3, seed_1, seed_2
        "btc": (3, 20.0, 10.0, 10.0, 30.0, 30.0, 10.0, 20.0),
        "btc_rate": (2, 0.3, math.sqrt(0.08), 0.1, 0.5, 0.5, 0.1, nan),
        "aligned_btc_rate": (0, nan, nan, nan, nan, nan, nan, nan),
        "templates_with_btc": (1, 0.3, nan, 0.3, 0.3, 0.3, nan, nan),
    }
    cols = ["seeds", "mean", "sd", "min", "max", "seed_3", "seed_1", "seed_2"]
    for measure, values in expected.items():
        got = occ.loc[measure, cols].tolist()
        assert got == pytest.approx(list(values), nan_ok=True, abs=1e-12), measure
    gender = table[(table["characteristic"] == "gender") & (table["measure"] == "btc")]
    assert gender[["seeds", "mean", "sd", "min", "max"]].iloc[0].tolist() == [3, 3, 0, 3, 3]


def test_integer_counts_are_gathered_as_numbers_like_any_other(tmp_path: Path) -> None:
    reps = [seeds.Replicate(s, biasfinder=_bf(tmp_path / f"{s}.csv",
                                              f"m,baseline,gender,{s},0,1,{s}"))
            for s in (1, 2)]
    table = seeds.gather(reps)["biasfinder"]
    assert [table[c].dtype for c in ("seed_1", "seed_2")] == [float, float]
    assert table["seed_2"].tolist() == [2.0, 0.0, 1.0, 2.0]


def test_gather_refuses_nothing_and_names_the_first_duplicate_cell(tmp_path: Path) -> None:
    with pytest.raises(DataError) as e:
        seeds.gather([])
    assert str(e.value) == "no replicate given"
    good = _bf(tmp_path / "a.csv", "m,baseline,gender,1,0,0,0")
    # two repeated cells with different values: occupation repeats first (rows 1 and 4)
    bad = _bf(tmp_path / "b.csv", "m,baseline,occupation,1,0,0,0", "m,baseline,gender,2,0,0,0",
              "m,baseline,gender,3,0,0,0", "m,baseline,occupation,4,0,0,0")
    with pytest.raises(DataError) as e:
        seeds.gather([seeds.Replicate(1, biasfinder=good), seeds.Replicate(2, biasfinder=bad)])
    assert str(e.value) == ("biasfinder of seed 2: two rows for model=m, method=baseline, "
                            "characteristic=occupation")


# -- the claims, one check at a time ------------------------------------------------------


def test_mean_gap_reads_the_balanced_set_of_one_model_method_and_metric() -> None:
    t = _gaps(("m", "baseline", "original", "gender", "FPR_gap", 9.0),
              ("m2", "baseline", "balanced", "gender", "FPR_gap", 5.0),
              ("m", "baseline", "balanced", "gender", "TPR_gap", 7.0),
              ("m", "other", "balanced", "gender", "FPR_gap", 8.0),
              ("m", "baseline", "balanced", "gender", "FPR_gap", 0.2),
              ("m", "baseline", "balanced", "race", "FPR_gap", 0.4),
              ("m", "baseline", "balanced", "religion", "FPR_gap", "n/a"))
    assert seeds._mean_gap(t, "m", "baseline", ["FPR_gap"]) == pytest.approx(0.3)
    assert seeds._mean_gap(t, "m", "baseline", ["FPR_gap"], ["race"]) == pytest.approx(0.4)
    assert seeds._mean_gap(t, "m", "baseline", ["FPR_gap", "TPR_gap"], ["gender"]) == \
        pytest.approx(3.6)
    assert seeds._mean_gap(t, "m", "baseline", ["FPR_gap"], ["religion"]) is None
    assert seeds._mean_gap({}, "m", "baseline", ["FPR_gap"]) is None


def test_lower_is_strict_and_unknown_when_a_side_is_missing() -> None:
    assert seeds._lower(0.1, 0.2) is True
    assert seeds._lower(0.2, 0.1) is False
    assert seeds._lower(0.1, 0.1) is False
    assert seeds._lower(None, 0.1) is None and seeds._lower(0.1, None) is None


def test_lowers_compares_a_method_with_the_baseline_or_another_method() -> None:
    t = _gaps(("m", "baseline", "balanced", "gender", "FPR_gap", 0.3),
              ("m", P, "balanced", "gender", "FPR_gap", 0.1),
              ("m", "s", "balanced", "gender", "FPR_gap", 0.05),
              ("m", "baseline", "balanced", "gender", "TPR_gap", 0.1),
              ("m", P, "balanced", "gender", "TPR_gap", 0.9),
              ("m2", "baseline", "balanced", "gender", "FPR_gap", 0.3),
              ("m2", P, "balanced", "gender", "FPR_gap", 0.5))
    assert seeds._lowers(P, ["FPR_gap"])(t, "m") is True
    assert seeds._lowers(P, ["TPR_gap"])(t, "m") is False
    assert seeds._lowers(P, ["FPR_gap", "TPR_gap"])(t, "m") is False  # 0.5 against 0.2
    assert seeds._lowers(P, ["FPR_gap"], than="s")(t, "m") is False
    assert seeds._lowers(P, ["FPR_gap"])(t, "m2") is False
    assert seeds._lowers(P, ["FPR_gap"])(t, "m3") is None
    assert seeds._lowers(P, ["FPR_gap"])({}, "m") is None


def test_downstream_beats_upstream_pairs_each_attribute_with_its_own_subspace() -> None:
    def rows(model, method, gender, race):
        return [(model, method, "balanced", a, g, v) for a, v in (("gender", gender),
                                                                  ("race", race))
                for g in seeds.GAPS]
    t = _gaps(*rows("m", P, 0.1, 0.5),
              *rows("m", "upstream-sentDebias-gender", 0.2, 0.0),
              *rows("m", "upstream-sentDebias-race", 0.0, 0.6),
              # not an upstream SentenceDebias of one attribute: ignored
              *rows("m", "upstream-sentDebias-gender-extra", 0.0, 0.0),
              *rows("m", "downstream-sentDebias-gender", 0.0, 0.0),
              *rows("m2", P, 0.1, 0.5),
              *rows("m2", "upstream-sentDebias-gender", 0.2, 0.0),
              *rows("m2", "upstream-sentDebias-race", 0.0, 0.4),
              *rows("m3", "upstream-sentDebias-race", 0.0, 0.4),
              *rows("m4", P, 0.1, 0.5))
    check = seeds._downstream_beats_upstream
    assert check(t, "m") is True
    assert check(t, "m2") is False  # race: 0.5 against 0.4
    assert check(t, "m3") is None  # no perturbed-data model to compare
    assert check(t, "m4") is None  # no upstream SentenceDebias
    assert check({}, "m") is None


def test_sense_lower_averages_one_models_scores() -> None:
    sense = pd.DataFrame([("m", P, 0.1), ("m", P, 0.3), ("m", "baseline", 0.5),
                          ("m", "baseline", "n/a"), ("m2", P, 0.9), ("m2", "baseline", 0.5),
                          ("m3", "baseline", 0.5)],
                         columns=["model", "method", "sense_score"])
    t = {"toxicity_sensescore": sense}
    assert seeds._sense_lower(t, "m") is True
    assert seeds._sense_lower(t, "m2") is False
    assert seeds._sense_lower(t, "m3") is None
    assert seeds._sense_lower({}, "m") is None


def test_balanced_agree_reads_one_correlation_over_all_models() -> None:
    cols = ["group", "model", "fairness_set", "x", "y", "rho"]
    decoys = [("fairness_metrics", "all", "original", "FPR_gap", "TPR_gap", -0.9),
              ("fairness_metrics", "m", "balanced", "FPR_gap", "TPR_gap", -0.9),
              ("other", "all", "balanced", "FPR_gap", "TPR_gap", -0.9),
              ("fairness_metrics", "all", "balanced", "FPR_gap", "AUC_gap", -0.9),
              ("fairness_metrics", "all", "balanced", "AUC_gap", "TPR_gap", -0.9)]

    def table(rho):
        return {"toxicity_correlations": pd.DataFrame(
            [*decoys, ("fairness_metrics", "all", "balanced", "FPR_gap", "TPR_gap", rho)],
            columns=cols)}
    assert seeds._balanced_agree(table(0.4), "all") is True
    assert seeds._balanced_agree(table(-0.4), "all") is False
    assert seeds._balanced_agree(table(0.0), "all") is False
    assert seeds._balanced_agree(table("n/a"), "all") is None
    assert seeds._balanced_agree(table(0.4), "m") is None  # a claim over all models only
    assert seeds._balanced_agree({}, "all") is None


def test_auc_lower_needs_every_prefixed_method_below_the_baseline() -> None:
    cols = ["task", "model", "method", "set", "roc_auc"]
    d = "downstream-sentDebias-"
    rows = [("toxicity", "m", "baseline", "test", 0.9),
            ("toxicity", "m", d + "gender", "test", 0.8),
            ("toxicity", "m", d + "race", "test", 0.85),
            ("toxicity", "m", "upstream-sentDebias-gender", "test", 0.95),
            # decoys after the real rows, so a wrong filter lets them overwrite
            ("sentiment", "m", d + "gender", "test", 0.99),
            ("toxicity", "m", d + "gender", "validation", 0.99),
            ("toxicity", "m2", d + "gender", "test", 0.99),
            ("toxicity", "m2", "baseline", "test", 0.9),
            ("toxicity", "m3", "baseline", "test", 0.9),
            ("toxicity", "m3", d + "gender", "test", 0.9),
            ("toxicity", "m4", "baseline", "test", 0.9),
            ("toxicity", "m5", d + "gender", "test", 0.5)]
    t = {"classification": pd.DataFrame(rows, columns=cols)}
    check = seeds._auc_lower(d)
    assert check(t, "m") is True
    assert check(t, "m2") is False
    assert check(t, "m3") is False  # a tie is not a loss
    assert check(t, "m4") is None  # no such method
    assert check(t, "m5") is None  # no baseline
    assert check({}, "m") is None
    assert seeds._auc_lower("upstream-")(t, "m") is False


def test_btc_claims_read_the_baseline_model_of_each_characteristic() -> None:
    def table(*rows):
        return {"biasfinder": pd.DataFrame(rows, columns=["model", "method",
                                                          "characteristic", "btc"])}
    t = table(("m2", "baseline", "gender", 99), ("m", "sentDebias", "gender", 77),
              ("m", "baseline", "gender", 30), ("m", "baseline", "country", "n/a"))
    assert seeds._btc(t, "m", "gender") == 30.0
    assert seeds._btc(t, "m", "country") is None
    assert seeds._btc(t, "m", "occupation") is None
    assert seeds._btc({}, "m", "gender") is None

    def both(occ, gender, country):
        rows = [("m", "baseline", c, v) for c, v in (("occupation", occ), ("gender", gender),
                                                      ("country", country)) if v is not None]
        t = table(*rows)
        return (seeds._occupation_most("btc")(t, "m"),
                seeds._gender_over_country("btc")(t, "m"))
    assert both(9, 5, 1) == (True, True)
    assert both(5, 5, 1) == (False, True)  # ties hold for neither
    assert both(9, 1, 1) == (True, False)
    assert both(9, 1, 5) == (True, False)
    assert both(None, 5, 1) == (None, True)
    assert both(9, None, 1) == (None, None)
    assert both(9, 5, None) == (None, None)


def test_claims_rows_and_the_note_on_seeds_that_could_not_be_checked(tmp_path: Path) -> None:
    full = ("m,baseline,occupation,9,0,0,0", "m,baseline,gender,5,0,0,0",
            "m,baseline,country,1,0,0,0")
    reps = [seeds.Replicate(1, biasfinder=_bf(tmp_path / "1.csv", *full)),
            seeds.Replicate(2, biasfinder=_bf(tmp_path / "2.csv", *full[:2])),
            seeds.Replicate(3, biasfinder=_bf(tmp_path / "3.csv", full[0], full[1],
                                              "m,baseline,country,7,0,0,0"))]
    table = seeds.claims(reps)
    assert list(table.columns) == list(seeds.CLAIM_COLUMNS)
    by_id = {c.id: c for c in seeds.CLAIMS}
    counts = table[table["claim"].isin(["occupation-most-btcs",
                                        "gender-more-btcs-than-country"])]
    assert counts.to_dict("records") == [
        {"claim": "occupation-most-btcs", "source": "BiasFinder Table 4",
         "statement": by_id["occupation-most-btcs"].statement, "model": "m", "seeds": 2,
         "holds_in": 2, "share": 1.0, "per_seed": "1:yes 3:yes",
         "note": "not checkable in 1 seed(s)"},
        {"claim": "gender-more-btcs-than-country", "source": "BiasFinder Table 4",
         "statement": by_id["gender-more-btcs-than-country"].statement, "model": "m",
         "seeds": 2, "holds_in": 1, "share": 0.5, "per_seed": "1:yes 3:no",
         "note": "not checkable in 1 seed(s)"}]
    # the same claims per pair: every rate is 0 here, and a tie holds for neither
    rates = table[table["claim"].str.contains("rate")].set_index("claim")
    assert list(rates.index) == ["occupation-highest-btc-rate",
                                 "gender-higher-btc-rate-than-country"]
    assert (rates["holds_in"] == 0).all() and (rates["seeds"] == 2).all()
    assert seeds.claims(reps[:1]).loc[0, "note"] == ""


# -- the Markdown summary and the files ---------------------------------------------------


def test_fmt_three_significant_digits_then_thousands() -> None:
    assert seeds._fmt(float("nan")) == "–"
    assert seeds._fmt(0.123456) == "0.123"
    assert seeds._fmt(-12.345) == "-12.3"
    assert seeds._fmt(999.4) == "999"
    assert seeds._fmt(1000) == "1,000"
    assert seeds._fmt(1000.7) == "1,001"
    assert seeds._fmt(-2_345_678.9) == "-2,345,679"


def test_markdown_lists_the_claims_and_the_five_widest_ranges() -> None:
    nan = float("nan")
    table = pd.DataFrame({
        "model": list("abcdefg"), "method": ["x"] * 7, "measure": ["btc"] * 7,
        "seeds": [2] * 7,
        "mean": [0.25, nan, 1500.0, 0.25, 0.05, 0.0, 0.15],
        "sd": [0.354, nan, 0.141, 0.354, 0.0707, 0.0, 0.212],
        "min": [0.0, nan, 1499.9, 0.0, 0.0, 0.0, 0.0],
        # spreads (max - min) of rows a..g: 0.5, NaN, 0.2, 0.5, 0.1, 0, 0.3
        "max": [0.5, nan, 1500.1, 0.5, 0.1, 0.0, 0.3],
        "seed_1": [0.0] * 7, "seed_2": [0.0] * 7})
    claims = pd.DataFrame([{"claim": "c1", "source": "S §1", "statement": "it holds",
                            "model": "all", "seeds": 2, "holds_in": 1, "share": 0.5,
                            "per_seed": "1:yes 2:no", "note": ""}])
    text = seeds.markdown({"biasfinder": table}, claims, [1, 2])
    assert text == (
        "# Across fine-tuning seeds\n\n"
        "Seeds: 1, 2. Every table of the training-to-metrics matrix is gathered in "
        "`<table>.csv` beside this file: mean, sample sd (n − 1), min, max and each seed's "
        "value per cell. With one seed sd is empty.\n\n"
        "## The papers' claims\n\n"
        "| claim | source | model | holds in | statement | note |\n|---|---|---|---|---|---|\n"
        "| c1 | S §1 | all | 1 of 2 seeds | it holds |  |\n\n"
        "## biasfinder: the five widest seed ranges\n\n"
        "| model | method | measure | mean ± sd | range |\n|---|---|---|---|---|\n"
        "| a | x | btc | 0.25 ± 0.354 | 0 – 0.5 |\n"
        "| d | x | btc | 0.25 ± 0.354 | 0 – 0.5 |\n"
        "| g | x | btc | 0.15 ± 0.212 | 0 – 0.3 |\n"
        "| c | x | btc | 1,500 ± 0.141 | 1,500 – 1,500 |\n"
        "| e | x | btc | 0.05 ± 0.0707 | 0 – 0.1 |\n")


def test_write_seed_tables_writes_plain_csv_and_reports_what_it_wrote(tmp_path: Path) -> None:
    reps = _three_seeds(tmp_path)
    out = tmp_path / "out"
    assert seeds.write_seed_tables(reps, out) == {"tables": ["biasfinder"], "claims": 4}
    assert sorted(p.name for p in out.iterdir()) == ["biasfinder.csv", "claims.csv",
                                                     "seeds.md"]
    bf = (out / "biasfinder.csv").read_bytes().decode("utf-8")
    assert "\r" not in bf and bf.endswith("\n") and len(bf.splitlines()) == 13
    assert bf.splitlines()[:2] == [
        "model,method,characteristic,measure,seeds,mean,sd,min,max,seed_3,seed_1,seed_2",
        "m,baseline,occupation,btc,3,20.0,10.0,10.0,30.0,30.0,10.0,20.0"]
    assert bf.splitlines()[3] == "m,baseline,occupation,aligned_btc_rate,0,,,,,,,"
    cl = (out / "claims.csv").read_bytes().decode("utf-8")
    assert "\r" not in cl and cl.splitlines()[0] == ",".join(seeds.CLAIM_COLUMNS)
    assert re.fullmatch(r"occupation-most-btcs,BiasFinder Table 4,.*,m,3,3,1\.0,"
                        r"3:yes 1:yes 2:yes,", cl.splitlines()[1])
    # one seed alone: the same files, sd empty
    one = seeds.write_seed_tables(reps[:1], tmp_path / "one")
    assert one == {"tables": ["biasfinder"], "claims": 4}
    assert (tmp_path / "one/biasfinder.csv").read_text().splitlines()[1] == \
        "m,baseline,occupation,btc,1,30.0,,30.0,30.0,30.0"


def test_gathered_tables_hold_only_the_cells_a_seed_has(tmp_path: Path) -> None:
    """Two cells whose key values cross (m/baseline/gender, n/debiased/country): the table
    has their 2 x 4 measure rows, none of the 6 other combinations of the key columns."""
    reps = [seeds.Replicate(s, biasfinder=_bf(tmp_path / f"bf{s}.csv",
                                              f"m,baseline,gender,{s},0.5,,1",
                                              f"n,debiased,country,{s},0.5,,1"))
            for s in (1, 2)]
    table = seeds.gather(reps)["biasfinder"]
    assert sorted(set(zip(table["model"], table["method"], table["characteristic"],
                          strict=True))) == [("m", "baseline", "gender"),
                                             ("n", "debiased", "country")]
    assert len(table) == 8
    btc = table[table["measure"] == "btc"].set_index("model")
    assert (btc.loc["m", "mean"], btc.loc["n", "seeds"]) == (1.5, 2)



def test_one_seed_is_said_in_words_and_each_claim_as_n_of_k() -> None:
    claims = pd.DataFrame([{"claim": "c1", "source": "S", "statement": "it holds",
                            "model": "all", "seeds": 1, "holds_in": 1, "share": 1.0,
                            "per_seed": "7:yes", "note": "the model-works gate failed x/y"}])
    text = seeds.markdown({}, claims, [7])
    assert "**One fine-tuning seed (7).** Each claim below was checked once" in text
    assert "| c1 | S | all | 1 of 1 seed | it holds | the model-works gate failed x/y |" in text
    assert "One fine-tuning seed" not in seeds.markdown({}, claims, [7, 8])
