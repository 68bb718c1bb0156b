"""Failure detection: the gaps mutation testing (scripts/mutation) found in test_btc.py.

Every expectation here is worked out by hand (counts, pairs, messages), not by calling the
code under test to get it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import biasrepro.biasfinder.btc as btc
from biasrepro.biasfinder.btc import (
    join_predictions,
    pair_texts,
    truncation_counts,
)
from biasrepro.errors import ConfigError, DataError


def scored_frame(rows: list[tuple[str, str, str, str, float, int]]) -> pd.DataFrame:
    """Scored mutants from (id, template_id, class, align, prob, pred) rows; characteristic
    "occupation", label 1, text "text of <id>"."""
    return pd.DataFrame({
        "id": [r[0] for r in rows], "template_id": [r[1] for r in rows],
        "characteristic": ["occupation"] * len(rows), "class": [r[2] for r in rows],
        "align": [r[3] for r in rows], "text": [f"text of {r[0]}" for r in rows],
        "label": [1] * len(rows), "prob": [r[4] for r in rows], "pred": [r[5] for r in rows]})


#: template "t": classes x, y; template "u": classes x, z
FOUR = [("t#0", "t", "x", "", 0.9, 1), ("t#1", "t", "y", "", 0.2, 0),
        ("u#0", "u", "x", "", 0.6, 1), ("u#1", "u", "z", "", 0.4, 0)]


def mutants_and_predictions() -> tuple[pd.DataFrame, pd.DataFrame]:
    scored = scored_frame(FOUR)
    return (scored.drop(columns=["prob", "pred"]),
            scored[["id", "label", "prob", "pred"]].reset_index(drop=True))


# -- join_predictions ------------------------------------------------------------------------

def test_join_threshold_bounds_are_inclusive() -> None:
    """threshold 0 makes every mutant positive, 1 only a probability of exactly 1."""
    mutants, predictions = mutants_and_predictions()
    predictions.loc[3, "prob"] = 1.0
    assert join_predictions(mutants, predictions, threshold=0.0)["pred"].tolist() == [1, 1, 1, 1]
    assert join_predictions(mutants, predictions, threshold=1.0)["pred"].tolist() == [0, 0, 0, 1]
    # probabilities 0.9, 0.2, 0.6, 1.0: a probability equal to the threshold is positive
    assert join_predictions(mutants, predictions, threshold=0.6)["pred"].tolist() == [1, 0, 1, 1]
    for bad in (1.5, -0.1, 2.0):
        with pytest.raises(ConfigError) as err:
            join_predictions(mutants, predictions, threshold=bad)
        assert str(err.value) == f"threshold must be in [0, 1], not {bad}"


def test_join_errors_name_their_file_and_column() -> None:
    mutants, predictions = mutants_and_predictions()
    with pytest.raises(DataError) as err:  # the mutants file, for a bad mutants table
        join_predictions(mutants.assign(id=["t#0"] * 4), predictions, mutants_file="m.parquet",
                         predictions_file="p.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("m.parquet", 2, "id")
    with pytest.raises(DataError) as err:  # "predictions" when no file is named
        join_predictions(mutants, predictions.drop(columns="pred"))
    assert (err.value.file, err.value.column) == ("predictions", "pred")
    with pytest.raises(DataError) as err:
        join_predictions(mutants, pd.concat([predictions, predictions.iloc[[2]]]),
                         predictions_file="p.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("p.parquet", 5, "id")
    assert err.value.message == "duplicate prediction for mutant id 'u#0'"
    with pytest.raises(DataError) as err:
        join_predictions(mutants, predictions.iloc[[0, 2]], predictions_file="p.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("p.parquet", None, "id")
    assert err.value.message == "no prediction for mutant id 't#1' (2 of 4 mutants have none)"
    extra = pd.concat([predictions, predictions.iloc[[1]].assign(id="v#9")], ignore_index=True)
    with pytest.raises(DataError) as err:
        join_predictions(mutants, extra, predictions_file="p.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("p.parquet", 5, "id")
    assert err.value.message == "prediction for an id that is not a mutant: 'v#9' (1 such rows)"
    with pytest.raises(DataError) as err:
        join_predictions(mutants, predictions.assign(label=[1, 1, 0, 1]),
                         predictions_file="p.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("p.parquet", 3, "label")
    assert err.value.message == ("label of mutant 'u#0' is 0 here but 1 in the mutants "
                                 "(predictions of another mutants file?)")


def test_join_without_labels_and_with_integer_probabilities() -> None:
    """A predictions table without ``label`` is not checked against the mutants' labels;
    probabilities written as integers 0/1 come back as float64."""
    mutants, predictions = mutants_and_predictions()
    joined = join_predictions(mutants, predictions.drop(columns="label").assign(
        prob=[1, 0, 1, 0], pred=[1, 0, 1, 0]))
    assert joined["prob"].tolist() == [1.0, 0.0, 1.0, 0.0]
    assert joined["prob"].dtype == np.float64 and joined["pred"].dtype == np.int64


def test_join_replaces_old_predictions() -> None:
    """Mutants that already carry ``prob``/``pred`` get the new ones, as the last columns."""
    mutants, predictions = mutants_and_predictions()
    old = mutants.assign(prob=0.5, pred=7)[["id", "prob", "pred", "template_id",
                                            "characteristic", "class", "align", "text", "label"]]
    joined = join_predictions(old, predictions)
    assert list(joined.columns) == ["id", "template_id", "characteristic", "class", "align",
                                    "text", "label", "prob", "pred"]
    assert joined["prob"].tolist() == [0.9, 0.2, 0.6, 0.4]
    assert joined["pred"].tolist() == [1, 0, 1, 0]


# -- pair_texts ------------------------------------------------------------------------------

PAIRS = pd.DataFrame({"template_id": ["t", "u"], "id_1": ["t#0", "u#0"],
                      "id_2": ["t#1", "u#1"]})


def test_pair_texts_from_several_files(tmp_path) -> None:
    """Mutants split over two files (each with its own 0-based index) are found in both."""
    scored = scored_frame(FOUR)
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    scored.iloc[[0, 3]].to_parquet(paths[0], index=False)
    scored.iloc[[1, 2]].to_parquet(paths[1], index=False)
    out = pair_texts(PAIRS, paths)
    assert out["text_1"].tolist() == ["text of t#0", "text of u#0"]
    assert out["text_2"].tolist() == ["text of t#1", "text of u#1"]
    assert list(out.columns) == ["template_id", "id_1", "id_2", "text_1", "text_2"]


def test_pair_texts_with_no_mutants() -> None:
    """No mutants tables: no pair is found, and no pair needs none."""
    with pytest.raises(DataError) as err:
        pair_texts(PAIRS, [])
    assert err.value.column == "id_1"
    empty = pair_texts(PAIRS.iloc[:0], [])
    assert len(empty) == 0 and {"text_1", "text_2"} <= set(empty.columns)


def test_pair_texts_names_the_missing_mutant() -> None:
    scored = scored_frame(FOUR)
    with pytest.raises(DataError) as err:
        pair_texts(PAIRS, scored[scored["id"] != "u#1"])
    assert err.value.column == "id_2"
    assert err.value.message == ("mutant 'u#1' of template 'u' is not in the mutants given "
                                 "(BTC pairs of other mutants?)")
    # a mutant id of another template is not the pair's mutant
    with pytest.raises(DataError, match="mutant 't#0' of template 'u'"):
        pair_texts(PAIRS.assign(id_1=["t#0", "t#0"]), scored)


def test_pair_texts_refuses_bad_inputs(tmp_path) -> None:
    scored = scored_frame(FOUR)
    with pytest.raises(DataError) as err:
        pair_texts(PAIRS.drop(columns="id_2"), scored)
    assert (err.value.file, err.value.column) == ("BTC pairs", "id_2")
    with pytest.raises(DataError) as err:
        pair_texts(PAIRS, scored.drop(columns="text"))
    assert (err.value.file, err.value.column) == ("mutants", "text")
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet\n")
    with pytest.raises(DataError, match="not a readable Parquet mutants table"):
        pair_texts(PAIRS, [junk])


# -- truncation_counts -----------------------------------------------------------------------

def test_truncation_counts_by_hand() -> None:
    """t2's three mutants become inputs 5, 6, 5 (2 distinct); t1's two both input 3 (1)."""
    mutants = pd.DataFrame({"template_id": ["t2", "t1", "t2", "t1", "t2"]})
    out = truncation_counts(mutants, np.array([5, 3, 6, 3, 5]))
    assert list(out.columns) == ["template_id", "distinct_inputs"]
    assert out["template_id"].tolist() == ["t1", "t2"]
    assert out["distinct_inputs"].tolist() == [1, 2]
    assert out["distinct_inputs"].dtype == np.int64
    numeric = truncation_counts(pd.DataFrame({"template_id": [7, 7]}), [0, 1])
    assert numeric["template_id"].tolist() == ["7"] and numeric["distinct_inputs"].tolist() == [2]
    with pytest.raises(DataError) as err:
        truncation_counts(mutants, np.array([1, 2]))
    assert str(err.value) == "2 model inputs for 5 mutants"


# -- Table 4 summary rows --------------------------------------------------------------------

#: a valid row of a ``btc`` summary JSON, written out by hand
ROW = {"model": "tiny-bert", "method": "baseline", "threshold": 0.5, "lists": "original",
       "occupation_templates": "first", "characteristic": "gender", "classes": 2,
       "templates": 1, "mutants": 2, "btc": 1, "possible_pairs": 1, "btc_rate": 1.0,
       "aligned_pairs": 1, "aligned_btc": 1, "aligned_btc_rate": 1.0, "templates_with_btc": 1}


def summary_file(tmp_path: Path, **change: object) -> Path:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"gender": {**ROW, **change}}))
    return path


@pytest.mark.parametrize("change", [
    {"classes": None}, {"btc": 0, "aligned_btc": 0, "templates_with_btc": 0, "btc_rate": 0,
                        "aligned_btc_rate": 0.0},
    {"btc_rate": None, "aligned_btc_rate": None}, {"btc_rate": 1, "threshold": 1.0},
    {"threshold": 0}, {"lists": None, "occupation_templates": None},
], ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_summary_rows_table_4_accepts(tmp_path, change) -> None:
    (row, total) = btc.table_rows([summary_file(tmp_path, **change)])
    assert row == {**ROW, **change}
    assert (total["characteristic"], total["templates"]) == ("total", 1)


@pytest.mark.parametrize(("change", "message"), [
    ({"method": None}, "summary row without a model or method name (run `btc` with "
                       "--model-name and --method)"),
    ({"model": 7}, "summary row without a model or method name (run `btc` with "
                   "--model-name and --method)"),
    ({"model": " "}, "summary row's 'model' is not a name (got ' ')"),
    ({"characteristic": None}, "summary row's 'characteristic' is not a name (got None)"),
    ({"lists": ""}, "summary row's 'lists' is not a name (got '')"),
    ({"btc": -1}, "summary row's 'btc' is not a count (a non-negative integer) (got -1)"),
    ({"btc": True}, "summary row's 'btc' is not a count (a non-negative integer) (got True)"),
    ({"mutants": 1.5}, "summary row's 'mutants' is not a count (a non-negative integer) "
                       "(got 1.5)"),
    ({"templates": None}, "summary row's 'templates' is not a count (a non-negative integer) "
                          "(got None)"),
    ({"classes": -2}, "summary row's 'classes' is not a count (a non-negative integer) "
                      "(got -2)"),
    ({"threshold": None}, "summary row's 'threshold' is not a number in [0, 1] (got None)"),
    ({"btc_rate": 1.5}, "summary row's 'btc_rate' is not a number in [0, 1] (got 1.5)"),
    ({"btc_rate": -0.5}, "summary row's 'btc_rate' is not a number in [0, 1] (got -0.5)"),
    ({"aligned_btc_rate": True}, "summary row's 'aligned_btc_rate' is not a number in "
                                 "[0, 1] (got True)"),
    ({"threshold": "0.5"}, "summary row's 'threshold' is not a number in [0, 1] (got '0.5')"),
])
def test_summary_rows_table_4_refuses(tmp_path, change, message) -> None:
    path = summary_file(tmp_path, **change)
    with pytest.raises(DataError) as err:
        btc.table_rows([path])
    assert err.value.message == message
    assert (err.value.file, err.value.column) == (str(path), "gender")


def test_summary_row_without_a_column(tmp_path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"gender": {k: v for k, v in ROW.items() if k != "lists"}}))
    with pytest.raises(DataError) as err:
        btc.table_rows([path])
    assert err.value.message == "summary row lacks 'lists'"
    assert (err.value.file, err.value.column) == (str(path), "gender")


def test_table_4_from_summary_files(tmp_path) -> None:
    """A summary's ``total`` row is skipped wherever it stands and recomputed; a setting the
    rows disagree on is None in the total, one they share is kept."""
    occupation = {**ROW, "characteristic": "occupation", "threshold": 0.7, "classes": 4,
                  "templates": 2, "mutants": 8, "btc": 3, "possible_pairs": 12,
                  "btc_rate": 0.25, "aligned_pairs": 4, "aligned_btc": 1,
                  "aligned_btc_rate": 0.25, "templates_with_btc": 1}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"total": {"characteristic": "total"}, "gender": ROW,
                                "occupation": occupation}))
    rows = btc.table_rows([path])
    assert [r["characteristic"] for r in rows] == ["gender", "occupation", "total"]
    total = rows[-1]
    assert (total["templates"], total["mutants"], total["btc"], total["possible_pairs"]) == (
        3, 10, 4, 13)
    assert total["btc_rate"] == 4 / 13 and total["aligned_btc_rate"] == 2 / 5
    assert (total["threshold"], total["lists"], total["occupation_templates"]) == (
        None, "original", "first")


def test_table_4_refuses_bad_summary_files(tmp_path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps([ROW]))
    with pytest.raises(DataError) as err:
        btc.table_rows([path])
    assert err.value.message == "expected a JSON object keyed by characteristic"
    assert err.value.file == str(path)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"gender": ROW}))
    second.write_text(json.dumps({"gender": ROW}))
    with pytest.raises(DataError) as err:
        btc.table_rows([first, second])
    assert err.value.message == (f"model 'tiny-bert', method 'baseline', characteristic "
                                 f"'gender' is also in {first}")
    assert (err.value.file, err.value.column) == (str(second), "gender")


#: the head of Table 4's Markdown file, as the reader sees it
TABLE_4_PREAMBLE = (
    "# BiasFinder Table 4 per model and method\n\n"
    "A BTC is a pair of mutants of one template, of different classes, labelled differently; "
    "`possible_pairs` counts all such cross-class pairs, so BTC counts grow with the square "
    "of `classes` (occupations, countries) and with the mutants per class. Compare "
    "`btc_rate` = btc / possible_pairs across runs whose class sets differ. `lists`: whose "
    "word lists filled the placeholders (`project` or BiasFinder's `original`); "
    "`occupation_templates`: one template per distinct occupation of a review "
    "(`each_distinct`) or its first only (`first`).\n\n")
CSV_HEADER = ("model,method,threshold,lists,occupation_templates,characteristic,classes,"
              "templates,mutants,btc,possible_pairs,btc_rate,aligned_pairs,aligned_btc,"
              "aligned_btc_rate,templates_with_btc")


def test_write_table_files(tmp_path) -> None:
    out = {"out_json": tmp_path / "t4.json", "out_md": tmp_path / "t4.md",
           "out_csv": tmp_path / "t4.csv"}
    btc.write_table([summary_file(tmp_path)], **out)
    md = out["out_md"].read_text()
    assert md.startswith(TABLE_4_PREAMBLE + "| model | method |")
    csv = out["out_csv"].read_bytes().decode()
    lines = csv.split("\n")
    assert lines[0] == CSV_HEADER and "\r" not in csv
    assert lines[1].startswith("tiny-bert,baseline,0.5,original,first,gender,")
    assert lines[2].startswith("tiny-bert,baseline,0.5,original,first,total,")
    assert lines[3:] == [""]
    # no summaries: the files still have their header
    btc.write_table([], **out)
    assert out["out_csv"].read_text() == CSV_HEADER + "\n"
    assert json.loads(out["out_json"].read_text()) == {}


# -- summarize -------------------------------------------------------------------------------

def hand_counts(rows: list[tuple[str, str, int, int, int, int]]) -> pd.DataFrame:
    """Template counts written by hand: (template_id, characteristic, n_mutants, btc,
    possible_pairs, aligned_btc) with aligned_pairs = possible_pairs."""
    return pd.DataFrame({
        "template_id": [r[0] for r in rows], "characteristic": [r[1] for r in rows],
        "n_mutants": [r[2] for r in rows], "n_classes": [2] * len(rows),
        "btc": [r[3] for r in rows], "possible_pairs": [r[4] for r in rows],
        "btc_rate": [r[3] / r[4] for r in rows], "aligned_pairs": [r[4] for r in rows],
        "aligned_btc": [r[5] for r in rows], "n_positive": [1] * len(rows),
        "n_negative": [1] * len(rows)})


def test_summarize_hand_counts() -> None:
    """Templates with 0, 1 and 2 BTCs: two of three have one; a template listed twice in
    the templates table (two rows of one template id) is one template."""
    templates = pd.DataFrame({"template_id": ["a", "b", "c", "c"],
                              "characteristic": ["gender"] * 4, "doc_id": [1, 2, 3, 4]})
    counts = hand_counts([("a", "gender", 4, 0, 4, 0), ("b", "gender", 2, 1, 1, 1),
                          ("c", "gender", 4, 2, 4, 1)])
    gender, total = btc.summarize(templates, counts, {"gender": 2})
    assert gender == {"characteristic": "gender", "classes": 2, "templates": 3, "mutants": 10,
                      "btc": 3, "possible_pairs": 9, "btc_rate": 3 / 9, "aligned_pairs": 9,
                      "aligned_btc": 2, "aligned_btc_rate": 2 / 9, "templates_with_btc": 2}
    assert total == {**gender, "characteristic": "total", "classes": None}


def test_summarize_refuses_inconsistent_tables() -> None:
    templates = pd.DataFrame({"template_id": ["a", "b"], "characteristic": ["gender"] * 2})
    counts = hand_counts([("a", "gender", 4, 0, 4, 0), ("b", "occupation", 2, 1, 1, 1)])
    with pytest.raises(DataError) as err:
        btc.summarize(templates, counts)
    assert err.value.message == ("template 'b' is 'gender' in the templates table but "
                                 "'occupation' in the counts")
    assert err.value.column == "template_id"
    with pytest.raises(DataError) as err:
        btc.summarize(templates.iloc[:1], counts.iloc[:1].assign(template_id="z"))
    assert (err.value.message, err.value.column) == (
        "template 'z' is not in the templates table", "template_id")
    with pytest.raises(DataError) as err:
        btc.summarize(templates.drop(columns="characteristic"), counts)
    assert (err.value.file, err.value.column) == ("templates", "characteristic")
    with pytest.raises(DataError) as err:
        btc.summarize(templates, counts.drop(columns="aligned_btc"))
    assert (err.value.file, err.value.column) == ("template counts", "aligned_btc")
    with pytest.raises(DataError) as err:
        btc.class_counts(counts)
    assert (err.value.file, err.value.column) == ("mutants", "class")


# -- write_pairs / write_btc -----------------------------------------------------------------

def hand_pairs() -> pd.DataFrame:
    return pd.DataFrame({
        "template_id": ["t", "u", "u"], "characteristic": ["occupation"] * 3,
        "id_1": ["t#0", "u#0", "u#2"], "id_2": ["t#1", "u#1", "u#3"],
        "class_1": ["x", "x", "x"], "class_2": ["y", "z", "z"], "aligned": [True, False, True],
        "pred_1": [1, 1, 0], "pred_2": [0, 0, 1], "prob_1": [0.9, 0.6, 0.3],
        "prob_2": [0.2, 0.4, 0.8]})


def test_write_pairs_of_a_filtered_frame(tmp_path) -> None:
    """A frame whose index is not 0..n-1 (a sample, a filter) is written as its rows only,
    zstd-compressed."""
    pairs = hand_pairs()
    some = pairs[pairs["template_id"] == "u"]  # index 1, 2
    path = tmp_path / "pairs.parquet"
    assert btc.write_pairs(some, path) == 2
    back = pd.read_parquet(path)
    assert list(back.columns) == list(pairs.columns)
    assert back["id_1"].tolist() == ["u#0", "u#2"] and back["pred_2"].tolist() == [0, 1]
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    with pytest.raises(DataError) as err:
        btc.write_pairs(pairs.drop(columns="aligned"), path)
    assert (err.value.file, err.value.column) == ("BTC pairs", "aligned")


def test_write_pairs_casts_arrow_tables_to_the_pair_schema(tmp_path) -> None:
    """Arrow tables of other (castable) types, e.g. 32-bit predictions and large strings."""
    pairs = hand_pairs()
    loose = pa.table({c: pairs[c].tolist() for c in pairs.columns})  # int64/double/string
    loose = loose.set_column(loose.schema.get_field_index("pred_1"), "pred_1",
                             pa.array([1, 1, 0], type=pa.int32()))
    loose = loose.set_column(loose.schema.get_field_index("id_1"), "id_1",
                             pa.array(["t#0", "u#0", "u#2"], type=pa.large_string()))
    assert not loose.schema.equals(btc.PAIR_SCHEMA)
    path = tmp_path / "pairs.parquet"
    assert btc.write_pairs([loose.slice(0, 1), loose.slice(1)], path) == 3
    assert pq.read_schema(path).remove_metadata().equals(btc.PAIR_SCHEMA)
    back = pd.read_parquet(path)
    assert back["pred_1"].tolist() == [1, 1, 0] and back["id_1"].tolist() == ["t#0", "u#0", "u#2"]


def test_write_btc_markdown_heading(tmp_path) -> None:
    counts = hand_counts([("t", "occupation", 2, 1, 1, 1)])
    paths = {"pairs_path": tmp_path / "p.parquet", "counts_path": tmp_path / "c.parquet",
             "summary_json": tmp_path / "s.json", "summary_md": tmp_path / "s.md"}
    btc.write_btc(hand_pairs().iloc[:1], counts, [ROW], **paths)
    assert paths["summary_md"].read_text().startswith(
        "# BiasFinder: templates, mutants and BTCs (cf. Table 4)\n\n| characteristic | classes |")


def test_write_pairs_row_groups_of_an_exact_multiple(tmp_path, monkeypatch) -> None:
    """Four pairs in row groups of two: two full groups, no empty group after them."""
    monkeypatch.setattr(btc, "PAIR_ROW_GROUP", 2)
    pairs = pd.concat([hand_pairs(), hand_pairs().iloc[:1]], ignore_index=True)
    path = tmp_path / "pairs.parquet"
    assert btc.write_pairs(pairs, path) == 4
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [2, 2]
    assert btc.write_pairs(pairs.iloc[:0], path) == 0
    assert pq.ParquetFile(path).metadata.num_rows == 0
    assert pd.read_parquet(path).columns.tolist() == list(pairs.columns)


# -- iter_btc_pairs / score_mutants ----------------------------------------------------------

def test_pairs_of_no_mutants_and_bad_chunks() -> None:
    empty = scored_frame(FOUR).iloc[:0]
    assert len(btc.btc_pairs(empty)) == 0
    assert list(btc.iter_btc_pairs(empty)) == []
    with pytest.raises(ConfigError) as err:
        list(btc.iter_btc_pairs(scored_frame(FOUR), chunk_candidates=0))
    assert str(err.value) == "chunk_candidates must be positive, not 0"


def test_score_mutants_threshold_bounds_and_inputs() -> None:
    """A probability equal to the threshold is positive; thresholds 0 and 1 are valid; the
    ``input`` column gives identical texts one input."""
    mutants = scored_frame(FOUR).drop(columns=["prob", "pred"])
    mutants["text"] = ["same text", "other", "same text", "third"]
    probs = {"same text": 0.5, "other": 0.25, "third": 1.0}

    def model(texts):
        return [probs[t] for t in texts]

    scored = btc.score_mutants(mutants, model, threshold=0.5)
    assert scored["pred"].tolist() == [1, 0, 1, 1]
    assert scored["prob"].tolist() == [0.5, 0.25, 0.5, 1.0]
    inputs = scored["input"].tolist()
    assert scored["input"].dtype == np.int64
    assert inputs[0] == inputs[2] and len({inputs[0], inputs[1], inputs[3]}) == 3
    assert btc.score_mutants(mutants, model, threshold=0.0)["pred"].tolist() == [1, 1, 1, 1]
    assert btc.score_mutants(mutants, model, threshold=1.0)["pred"].tolist() == [0, 0, 0, 1]
    with pytest.raises(DataError) as err:
        btc.score_mutants(mutants.drop(columns="text"), model, mutants_file="m.parquet")
    assert (err.value.file, err.value.column) == ("m.parquet", "text")
    with pytest.raises(DataError) as err:
        btc.score_mutants(mutants.assign(text=["a", "b", " ", "c"]), model,
                          mutants_file="m.parquet")
    assert (err.value.file, err.value.row, err.value.column) == ("m.parquet", 3, "text")


# -- check_mutants / predictions -------------------------------------------------------------

@pytest.mark.parametrize("column", ["id", "template_id", "characteristic", "class", "align",
                                    "text"])
def test_a_missing_value_in_a_text_column(column) -> None:
    scored = scored_frame(FOUR)
    scored[column] = scored[column].where(scored.index != 2)  # row 3 missing
    with pytest.raises(DataError) as err:
        btc.check_mutants(scored, file="m.parquet", columns=(*btc.MUTANT_COLUMNS, "text"))
    assert (err.value.message, err.value.file, err.value.row, err.value.column) == (
        "missing", "m.parquet", 3, column)


def test_object_columns_of_strings_and_a_number_among_them() -> None:
    """Object-dtype columns (not pandas' string dtype) are checked value by value."""
    scored = scored_frame(FOUR).astype({c: object for c in ("id", "template_id",
                                                             "characteristic", "class",
                                                             "align", "text")})
    assert btc.template_counts(scored)["btc"].tolist() == [1, 1]
    bad = scored.copy()
    bad.loc[1, "class"] = 5
    with pytest.raises(DataError) as err:
        btc.template_counts(bad)
    assert (err.value.message, err.value.row, err.value.column) == ("not a string (5)", 2,
                                                                    "class")


def test_counts_need_no_text_and_name_the_mutants() -> None:
    scored = scored_frame(FOUR)
    counts = btc.template_counts(scored.drop(columns="text"))
    assert counts["btc"].tolist() == [1, 1]
    with pytest.raises(DataError) as err:
        btc.template_counts(scored.drop(columns="align"))
    assert (err.value.file, err.value.column) == ("mutants", "align")


@pytest.mark.parametrize(("column", "value", "message"), [
    ("prob", float("nan"), "probability outside [0, 1] (nan)"),
    ("prob", float("inf"), "probability outside [0, 1] (inf)"),
    ("prob", 1.5, "probability outside [0, 1] (1.5)"),
    ("prob", "x", "probability outside [0, 1] ('x')"),
    ("pred", "x", "predicted label must be 0 or 1 ('x')"),
    ("pred", 2, "predicted label must be 0 or 1 (2)"),
])
def test_bad_predictions(column, value, message) -> None:
    scored = scored_frame(FOUR).astype({column: object})
    scored.loc[1, column] = value
    with pytest.raises(DataError) as err:
        btc.template_counts(scored)
    assert (err.value.message, err.value.row, err.value.column) == (message, 2, column)


def test_probabilities_zero_and_one_are_valid() -> None:
    scored = scored_frame(FOUR).assign(prob=[1.0, 0.0, 1.0, 0.0])
    assert btc.btc_pairs(scored)["prob_1"].tolist() == [1.0, 1.0]


def test_check_mutants_messages() -> None:
    rows = [("u#0", "u", "z", "", 0.9, 1), ("t#0", "t", "x", "", 0.9, 1),
            ("t#1", "t", "y", "", 0.1, 0)]
    scored = scored_frame(rows)
    with pytest.raises(DataError) as err:
        btc.check_mutants(scored, file="m.parquet")
    assert err.value.message == ("template 'u' has mutants of a single class ('z'); a BTC "
                                 "needs two classes of one template")
    assert (err.value.file, err.value.row, err.value.column) == ("m.parquet", None, "class")
    mixed = scored_frame([*rows, ("u#1", "u", "w", "", 0.1, 0)]).assign(
        characteristic=["gender", "gender", "occupation", "occupation"])
    with pytest.raises(DataError) as err:  # both templates mixed: the first by id named
        btc.check_mutants(mixed, file="m.parquet")
    assert err.value.message == "template 't' has mutants of several characteristics"
    assert (err.value.file, err.value.column) == ("m.parquet", "characteristic")
    four = scored_frame(FOUR)
    with pytest.raises(DataError) as err:
        btc.check_mutants(four.assign(id=["t#0", "t#1", "t#0", "u#1"]), file="m.parquet")
    assert (err.value.message, err.value.file, err.value.row, err.value.column) == (
        "duplicate mutant id 't#0'", "m.parquet", 3, "id")
    with pytest.raises(DataError) as err:
        btc.check_mutants(four.assign(text=["a", "b", " \t", "d"]), file="m.parquet",
                          columns=(*btc.MUTANT_COLUMNS, "text"))
    assert (err.value.message, err.value.file, err.value.row, err.value.column) == (
        "empty", "m.parquet", 3, "text")
