"""The papers' tables, computed in process: reading the published cells and our result
files, our value (or the reason for none) of every kind of cell, and the CSV, Markdown and
index texts. Written from the survivors of a mutation run of
``biasrepro.analysis.paper_tables`` (docs/testing.md, "Mutation testing"). Expectations are
worked out by hand from the small inputs built here, or are the values printed in
``published/``."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import pytest
from conftest import REPO

from biasrepro.analysis import paper_tables as pt
from biasrepro.errors import ConfigError, DataError

PUBLISHED = REPO / "published"
#: the toxicity study's groups; the sentiment study adds a second marginalized gender group
#: so that its group means are means over more than one group
ATTRS = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
         "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
         "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]}}
SENTIMENT_ATTRS = {"gender": {"marginalized": ["female", "nonbinary"],
                              "non_marginalized": ["male"]}}
TOX_METHODS = ["baseline", "upstream-sentDebias-gender", "downstream-perturbed-data",
               "downstream-stratified-data", "downstream-perturbed-stratified-data",
               "downstream-sentDebias-gender"]
SETTINGS = {
    "models.registry": {
        "tiny-bert": {"source": "embedded", "architecture": "bert"},
        "hub-albert": {"source": "hub", "architecture": "albert", "id": "albert/albert-base-v2"},
        "big-roberta": {"source": "hub", "architecture": "roberta",
                        "id": "FacebookAI/roberta-large"},
    },
    "models.tasks": {"toxicity": ["tiny-bert", "hub-albert"],
                     "sentiment": ["tiny-bert", "big-roberta"]},
    "representation.models": ["big-roberta", "tiny-bert"],
    "methods.tasks": {"toxicity": TOX_METHODS,
                      "sentiment": ["baseline", "imdb-gendered", "downstream-perturbed-data"]},
    "perturbation.select": "all",
    "perturbation.restratify.select": "single_identity",
}
#: (model, method, fairness set, attribute) -> FPR, TPR and AUC gap
TOX_GAPS = {
    ("tiny-bert", "baseline", "balanced", "gender"): (0.02, 0.05, 0.01),
    ("tiny-bert", "baseline", "original", "gender"): (0.03, 0.06, 0.02),
    ("tiny-bert", "upstream-sentDebias-gender", "balanced", "gender"): (0.01, 0.04, 0.005),
    # the TPR gap equals the baseline's: not lowered
    ("tiny-bert", "downstream-perturbed-data", "balanced", "gender"): (0.01, 0.05, 0.005),
    ("hub-albert", "baseline", "balanced", "gender"): (0.1, 0.2, 0.3),
    ("hub-albert", "baseline", "original", "gender"): (None, None, 0.4),
}


def _write_csv(path: Path, fields: list[str], rows: list[tuple]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(fields)
        w.writerows(rows)


def _study(d: Path, report: dict, correlations: list[tuple], training_groups: list[tuple],
           group_metrics: list[tuple]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "report.json").write_text(json.dumps(report), encoding="utf-8")
    _write_csv(d / "correlations.csv", ["group", "model", "fairness_set", "x", "y", "rho", "n",
                                        "p_cluster", "note"], correlations)
    _write_csv(d / "training_groups.csv", ["method", "group", "n", "n_positive",
                                           "positive_ratio"], training_groups)
    _write_csv(d / "group_metrics.csv", ["model", "method", "fairness_set", "group", "n",
                                         "positives"], group_metrics)
    return d / "report.json"


def _toxicity(d: Path) -> Path:
    gaps = [{"model": m, "method": me, "fairness_set": s, "attribute": a, "metric": metric,
             "value": v, "note": "one class" if (m, s, metric) == ("hub-albert", "original",
                                                                      "FPR_gap") else None}
            for (m, me, s, a), values in TOX_GAPS.items()
            for metric, v in zip(pt.GAPS, values, strict=True)]
    report = {
        "gaps": gaps,
        "sensescore": [
            {"model": "tiny-bert", "method": "baseline", "attribute": "gender",
             "sense_score": 0.7},
            {"model": "tiny-bert", "method": "baseline", "attribute": "race",
             "sense_score": None, "note": "no pair"}],
        "dataset_bias": [
            {"method": "baseline", "attribute": "gender", "selection": 0.04,
             "overamplification_raw": 10.0, "overamplification": 1.5,
             "overamplification_share": 0.1, "note": ""},
            {"method": "baseline", "attribute": "race", "selection": None,
             "note": "no positives"},
            {"method": "baseline", "attribute": "religion", "selection": None}],
        "training": {"baseline": {"path": "x", "rows": 100},
                     "downstream-perturbed-data": {"rows": "120"}},
        "fairness_sets": {"original": {"rows": 40}, "balanced": {"rows": 80}},
        "settings": {"attributes": ATTRS}}
    return _study(d, report, correlations=[
        ("bias_vs_fairness", "tiny-bert", "balanced", "selection", "FPR_gap", "0.5", "3",
         "0.6666667", ""),
        ("bias_vs_fairness", "tiny-bert", "balanced", "selection", "TPR_gap", "", "3", "",
         "constant"),
        ("bias_vs_fairness", "tiny-bert", "original", "overamplification", "FPR_gap", "0.9",
         "3", "0.3333333", ""),
        ("fairness_metrics", "all", "original", "FPR_gap", "TPR_gap", "0.25", "6", "0.65", ""),
        ("fairness_metrics", "all", "balanced", "TPR_gap", "FPR_gap", "-0.75", "6", "0.08",
         ""),
        ("fairness_metrics", "all", "balanced", "FPR_gap", "AUC_gap", "", "6", "", "constant"),
    ], training_groups=[
        ("baseline", "male", "30", "3", "0.1"),
        ("baseline", "female", "10", "5", "0.5"),
        ("downstream-perturbed-data", "male", "60", "15", "0.25"),
    ], group_metrics=[
        # per (set, group) the baseline row of the first model in name order counts
        ("a-model", "upstream-sentDebias-gender", "original", "male", "777", "7"),
        ("tiny-bert", "baseline", "original", "male", "999", "1"),
        ("hub-albert", "baseline", "original", "male", "20", "5"),
        ("hub-albert", "baseline", "original", "female", "10", "4"),
        ("hub-albert", "baseline", "balanced", "male", "40", "10"),
        ("hub-albert", "baseline", "balanced", "female", "0", "0"),
    ])


def _sentiment(d: Path) -> Path:
    report = {
        "gaps": [],
        "sensescore": [{"model": "tiny-bert", "method": "downstream-perturbed-data",
                        "attribute": "gender", "sense_score": 0.33, "note": ""}],
        "dataset_bias": [{"method": "imdb-gendered", "attribute": "gender",
                          "selection": 0.02, "overamplification_share": 0.15, "note": ""}],
        "training": {"imdb-gendered": {"rows": 500}},
        "fairness_sets": {"original": {"rows": 50}},
        "settings": {"attributes": SENTIMENT_ATTRS}}
    return _study(d, report, correlations=[], training_groups=[
        ("imdb-gendered", "male", "300", "150", "0.5"),
        ("imdb-gendered", "female", "200", "110", "0.55"),
    ], group_metrics=[
        ("tiny-bert", "baseline", "original", "male", "30", "12"),
        ("tiny-bert", "baseline", "original", "female", "20", "15"),
        ("tiny-bert", "baseline", "original", "nonbinary", "6", "1"),
        ("tiny-bert", "baseline", "balanced", "male", "30", "15"),
    ])


BIASFINDER_FIELDS = ["model", "method", "characteristic", "classes", "templates", "btc",
                     "possible_pairs", "btc_rate", "lists", "occupation_templates"]


def _biasfinder(path: Path) -> Path:
    _write_csv(path, BIASFINDER_FIELDS, [
        ("tiny-bert", "baseline", "gender", "2.0", "10", "30", "1200", "0.025", "original",
         "first"),
        ("tiny-bert", "baseline", "occupation", "", "0", "0", "0", "", "", ""),
        ("tiny-bert", "baseline", "country", "", "5", "40", "1500.0", "0.0266666", "original",
         "first"),
        ("tiny-bert", "baseline", "total", "", "15", "", "", "", "", ""),
    ])
    return path


def _representation(path: Path) -> Path:
    _write_csv(path, ["model", "variant", "attribute", "source", "value"], [
        ("big-roberta", "pretrained", "gender", "crows", "55.0"),
        ("big-roberta", "sentdebias-gender", "race", "stereoset", "61.5"),
        ("big-roberta", "pretrained", "religion", "seat", "0.42"),
        ("tiny-bert", "pretrained", "gender", "crows", ""),
    ])
    return path


CLASSIFICATION = [
    {"task": "toxicity", "model": "tiny-bert", "method": "baseline", "set": "test",
     "roc_auc": 0.9},
    {"task": "toxicity", "model": "tiny-bert", "method": "baseline", "set": "fairness-balanced",
     "roc_auc": 0.8},
    {"task": "toxicity", "model": "tiny-bert", "method": "baseline",
     "set": "fairness-original", "roc_auc": 0.7},
    {"task": "toxicity", "model": "tiny-bert", "method": "upstream-sentDebias-gender",
     "set": "fairness-balanced", "roc_auc": None},
    {"task": "sentiment", "model": "tiny-bert", "method": "imdb-gendered", "roc_auc": 0.91},
    {"task": "sentiment", "model": "tiny-bert", "method": "imdb-gendered",
     "set": "imdb-gendered-test", "roc_auc": 0.93},
    {"task": "sentiment", "model": "tiny-bert", "method": "imdb-gendered",
     "set": "fairness-original", "roc_auc": 0.71},
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> pt.Results:
    """Our results for every input kind, read from files."""
    d = tmp_path_factory.mktemp("world")
    (d / "classification.json").write_text(json.dumps(CLASSIFICATION), encoding="utf-8")
    return pt.read_results(SETTINGS, biasfinder=_biasfinder(d / "table4.csv"),
                           toxicity=_toxicity(d / "tox"), sentiment=_sentiment(d / "sent"),
                           representation=_representation(d / "representation.csv"),
                           classification=d / "classification.json")


def _cell(tid: str, row: str, column: str, value: float = 1.0, text: str = "1",
          unit: str = "u") -> pt.PublishedCell:
    return pt.PublishedCell("p", tid, row, column, text, value, unit, "src", "", "pub.csv", 7)


def _ours(world: pt.Results, tid: str, row: str, column: str) -> pt.Ours:
    return pt.resolve(_cell(tid, row, column), world)


# ------------------------------------------------------------------------ reading


def test_number_parses_text_and_gives_nan_for_blank_or_bad_text() -> None:
    """Blank, padded and non-numeric text; None as a JSON value is NaN."""
    assert pt._number("1.5") == 1.5
    assert pt._number(" -2 ") == -2.0
    for text in ("", "  ", "n/a"):
        assert math.isnan(pt._number(text))
    assert math.isnan(pt._value(None)) and pt._value("0.25") == 0.25


def test_published_folder_holds_every_printed_cell() -> None:
    """published/: 11 BiasFinder cells and 910 toxicity cells, each with its file and line."""
    cells = pt.read_published(PUBLISHED)
    assert len(cells) == 921
    first, last_bf, first_tox = cells[0], cells[10], cells[11]
    assert first == pt.PublishedCell(
        "biasfinder", "biasfinder-table4", "gender", "templates", "3057", 3057.0, "count",
        "Table 4, row Gender, column #Templates", "printed with a thousands separator",
        str(PUBLISHED / "biasfinder.csv"), 1)
    assert (last_bf.row, last_bf.column, last_bf.value, last_bf.line) == \
        ("country", "classes", 26.0, 11)
    assert (first_tox.table_id, first_tox.row, first_tox.column, first_tox.text,
            first_tox.unit, first_tox.note, first_tox.file, first_tox.line) == \
        ("toxicity-table3", "gender/albert/original", "FPR_gap", "0.001", "absolute gap", "",
         str(PUBLISHED / "toxicity_fairness.csv"), 1)


PUB_HEADER = "paper,table_id,row,column,value,unit,source,note\n"
#: one key per toxicity table that the table's resolver understands
KEYS = {"toxicity-table3": "gender/bert/balanced,FPR_gap",
        "toxicity-table4": "bert/pretrained,crows/gender",
        **{f"toxicity-table{n}": "gender/bert/baseline,AUC" for n in (5, 6, 7, 8)},
        "toxicity-table9": "bert/selection,FPR_gap",
        "toxicity-table10": "upstream-sentDebias,bert/gender",
        "toxicity-table12": "bert/baseline,gender", "toxicity-text-auc": "bert/baseline,AUC",
        "toxicity-text-fairness-sets": "original/all,n",
        "toxicity-text-metric-correlations": "original,FPR_gap~TPR_gap",
        "toxicity-figures-3-5": "baseline/all,n",
        "toxicity-appendix-sentiment": "dataset/sst-original/all,n"}


def _mini_published(d: Path, extra: str = "", tox_rows: str | None = None) -> Path:
    """A published folder with one cell per table (value 0.5) and ``extra`` toxicity rows."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "biasfinder.csv").write_text(
        PUB_HEADER + 'biasfinder,biasfinder-table4,gender,btc,14916,count,"Table 4",n\n',
        encoding="utf-8")
    if tox_rows is None:
        tox_rows = "".join(f"t,{tid},{KEYS[tid]},0.5,u,s,\n" for tid in pt.TABLE_IDS[1:])
    (d / "toxicity_fairness.csv").write_text(PUB_HEADER + tox_rows + extra, encoding="utf-8")
    return d


def test_published_values_are_stripped(tmp_path: Path) -> None:
    """Spaces around every field of a published row are dropped; lines count from 1."""
    pub = _mini_published(tmp_path, extra='t , toxicity-table3 , a/b , c ,  0.25 , u , s , n \n')
    cell = pt.read_published(pub)[-1]
    assert (cell.paper, cell.table_id, cell.row, cell.column, cell.text, cell.value, cell.unit,
            cell.source, cell.note, cell.line) == \
        ("t", "toxicity-table3", "a/b", "c", "0.25", 0.25, "u", "s", "n", 15)


def _published_error(tmp_path: Path, **kw) -> str:
    pub = _mini_published(tmp_path, **kw)
    with pytest.raises(DataError) as e:
        pt.read_published(pub)
    return str(e.value).replace(str(pub / "toxicity_fairness.csv"), "TOX")


@pytest.mark.parametrize(("extra", "message"), [
    (",toxicity-table3,a,c,1,u,s,\n", "TOX, row 15, column 'paper': empty value"),
    ("t,,a,c,1,u,s,\n", "TOX, row 15, column 'table_id': empty value"),
    ("t,toxicity-table3,,c,1,u,s,\n", "TOX, row 15, column 'row': empty value"),
    ("t,toxicity-table3,a,,1,u,s,\n", "TOX, row 15, column 'column': empty value"),
    ("t,toxicity-table3,a,c,,u,s,\n", "TOX, row 15, column 'value': empty value"),
    ("t,toxicity-table3,a,c,1,u,,\n", "TOX, row 15, column 'source': empty value"),
    ("t,biasfinder-table4,a,c,1,u,s,\n",
     "TOX, row 15, column 'table_id': unknown table id 'biasfinder-table4' (this file holds: "
     + ", ".join(pt.TABLE_IDS[1:]) + ")"),
    ("t,toxicity-table3,a,c,inf,u,s,\n", "TOX, row 15, column 'value': 'inf' is not a number"),
    ("t,toxicity-table3,a,c,x1,u,s,\n", "TOX, row 15, column 'value': 'x1' is not a number"),
    ("t,toxicity-table3,gender/bert/balanced,FPR_gap,2,u,s,\n",
     "TOX, row 15: cell toxicity-table3/gender/bert/balanced/FPR_gap is published twice (also "
     "TOX row 1)"),
])
def test_a_bad_published_row_is_named_by_file_row_and_column(tmp_path: Path, extra: str,
                                                             message: str) -> None:
    """Each required field, an unknown table id, a non-number and a repeated cell."""
    assert _published_error(tmp_path, extra=extra) == message


def test_a_published_file_without_one_of_its_tables_is_refused(tmp_path: Path) -> None:
    """Every table a published file holds needs at least one cell."""
    rows = "".join(f"t,{tid},{KEYS[tid]},0.5,u,s,\n" for tid in pt.TABLE_IDS[1:]
                   if tid != "toxicity-table9")
    assert _published_error(tmp_path, tox_rows=rows) == \
        "TOX: no published cell for table toxicity-table9"


def test_published_files_need_their_columns(tmp_path: Path) -> None:
    """A published file without the ``note`` column is refused."""
    pub = _mini_published(tmp_path)
    (pub / "biasfinder.csv").write_text("paper,table_id,row,column,value,unit,source\n",
                                        encoding="utf-8")
    with pytest.raises(DataError, match="column 'note': missing required column"):
        pt.read_published(pub)


def test_a_header_only_published_file_lacks_its_tables(tmp_path: Path) -> None:
    """An empty published file is read, then refused for its missing table."""
    pub = _mini_published(tmp_path)
    (pub / "biasfinder.csv").write_text(PUB_HEADER, encoding="utf-8")
    with pytest.raises(DataError) as e:
        pt.read_published(pub)
    assert str(e.value) == f"{pub / 'biasfinder.csv'}: no published cell for table " \
        "biasfinder-table4"


def test_study_read_indexes_every_file(world: pt.Results) -> None:
    """The report's gaps, SenseScores, dataset bias, sizes and groups, and the CSV tables."""
    s = world.toxicity
    assert s.directory == Path(world.paths["toxicity"]).parent
    assert s.gaps[("tiny-bert", "baseline", "balanced", "gender", "TPR_gap")] == (0.05, "")
    fpr = s.gaps[("hub-albert", "baseline", "original", "gender", "FPR_gap")]
    assert math.isnan(fpr[0]) and fpr[1] == "one class"
    assert len(s.gaps) == 18
    assert s.sense[("tiny-bert", "baseline", "gender")] == (0.7, "")
    race = s.sense[("tiny-bert", "baseline", "race")]
    assert math.isnan(race[0]) and race[1] == "no pair"
    assert s.dataset_bias[("baseline", "gender")]["overamplification"] == 1.5
    assert s.training_rows == {"baseline": 100, "downstream-perturbed-data": 120}
    assert s.fairness_rows == {"original": 40, "balanced": 80}
    assert s.attributes == ATTRS
    assert s.training_groups[("baseline", "female")]["n_positive"] == "5"
    assert len(s.training_groups) == 3
    assert {k: (r["model"], r["n"]) for k, r in s.fairness_groups.items()} == {
        ("original", "male"): ("hub-albert", "20"), ("original", "female"): ("hub-albert", "10"),
        ("balanced", "male"): ("hub-albert", "40"), ("balanced", "female"): ("hub-albert", "0")}
    assert s.correlations[("fairness_metrics", "all", "balanced", "TPR_gap", "FPR_gap")] == \
        (-0.75, "", 6.0, 0.08)
    rho, note, n, p = s.correlations[("fairness_metrics", "all", "balanced", "FPR_gap",
                                      "AUC_gap")]
    assert math.isnan(rho) and note == "constant" and n == 6 and math.isnan(p)


@pytest.mark.parametrize("drop", ["gaps", "sensescore", "dataset_bias", "training",
                                  "fairness_sets", "settings"])
def test_a_report_without_a_table_is_not_a_fairness_report(tmp_path: Path, drop: str) -> None:
    """Each missing part of report.json is named in one DataError."""
    report = _toxicity(tmp_path / "tox")
    data = json.loads(report.read_text(encoding="utf-8"))
    del data[drop]
    report.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as e:
        pt.Study.read(report)
    assert str(e.value) == f"{report}: not a fairness report (missing or bad '{drop}')"


def test_a_report_with_a_bad_row_count_is_not_a_fairness_report(tmp_path: Path) -> None:
    """A row count that is no integer is a DataError, not a traceback."""
    report = _toxicity(tmp_path / "tox")
    data = json.loads(report.read_text(encoding="utf-8"))
    data["fairness_sets"]["original"]["rows"] = "many"
    report.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match="not a fairness report \\(missing or bad invalid "):
        pt.Study.read(report)
    data["fairness_sets"]["original"]["rows"] = None
    report.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match="not a fairness report \\(missing or bad int"):
        pt.Study.read(report)


@pytest.mark.parametrize(("name", "column"), [("group_metrics.csv", "positives"),
                                              ("training_groups.csv", "positive_ratio"),
                                              ("correlations.csv", "note"),
                                              ("correlations.csv", "p_cluster")])
def test_a_study_file_without_a_column_is_refused(tmp_path: Path, name: str,
                                                  column: str) -> None:
    """Each CSV file beside report.json needs its columns."""
    report = _toxicity(tmp_path / "tox")
    path = report.parent / name
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    i = header.index(column)
    path.write_text("\n".join(",".join(x.split(",")[:i] + x.split(",")[i + 1:])
                              for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        pt.Study.read(report)
    assert str(e.value).startswith(f"{path}, column '{column}': missing required column")


def test_header_only_study_files_are_empty_tables(tmp_path: Path) -> None:
    """CSV files with a header and no rows index nothing."""
    report = _toxicity(tmp_path / "tox")
    for name in ("group_metrics.csv", "training_groups.csv", "correlations.csv"):
        path = report.parent / name
        path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n",
                        encoding="utf-8")
    s = pt.Study.read(report)
    assert (s.fairness_groups, s.training_groups, s.correlations) == ({}, {}, {})


def test_read_results_reads_only_what_was_given(world: pt.Results, tmp_path: Path) -> None:
    """Each result input is read when given, and its path recorded."""
    res = pt.read_results(SETTINGS)
    assert (res.biasfinder, res.toxicity, res.sentiment, res.representation,
            res.classification, res.paths) == (None, None, None, None, None, {})
    assert res.settings is SETTINGS
    assert set(world.paths) == {"biasfinder", "toxicity", "sentiment", "representation",
                                "classification"}
    d = Path(world.paths["toxicity"]).parent.parent
    assert world.paths == {"biasfinder": str(d / "table4.csv"),
                           "toxicity": str(d / "tox" / "report.json"),
                           "sentiment": str(d / "sent" / "report.json"),
                           "representation": str(d / "representation.csv"),
                           "classification": str(d / "classification.json")}
    assert world.sentiment.training_rows == {"imdb-gendered": 500}
    assert world.biasfinder[("tiny-bert", "baseline", "gender")]["btc"] == "30"
    assert world.representation[("big-roberta", "sentdebias-gender", "race", "stereoset")] \
        == 61.5
    assert math.isnan(world.representation[("tiny-bert", "pretrained", "gender", "crows")])
    # a record without "set" is the test split's
    assert world.classification[("sentiment", "tiny-bert", "imdb-gendered", "test")] == 0.91
    assert math.isnan(world.classification[("toxicity", "tiny-bert",
                                            "upstream-sentDebias-gender", "fairness-balanced")])
    assert len(world.classification) == len(CLASSIFICATION)


@pytest.mark.parametrize(("data", "why"), [
    ([{"task": "t", "model": "m", "method": "b"}], "'roc_auc'"),
    ([1], "'int' object is not subscriptable"),
    ([{"task": "t", "model": "m", "method": "b", "roc_auc": "high"}],
     "could not convert string to float: 'high'"),
])
def test_bad_classification_records_are_one_error(tmp_path: Path, data, why: str) -> None:
    """Records without ``roc_auc``, not records, or with a non-number."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as e:
        pt.read_results(SETTINGS, classification=path)
    assert str(e.value) == f"{path}: expected a list of task/model/method/set/roc_auc " \
        f"records ({why})"


@pytest.mark.parametrize(("option", "columns"), [
    ("biasfinder", ["model", "method", "characteristic", "templates"]),
    ("representation", ["model", "variant", "attribute", "source"]),
])
def test_result_tables_need_their_columns(tmp_path: Path, option: str, columns) -> None:
    """BiasFinder and representation tables need their columns."""
    path = tmp_path / "t.csv"
    _write_csv(path, columns, [tuple("x" for _ in columns)])
    with pytest.raises(DataError, match="missing required column"):
        pt.read_results(SETTINGS, **{option: path})


def test_result_tables_are_comma_separated_whatever_their_name(tmp_path: Path) -> None:
    """Our result tables are read as CSV, not by their suffix."""
    path = _representation(tmp_path / "representation.tsv")
    res = pt.read_results(SETTINGS, representation=path)
    assert res.representation[("big-roberta", "pretrained", "religion", "seat")] == 0.42


def test_header_only_result_tables_hold_nothing(tmp_path: Path) -> None:
    """Header-only result tables are empty, and their paths are recorded."""
    bf, rep = tmp_path / "bf.csv", tmp_path / "rep.csv"
    _write_csv(bf, BIASFINDER_FIELDS, [])
    _write_csv(rep, ["model", "variant", "attribute", "source", "value"], [])
    res = pt.read_results(SETTINGS, biasfinder=bf, representation=rep)
    assert (res.biasfinder, res.representation) == ({}, {})
    assert res.paths == {"biasfinder": str(bf), "representation": str(rep)}


# ---------------------------------------------------------------- the configuration


def test_models_and_methods_come_from_the_settings() -> None:
    """The line-up of each task, and BiasFinder's own methods when given."""
    assert pt._models(SETTINGS, "representation.models") == ["big-roberta", "tiny-bert"]
    assert pt._models(SETTINGS, "models.tasks.sentiment") == ["tiny-bert", "big-roberta"]
    assert pt._methods(SETTINGS, "toxicity") == TOX_METHODS
    # BiasFinder runs the sentiment methods unless biasfinder.methods names its own
    assert pt._methods(SETTINGS, "biasfinder") == SETTINGS["methods.tasks"]["sentiment"]
    assert pt._methods({**SETTINGS, "biasfinder.methods": None}, "biasfinder") == \
        SETTINGS["methods.tasks"]["sentiment"]
    assert pt._methods({**SETTINGS, "biasfinder.methods": ("x",)}, "biasfinder") == ["x"]


@pytest.mark.parametrize(("settings", "call", "message"), [
    ({}, lambda s: pt._models(s, "models.tasks.toxicity"),
     "--settings: 'models.tasks.toxicity' must be a list of model names"),
    ({"models.tasks": {"toxicity": "tiny-bert"}}, lambda s: pt._models(s, "models.tasks.toxicity"),
     "--settings: 'models.tasks.toxicity' must be a list of model names"),
    ({"representation.models": "x"}, lambda s: pt._models(s, "representation.models"),
     "--settings: 'representation.models' must be a list of model names"),
    ({}, lambda s: pt._methods(s, "biasfinder"),
     "--settings: 'methods.tasks.sentiment' must be a list of methods"),
    ({"methods.tasks": {"toxicity": "baseline"}}, lambda s: pt._methods(s, "toxicity"),
     "--settings: 'methods.tasks.toxicity' must be a list of methods"),
    ({**SETTINGS, "models.tasks": {"toxicity": ["gpt"]}},
     lambda s: pt._model(pt.Results(settings=s), "models.tasks.toxicity", "bert", pt.Ours()),
     "--settings: 'models.tasks.toxicity' names 'gpt', which models.registry lacks"),
    ({"models.tasks": {"toxicity": ["gpt"]}},
     lambda s: pt._model(pt.Results(settings=s), "models.tasks.toxicity", "bert", pt.Ours()),
     "--settings: 'models.tasks.toxicity' names 'gpt', which models.registry lacks"),
])
def test_a_bad_setting_is_a_config_error(settings, call, message: str) -> None:
    """A line-up that is no list, or names a model the registry lacks."""
    with pytest.raises(ConfigError) as e:
        call(settings)
    assert str(e.value) == message


@pytest.mark.parametrize(("entry", "stand_in"), [
    ({"source": "hub", "id": "google-bert/bert-base-uncased"}, "no"),
    ({"source": "hub", "id": "bert-base-uncased"}, "no"),
    # the id's last part names the checkpoint
    ({"source": "hub", "id": "mirror/google-bert/bert-base-uncased"}, "no"),
    ({"source": "hub", "id": "org/bert-base-uncased-finetuned"}, "yes"),
    ({"source": "hub"}, "yes"),
    ({"source": "local", "id": "google-bert/bert-base-uncased"}, "yes"),
    ({"id": "google-bert/bert-base-uncased"}, "yes"),
])
def test_only_a_hub_model_with_the_papers_checkpoint_is_not_a_stand_in(entry,
                                                                        stand_in: str) -> None:
    """The first model of the architecture; the paper's checkpoint only from the Hub."""
    settings = {"models.registry": {"other": {"architecture": "albert"},
                                    "mine": {"architecture": "bert", **entry},
                                    "later": {"architecture": "bert", "source": "x"}},
                "models.tasks": {"toxicity": ["other", "mine", "later"]}}
    ours = pt.Ours()
    assert pt._model(pt.Results(settings=settings), "models.tasks.toxicity", "bert", ours) \
        == "mine"
    assert (ours.paper_model, ours.our_model, ours.our_source, ours.stand_in) == \
        ("BERT", "mine", entry.get("source", ""), stand_in)


def test_no_model_of_the_architecture_says_which_were_configured() -> None:
    """The reason lists the configured models, or says none."""
    ours = pt.Ours()
    with pytest.raises(pt._NoCell) as e:
        pt._model(pt.Results(settings={"models.tasks": {"toxicity": []}}),
                  "models.tasks.toxicity", "roberta", ours)
    assert str(e.value) == "not run: no roberta model among this configuration's " \
        "models.tasks.toxicity (none), so nothing stands for roberta-base"
    assert (ours.paper_model, ours.our_model) == ("RoBERTa", "")


def test_the_biasfinder_training_note(world: pt.Results) -> None:
    """Our BERT's sentiment training setting, from a dotted or a nested named setting, and
    whether it is how BiasFinder's published model was fine-tuned."""
    bert4doc = {"epochs": 5, "batch_size": 24, "learning_rate": 2e-5, "max_length": 128,
                "warmup_steps": 0, "weight_decay": 0.01, "early_stopping_patience": None,
                "eval_fraction": 0.0, "truncation_side": "left"}
    close = {**bert4doc, "epochs": 4, "truncation_side": "right"}
    settings = {**SETTINGS, "models.training.sentiment": "close",
                "models.training.named.close": close,
                "models.training": {"named": {"bert4doc": bert4doc}}}
    res = pt.Results(settings=settings)
    assert pt._biasfinder_training(res, "tiny-bert") == (
        "ours fine-tuned with setting 'close': lr 2e-05, batch 24, 4 epochs, max_length 128 "
        "keeping the head, no early stopping: NOT as the published model (BiasFinder v1, "
        "BERT4doc: lr 2e-05, batch 24, 5 epochs, max_length 128 keeping the tail, no early "
        "stopping); differs in epochs, truncation_side")
    own = {**settings, "models.registry": {"tiny-bert": {
        "architecture": "bert", "training": {"sentiment": "bert4doc"}}}}
    assert pt._biasfinder_training(pt.Results(settings=own), "tiny-bert") == (
        "ours fine-tuned with setting 'bert4doc': lr 2e-05, batch 24, 5 epochs, max_length 128 "
        "keeping the tail, no early stopping: as the published model (BiasFinder v1, "
        "BERT4doc)")
    unknown = {**settings, "models.training.sentiment": "nope"}
    assert pt._biasfinder_training(pt.Results(settings=unknown), "tiny-bert") == (
        "ours: training setting unknown (config key 'models.training.sentiment': 'nope' is "
        "not in 'models.training.named' (named: bert4doc, close))")
    assert pt._biasfinder_training(world, "tiny-bert") == ""
    # a model without a registry entry fine-tunes with the task's setting
    assert pt._biasfinder_training(res, "unlisted").startswith(
        "ours fine-tuned with setting 'close': lr 2e-05, batch 24, 4 epochs")
    own_unknown = {**settings, "models.registry": {"tiny-bert": {
        "architecture": "bert", "training": {"sentiment": "nope"}}}}
    assert pt._biasfinder_training(pt.Results(settings=own_unknown), "tiny-bert") == (
        "ours: training setting unknown (config key 'models.registry.tiny-bert.training."
        "sentiment': 'nope' is not in 'models.training.named' (named: bert4doc, close))")
    short = {**settings, "models.training.named.close": {"epochs": 1}}
    assert pt._biasfinder_training(pt.Results(settings=short), "tiny-bert").startswith(
        "ours: training setting unknown (training settings of tiny-bert for sentiment lack "
        "batch_size, ")


# ------------------------------------------------------------------ our side of cells


def _check_value(ours: pt.Ours, value: float) -> None:
    assert ours.reason == "" and ours.value == pytest.approx(value, rel=1e-12), ours


CELLS = [
    # Table 3: the baseline's gaps on either set
    ("toxicity-table3", "gender/bert/balanced", "FPR_gap", 0.02),
    ("toxicity-table3", "gender/bert/original", "TPR_gap", 0.06),
    ("toxicity-table3", "gender/albert/balanced", "AUC_gap", 0.3),
    # Table 4: CrowS-Pairs and StereoSet from percent to fractions, SEAT as it is
    ("toxicity-table4", "roberta/pretrained", "crows/gender", 0.55),
    ("toxicity-table4", "roberta/sentdebias-gender", "stereoset/race", 0.615),
    ("toxicity-table4", "roberta/pretrained", "seat/religion", 0.42),
    # Tables 5-8: the balanced set's AUC and gaps
    ("toxicity-table5", "gender/bert/baseline", "AUC", 0.8),
    ("toxicity-table8", "gender/bert/upstream-sentDebias-gender", "TPR_gap", 0.04),
    ("toxicity-table6", "gender/albert/baseline", "FPR_gap", 0.1),
    ("toxicity-table9", "bert/selection", "FPR_gap", 0.5),
    # Table 10: 1 only when all three gaps are below the baseline's (a tie is not)
    ("toxicity-table10", "upstream-sentDebias", "bert/gender", 1.0),
    ("toxicity-table10", "downstream-perturbed-data", "bert/gender", 0.0),
    ("toxicity-table12", "bert/baseline", "gender", 0.7),
    ("toxicity-text-auc", "bert/baseline", "AUC", 0.9),
    ("toxicity-text-fairness-sets", "original/all", "n", 40.0),
    ("toxicity-text-fairness-sets", "balanced/all", "n", 80.0),
    ("toxicity-text-fairness-sets", "original/male", "n", 20.0),
    ("toxicity-text-fairness-sets", "original/female", "positive_ratio", 0.4),
    ("toxicity-text-fairness-sets", "balanced/male", "positive_ratio", 0.25),
    ("toxicity-text-metric-correlations", "original", "FPR_gap~TPR_gap", 0.25),
    # stored the other way round
    ("toxicity-text-metric-correlations", "balanced", "FPR_gap~TPR_gap", -0.75),
    ("toxicity-figures-3-5", "baseline/gender", "selection", 0.04),
    ("toxicity-figures-3-5", "baseline/gender", "overamplification_raw", 10.0),
    ("toxicity-figures-3-5", "baseline/gender", "overamplification", 1.5),
    ("toxicity-figures-3-5", "baseline/all", "n", 100.0),
    ("toxicity-figures-3-5", "downstream-perturbed-data/all", "n", 120.0),
    ("toxicity-figures-3-5", "downstream-perturbed-data/male", "positive_ratio", 0.25),
    ("toxicity-figures-3-5", "baseline/female", "positive_ratio", 0.5),
    # the appendix's IMDB-gendered AUC: on IMDB-gendered's test split, not IMDB's (0.91)
    ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC", 0.93),
    ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC/sst-original", 0.71),
    ("toxicity-appendix-sentiment", "model/bert/downstream-perturbed-data", "SenseScore", 0.33),
    # IMDB-gendered's training split: male 300 of 500 (nonbinary has no training group)
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/male", "share", 0.6),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/female", "positive_ratio", 0.55),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/gender", "selection", 0.02),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/gender", "overamplification_share",
     0.15),
    ("toxicity-appendix-sentiment", "dataset/sst-original/all", "n", 50.0),
    # the SST set: male 30, female 20, nonbinary 6
    ("toxicity-appendix-sentiment", "dataset/sst-original/male", "share", 30 / 56),
    ("toxicity-appendix-sentiment", "dataset/sst-original/male", "n", 30.0),
    ("toxicity-appendix-sentiment", "dataset/sst-original/female", "positive_ratio", 0.75),
    # marginalized mean ratio (15/20 + 1/6) / 2 = 11/24, male 12/30 = 0.4
    ("toxicity-appendix-sentiment", "dataset/sst-original/gender", "selection", 11 / 24 - 0.4),
    # sizes: (20 + 6) / 2 = 13 against 30, over the set's 50 rows
    ("toxicity-appendix-sentiment", "dataset/sst-original/gender", "overamplification_share",
     17 / 50),
]


@pytest.mark.parametrize(("tid", "row", "column", "value"), CELLS)
def test_our_value_of_each_kind_of_cell(world: pt.Results, tid: str, row: str, column: str,
                                        value: float) -> None:
    """Our value of one cell per table and measure, from the inputs above."""
    _check_value(_ours(world, tid, row, column), value)


def test_the_models_behind_a_cell(world: pt.Results) -> None:
    """The paper's model, ours, its source and whether it is a stand-in."""
    ours = _ours(world, "toxicity-table3", "gender/bert/balanced", "FPR_gap")
    assert (ours.paper_model, ours.our_model, ours.our_source, ours.stand_in, ours.note) == \
        ("BERT", "tiny-bert", "embedded", "yes", "")
    ours = _ours(world, "toxicity-table3", "gender/albert/balanced", "AUC_gap")
    assert (ours.paper_model, ours.our_model, ours.our_source, ours.stand_in) == \
        ("ALBERT", "hub-albert", "hub", "no")
    ours = _ours(world, "toxicity-table4", "roberta/pretrained", "seat/religion")
    assert (ours.paper_model, ours.our_model, ours.our_source, ours.stand_in, ours.note) == \
        ("RoBERTa", "big-roberta", "hub", "yes", "")


NOTES = [
    ("toxicity-table4", "roberta/pretrained", "crows/gender",
     "ours: CrowS-Pairs and StereoSet scores in percent, divided by 100"),
    ("toxicity-table5", "gender/bert/baseline", "AUC",
     "ours: ROC-AUC on the balanced fairness set: the baseline rows' gaps in Tables 5-8 are "
     "Table 3's balanced-set gaps, the paper measures on the balanced set from §5.2 on, and "
     "these AUCs (0.847/0.830/0.851) are well below §4.2's test-split AUCs"),
    ("toxicity-text-auc", "bert/baseline", "AUC",
     "ours: ROC-AUC on the test split: §4.2 reports the fine-tuned models' classification "
     "results before any fairness set is introduced"),
    ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC",
     "ours: ROC-AUC on IMDB-gendered's test split (the appendix scores the models trained "
     "on IMDB-gendered on it)"),
    ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC/sst-original",
     "ours: ROC-AUC on the SST sentiment-fairness set as published (the appendix scores the "
     "IMDB-gendered models on it)"),
    ("toxicity-table10", "upstream-sentDebias", "bert/gender",
     "ours: 1 when all three gaps of the method are below the baseline's (balanced set, "
     "unrounded)"),
    ("toxicity-text-fairness-sets", "original/male", "n", ""),
    ("toxicity-appendix-sentiment", "dataset/sst-original/male", "share",
     "ours: share among the attribute's groups"),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/male", "share",
     "ours: IMDB-gendered's training split"),
    ("toxicity-appendix-sentiment", "dataset/sst-original/gender", "overamplification_share",
     "ours: |N_m - N_f| / N over the fairness set (footnote 9)"),
    ("toxicity-appendix-sentiment", "dataset/sst-original/gender", "selection", ""),
    ("toxicity-figures-3-5", "downstream-perturbed-data/all", "n", "ours: perturbed: all rows"),
    ("toxicity-figures-3-5", "baseline/all", "n", ""),
    # the note is set before the missing training set is found
    ("toxicity-figures-3-5", "downstream-perturbed-stratified-data/all", "n",
     "ours: perturbed: all rows"),
    ("toxicity-figures-3-5", "downstream-perturbed-data/male", "positive_ratio", ""),
]


@pytest.mark.parametrize(("tid", "row", "column", "note"), NOTES)
def test_the_note_of_a_cell(world: pt.Results, tid: str, row: str, column: str,
                            note: str) -> None:
    """What each cell's note says about our value (or nothing)."""
    assert _ours(world, tid, row, column).note == note


def test_selection_note_names_only_rows_other_than_single_identity() -> None:
    """Which rows the debiased training sets perturbed and re-stratified."""
    both = {"perturbation.select": "all", "perturbation.restratify.select": "toxic"}
    assert pt._selection_note(both, "downstream-perturbed-stratified-data") == \
        "ours: perturbed: all rows; re-stratified: toxic rows"
    assert pt._selection_note(both, "downstream-stratified-data") == \
        "ours: re-stratified: toxic rows"
    assert pt._selection_note(both, "baseline") == ""
    assert pt._selection_note({"perturbation.select": "single_identity"},
                              "downstream-perturbed-stratified-data") == ""


TOX, SENT = "{tox}", "{sent}"
REASONS = [
    ("toxicity-table3", "gender/roberta/balanced", "FPR_gap",
     "not run: no roberta model among this configuration's models.tasks.toxicity (tiny-bert, "
     "hub-albert), so nothing stands for roberta-base"),
    ("toxicity-table3", "race/bert/balanced", "FPR_gap",
     f"no balanced-set gaps of tiny-bert/baseline for race in {TOX}/report.json"),
    ("toxicity-table3", "gender/albert/original", "FPR_gap", "undefined in our results: one class"),
    ("toxicity-table3", "gender/albert/original", "TPR_gap", "undefined in our results"),
    ("toxicity-table4", "bert/pretrained", "crows/gender", "undefined in our results"),
    ("toxicity-table4", "albert/pretrained", "crows/gender",
     "not run: no albert model among this configuration's representation.models (big-roberta, "
     "tiny-bert), so nothing stands for albert-base-v2"),
    ("toxicity-table4", "roberta/pretrained", "crows/race",
     "no result for big-roberta/pretrained/race in {representation}"),
    ("toxicity-table5", "gender/bert/upstream-sentDebias-race", "AUC",
     "not run: method upstream-sentDebias-race is not in this configuration's "
     "methods.tasks.toxicity"),
    ("toxicity-table7", "gender/bert/downstream-sentDebias-gender", "AUC",
     "no result for toxicity/tiny-bert/downstream-sentDebias-gender in {classification}"),
    ("toxicity-table5", "gender/bert/upstream-sentDebias-gender", "AUC",
     "undefined in our results"),
    ("toxicity-table6", "race/bert/downstream-stratified-data", "FPR_gap",
     f"no balanced-set gaps of tiny-bert/downstream-stratified-data for race in "
     f"{TOX}/report.json"),
    ("toxicity-table9", "bert/overamplification", "FPR_gap",
     f"no correlation of overamplification with the gaps of tiny-bert in {TOX}/correlations.csv"),
    ("toxicity-table9", "bert/selection", "TPR_gap", "undefined in our results: constant"),
    ("toxicity-table10", "downstream-stratified-data", "bert/gender",
     f"no balanced-set gaps of tiny-bert/downstream-stratified-data for gender in "
     f"{TOX}/report.json"),
    ("toxicity-table10", "upstream-sentDebias-downstream-all-data-debias", "bert/gender",
     "not run: method upstream-sentDebias-gender-downstream-all-data-debias is not in this "
     "configuration's methods.tasks.toxicity"),
    ("toxicity-table12", "bert/baseline", "race", "undefined in our results: no pair"),
    ("toxicity-table12", "bert/baseline", "religion",
     f"no SenseScore of tiny-bert/baseline in {TOX}/report.json"),
    ("toxicity-text-auc", "albert/baseline", "AUC",
     "no result for toxicity/hub-albert/baseline in {classification}"),
    ("toxicity-text-fairness-sets", "balanced/female", "positive_ratio",
     "undefined in our results"),
    ("toxicity-text-fairness-sets", "balanced/white", "positive_ratio",
     f"no group white of the balanced fairness set in {TOX}/group_metrics.csv"),
    ("toxicity-text-metric-correlations", "balanced", "FPR_gap~AUC_gap",
     "undefined in our results: constant"),
    ("toxicity-text-metric-correlations", "original", "TPR_gap~AUC_gap",
     f"no correlation of TPR_gap and AUC_gap on the original set in {TOX}/correlations.csv"),
    ("toxicity-figures-3-5", "baseline/race", "selection",
     "undefined in our results: no positives"),
    ("toxicity-figures-3-5", "baseline/religion", "selection", "undefined in our results"),
    ("toxicity-figures-3-5", "downstream-stratified-data/gender", "selection",
     f"no dataset bias for downstream-stratified-data/gender in {TOX}/report.json"),
    ("toxicity-figures-3-5", "downstream-perturbed-stratified-data/all", "n",
     f"no training set of downstream-perturbed-stratified-data in {TOX}/report.json"),
    ("toxicity-figures-3-5", "downstream-perturbed-data/female", "positive_ratio",
     f"no group female of downstream-perturbed-data's training set in "
     f"{TOX}/training_groups.csv"),
    ("toxicity-figures-3-5", "imdb-gendered/all", "n",
     "not run: method imdb-gendered is not in this configuration's methods.tasks.toxicity"),
    ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "SenseScore",
     f"no SenseScore of tiny-bert/imdb-gendered in {SENT}/report.json"),
    ("toxicity-appendix-sentiment", "model/roberta/imdb-gendered", "AUC",
     "no result for sentiment/big-roberta/imdb-gendered in {classification}"),
    ("toxicity-appendix-sentiment", "model/albert/imdb-gendered", "AUC",
     "not run: no albert model among this configuration's models.tasks.sentiment (tiny-bert, "
     "big-roberta), so nothing stands for albert-base-v2"),
    ("toxicity-appendix-sentiment", "model/bert/baseline", "AUC",
     "no result for sentiment/tiny-bert/baseline in {classification}"),
    ("toxicity-appendix-sentiment", "model/bert/upstream-sentDebias-gender", "AUC",
     "not run: method upstream-sentDebias-gender is not in this configuration's "
     "methods.tasks.sentiment"),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/all", "n",
     "not compared: the fairness report records only IMDB-gendered's training split (500 "
     "rows), the paper the whole set"),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/nonbinary", "positive_ratio",
     f"no group nonbinary of imdb-gendered's training set in {SENT}/training_groups.csv"),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/race", "selection",
     f"no dataset bias for imdb-gendered/race in {SENT}/report.json"),
    ("toxicity-appendix-sentiment", "dataset/sst-balanced/all", "n",
     f"no balanced fairness set in {SENT}/report.json"),
    ("toxicity-appendix-sentiment", "dataset/sst-balanced/female", "share",
     f"no group female of the balanced fairness set in {SENT}/group_metrics.csv"),
    ("toxicity-appendix-sentiment", "dataset/sst-balanced/gender", "selection",
     f"a gender group is missing from the balanced set in {SENT}/group_metrics.csv"),
    ("biasfinder-table4", "occupation", "classes",
     "our run generated no template of this characteristic, so no mutant shows its classes"),
    ("biasfinder-table4", "country", "classes",
     "our Table 4 has no class count for this characteristic (rerun `biasrepro biasfinder "
     "btc`)"),
    ("biasfinder-table4", "total", "btc", "undefined in our results"),
]


def _reason(world: pt.Results, text: str) -> str:
    return text.format(tox=Path(world.paths["toxicity"]).parent,
                       sent=Path(world.paths["sentiment"]).parent, **world.paths)


@pytest.mark.parametrize(("tid", "row", "column", "reason"), REASONS)
def test_the_reason_a_cell_has_no_value(world: pt.Results, tid: str, row: str, column: str,
                                        reason: str) -> None:
    """Every reason a cell has no value of ours, word for word."""
    ours = _ours(world, tid, row, column)
    assert (ours.value, ours.reason) == (None, _reason(world, reason))


def test_reasons_when_a_result_file_was_not_given() -> None:
    """A cell whose input was not given names the option."""
    res = pt.Results(settings=SETTINGS)
    expected = {
        ("toxicity-table3", "gender/bert/balanced", "FPR_gap"):
            "not produced: no toxicity fairness report was given (--toxicity)",
        ("toxicity-appendix-sentiment", "dataset/sst-original/all", "n"):
            "not produced: no sentiment fairness report was given (--sentiment)",
        ("toxicity-appendix-sentiment", "model/bert/downstream-perturbed-data", "SenseScore"):
            "not produced: no sentiment fairness report was given (--sentiment)",
        ("toxicity-table4", "bert/pretrained", "crows/gender"):
            "not produced: no representation result was given (--representation)",
        ("toxicity-text-auc", "bert/baseline", "AUC"):
            "not produced: no classification result was given (--classification)",
        ("biasfinder-table4", "gender", "btc"):
            "not produced: no biasfinder result was given (--biasfinder)",
    }
    for (tid, row, column), reason in expected.items():
        assert pt.resolve(_cell(tid, row, column), res).reason == reason


def test_biasfinder_cells_and_their_notes(world: pt.Results) -> None:
    """Counts and classes of BiasFinder Table 4, and the scale and training notes."""
    ours = _ours(world, "biasfinder-table4", "gender", "btc")
    _check_value(ours, 30.0)
    assert (ours.paper_model, ours.our_model, ours.stand_in) == ("BERT", "tiny-bert", "yes")
    assert ours.note == "ours, gender: BTC rate 0.0250 over 1,200 possible pairs between 2 " \
        "classes; word lists: original, occupation templates: first"
    _check_value(_ours(world, "biasfinder-table4", "gender", "classes"), 2.0)
    _check_value(_ours(world, "biasfinder-table4", "country", "templates"), 5.0)
    _check_value(_ours(world, "biasfinder-table4", "occupation", "templates"), 0.0)
    assert _ours(world, "biasfinder-table4", "country", "btc").note == (
        "ours, country-of-origin: BTC rate 0.0267 over 1,500 possible pairs between ? "
        "classes; word lists: original, occupation templates: first")
    assert _ours(world, "biasfinder-table4", "total", "templates").note == (
        "ours, total: BTC rate ? over ? possible pairs; word lists: ?, occupation templates: ?")
    # the training note comes first, the scale second, one NOTE_SEP between
    settings = {**SETTINGS, "models.training.sentiment": "nope"}
    res = pt.Results(settings=settings, biasfinder=world.biasfinder, paths=world.paths)
    note = pt.resolve(_cell("biasfinder-table4", "gender", "btc"), res).note
    assert note == ("ours: training setting unknown (config key 'models.training.sentiment': "
                    "'nope' is not in 'models.training.named' (named: none)) | ours, gender: "
                    "BTC rate 0.0250 over 1,200 possible pairs between 2 classes; word lists: "
                    "original, occupation templates: first")
    # the compared model's own training setting counts
    registry = {**SETTINGS["models.registry"],
                "tiny-bert": {"source": "embedded", "architecture": "bert",
                              "training": {"sentiment": "own"}}}
    res = pt.Results(settings={**settings, "models.registry": registry},
                     biasfinder=world.biasfinder, paths=world.paths)
    note = pt.resolve(_cell("biasfinder-table4", "gender", "btc"), res).note
    assert note.startswith("ours: training setting unknown (config key 'models.registry."
                           "tiny-bert.training.sentiment': 'own' is not in")


def test_biasfinder_classes_when_no_template_was_generated() -> None:
    """No templates, written as an integer or a float: no class count, and why."""
    for templates in ("0", "0.0", " 0 "):
        row = {"templates": templates, "classes": "", "btc": "0"}
        res = pt.Results(settings=SETTINGS,
                         biasfinder={("tiny-bert", "baseline", "country"): row})
        assert pt.resolve(_cell("biasfinder-table4", "country", "classes"), res).reason == \
            "our run generated no template of this characteristic, so no mutant shows its " \
            "classes"


def test_biasfinder_scale_of_a_row_without_its_columns() -> None:
    """Missing or empty scale columns print as '?'."""
    assert pt._biasfinder_scale("occupation", {}) == (
        "ours, occupation: BTC rate ? over ? possible pairs between ? classes; word lists: ?, "
        "occupation templates: ?")
    assert pt._biasfinder_scale("gender", {"btc_rate": None, "possible_pairs": None,
                                           "classes": None, "lists": None}) == (
        "ours, gender: BTC rate ? over ? possible pairs between ? classes; word lists: ?, "
        "occupation templates: ?")


def test_biasfinder_reasons_of_the_line_up(world: pt.Results) -> None:
    """BiasFinder cells without the baseline method, a BERT model or our row."""
    res = pt.Results(settings={**SETTINGS, "biasfinder.methods": ["other"]},
                     biasfinder=world.biasfinder, paths=world.paths)
    assert pt.resolve(_cell("biasfinder-table4", "gender", "btc"), res).reason == \
        "not run: method baseline is not in this configuration's biasfinder.methods"
    res = pt.Results(settings={**SETTINGS, "models.tasks": {"sentiment": ["big-roberta"]}},
                     biasfinder=world.biasfinder, paths=world.paths)
    assert pt.resolve(_cell("biasfinder-table4", "gender", "btc"), res).reason == (
        "not run: no bert model among this configuration's models.tasks.sentiment "
        "(big-roberta), so nothing stands for bert-base-uncased")
    res = pt.Results(settings=SETTINGS, biasfinder={}, paths=world.paths)
    assert pt.resolve(_cell("biasfinder-table4", "gender", "btc"), res).reason == \
        f"no result for tiny-bert/baseline/gender in {world.paths['biasfinder']}"


def test_a_missing_gender_side_is_no_cell(world: pt.Results) -> None:
    """Shares and selection need the gender groups of the report's settings."""
    study = world.sentiment
    bare = pt.Study(**{**study.__dict__, "attributes": {}})
    res = pt.Results(settings=SETTINGS, sentiment=bare, paths=world.paths)
    for row, column in (("dataset/sst-original/male", "share"),
                        ("dataset/sst-original/gender", "selection"),
                        ("dataset/imdb-gendered/male", "share")):
        assert pt.resolve(_cell("toxicity-appendix-sentiment", row, column), res).reason == \
            "attribute gender is not in the fairness report's settings"


def test_shares_of_groups_that_sum_to_nothing_are_undefined(world: pt.Results) -> None:
    """Groups of size 0: shares and the selection bias are undefined."""
    study = world.sentiment
    zero = {k: {**r, "n": "0"} for k, r in study.fairness_groups.items()}
    zero_training = {k: {**r, "n": "0"} for k, r in study.training_groups.items()}
    res = pt.Results(settings=SETTINGS, paths=world.paths, sentiment=pt.Study(
        **{**study.__dict__, "fairness_groups": zero, "training_groups": zero_training}))
    for row, column in (("dataset/sst-original/male", "share"),
                        ("dataset/sst-original/gender", "selection"),
                        ("dataset/imdb-gendered/male", "share")):
        assert pt.resolve(_cell("toxicity-appendix-sentiment", row, column), res).reason == \
            "undefined in our results"


BAD_KEYS = [
    ("toxicity-table3", "gender/bert", "FPR_gap", "row",
     "row key 'gender/bert' should have 3 '/'-separated parts"),
    ("toxicity-table3", "age/bert/balanced", "FPR_gap", "row",
     "unknown attribute 'age' in row key"),
    ("toxicity-table3", "gender/bert/test", "FPR_gap", "row",
     "unknown fairness set 'test' in row key"),
    ("toxicity-table3", "gender/bert/balanced", "F1", "column",
     "unknown metric 'F1' in column key"),
    ("toxicity-table3", "gender/gpt2/balanced", "FPR_gap", "row",
     "unknown model 'gpt2' in row key"),
    ("toxicity-table4", "bert/sentdebias-age", "crows/gender", "row",
     "unknown variant 'sentdebias-age' in row key"),
    ("toxicity-table4", "bert/pretrained", "wino/gender", "column",
     "unknown benchmark 'wino' in column key"),
    ("toxicity-table4", "bert/pretrained", "crows/age", "column",
     "unknown attribute 'age' in column key"),
    ("toxicity-table4", "bert/pretrained", "crows/gender/x", "column",
     "unknown attribute 'gender/x' in column key"),
    ("toxicity-table4", "gpt2/pretrained", "crows/gender", "row",
     "unknown model 'gpt2' in row key"),
    ("toxicity-table5", "gender/gpt2/baseline", "AUC", "row", "unknown model 'gpt2' in row key"),
    ("toxicity-table9", "gpt2/selection", "AUC_gap", "row", "unknown model 'gpt2' in row key"),
    ("toxicity-table12", "gpt2/baseline", "race", "row", "unknown model 'gpt2' in row key"),
    ("toxicity-text-auc", "gpt2/baseline", "AUC", "row", "unknown model 'gpt2' in row key"),
    ("toxicity-table10", "upstream-sentDebias", "bert/gender/x", "column",
     "unknown attribute 'gender/x' in column key"),
    ("toxicity-text-metric-correlations", "original", "FPR_gap~TPR_gap~AUC_gap", "column",
     "unknown metric 'TPR_gap~AUC_gap' in column key"),
    ("toxicity-table5", "age/bert/baseline", "AUC", "row", "unknown attribute 'age' in row key"),
    ("toxicity-table5", "gender/bert/finetuned", "AUC", "row",
     "unknown method 'finetuned' in row key"),
    ("toxicity-table5", "gender/bert/baseline", "F1", "column",
     "unknown metric 'F1' in column key"),
    ("toxicity-table9", "bert/coverage", "FPR_gap", "row",
     "unknown source of bias 'coverage' in row key"),
    ("toxicity-table9", "bert/selection", "F1", "column", "unknown metric 'F1' in column key"),
    ("toxicity-table10", "finetuning", "bert/gender", "row",
     "unknown debias approach 'finetuning'"),
    ("toxicity-table10", "upstream-sentDebias", "gpt2/gender", "column",
     "unknown model 'gpt2' in column key"),
    ("toxicity-table10", "upstream-sentDebias", "gpt2/age", "column",
     "unknown attribute 'age' in column key"),
    ("toxicity-table12", "bert/finetuned", "gender", "row",
     "unknown method 'finetuned' in row key"),
    ("toxicity-table12", "bert/baseline", "age", "column", "unknown attribute 'age' in column key"),
    ("toxicity-text-auc", "bert/finetuned", "AUC", "row", "unknown method 'finetuned' in row key"),
    ("toxicity-text-auc", "bert/baseline", "F1", "column", "unknown metric 'F1' in column key"),
    ("toxicity-text-fairness-sets", "test/all", "n", "row",
     "unknown fairness set 'test' in row key"),
    ("toxicity-text-fairness-sets", "original/all", "share", "column",
     "unknown measure 'share' in column key"),
    ("toxicity-text-fairness-sets", "original/all", "positive_ratio", "column",
     "unknown measure 'positive_ratio' in column key"),
    ("toxicity-text-metric-correlations", "test", "FPR_gap~TPR_gap", "row",
     "unknown fairness set 'test' in row key"),
    ("toxicity-text-metric-correlations", "original", "F1~TPR_gap", "column",
     "unknown metric 'F1' in column key"),
    ("toxicity-text-metric-correlations", "original", "FPR_gap~F1", "column",
     "unknown metric 'F1' in column key"),
    ("toxicity-figures-3-5", "finetuned/gender", "selection", "row",
     "unknown method 'finetuned' in row key"),
    ("toxicity-figures-3-5", "baseline/gender", "share", "column",
     "unknown measure 'share' in column key"),
    ("toxicity-figures-3-5", "baseline/all", "selection", "column",
     "unknown measure 'selection' in column key"),
    ("toxicity-appendix-sentiment", "model/bert", "AUC", "row",
     "row key 'model/bert' should be model/ARCH/METHOD or dataset/SET/PART"),
    ("toxicity-appendix-sentiment", "data/sst-original/all", "n", "row",
     "row key 'data/sst-original/all' should be model/ARCH/METHOD or dataset/SET/PART"),
    ("toxicity-appendix-sentiment", "dataset/sst-original", "n", "row",
     "row key 'dataset/sst-original' should be model/ARCH/METHOD or dataset/SET/PART"),
    ("toxicity-appendix-sentiment", "model/bert/finetuned", "AUC", "row",
     "unknown method 'finetuned' in row key"),
    ("toxicity-appendix-sentiment", "model/gpt2/baseline", "AUC", "row",
     "unknown model 'gpt2' in row key"),
    ("toxicity-appendix-sentiment", "model/bert/baseline", "F1", "column",
     "unknown measure 'F1' in column key"),
    ("toxicity-appendix-sentiment", "dataset/sst-test/all", "n", "row",
     "unknown data set 'sst-test'"),
    ("toxicity-appendix-sentiment", "dataset/sst-original/gender", "overamplification",
     "column", "unknown measure 'overamplification' in column key"),
    ("toxicity-appendix-sentiment", "dataset/sst-original/male", "rows", "column",
     "unknown measure 'rows' in column key"),
    ("toxicity-appendix-sentiment", "dataset/imdb-gendered/male", "rows", "column",
     "unknown measure 'rows' in column key"),
    ("biasfinder-table4", "age", "btc", "row", "unknown characteristic 'age' in row key"),
    ("biasfinder-table4", "gender", "mutants", "column", "unknown column 'mutants' in column key"),
]


@pytest.mark.parametrize(("tid", "row", "column", "where", "message"), BAD_KEYS)
def test_a_key_the_module_does_not_know_is_a_data_error(world: pt.Results, tid: str, row: str,
                                                        column: str, where: str,
                                                        message: str) -> None:
    """A malformed or unknown row or column key names the published file, row and column."""
    with pytest.raises(DataError) as e:
        pt.resolve(_cell(tid, row, column), world)
    assert str(e.value) == f"pub.csv, row 7, column '{where}': {tid}: {message}"


def test_every_published_key_is_understood(world: pt.Results) -> None:
    """Every published cell resolves against our results without an error, and the cells
    our results hold a value for are these."""
    with_value = sorted((c.table_id, c.row, c.column) for c in pt.read_published(PUBLISHED)
                        if pt.resolve(c, world).value is not None)
    assert with_value == sorted([
        ("biasfinder-table4", "country", "btc"), ("biasfinder-table4", "country", "templates"),
        ("biasfinder-table4", "gender", "btc"), ("biasfinder-table4", "gender", "classes"),
        ("biasfinder-table4", "gender", "templates"),
        ("biasfinder-table4", "occupation", "btc"),
        ("biasfinder-table4", "occupation", "templates"),
        ("biasfinder-table4", "total", "templates"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/female", "positive_ratio"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/female", "share"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/male", "positive_ratio"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/male", "share"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/gender", "selection"),
        ("toxicity-appendix-sentiment", "dataset/imdb-gendered/gender",
         "overamplification_share"),
        # the balanced SST set holds only male rows: 15 of 30 positive, all the set's rows
        ("toxicity-appendix-sentiment", "dataset/sst-balanced/male", "positive_ratio"),
        ("toxicity-appendix-sentiment", "dataset/sst-balanced/male", "share"),
        ("toxicity-appendix-sentiment", "dataset/sst-original/all", "n"),
        ("toxicity-appendix-sentiment", "dataset/sst-original/female", "positive_ratio"),
        ("toxicity-appendix-sentiment", "dataset/sst-original/female", "share"),
        ("toxicity-appendix-sentiment", "dataset/sst-original/male", "positive_ratio"),
        ("toxicity-appendix-sentiment", "dataset/sst-original/male", "share"),
        ("toxicity-appendix-sentiment", "model/bert/downstream-perturbed-data", "SenseScore"),
        ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC"),
        ("toxicity-appendix-sentiment", "model/bert/imdb-gendered", "AUC/sst-original"),
        ("toxicity-figures-3-5", "baseline/gender", "overamplification"),
        ("toxicity-figures-3-5", "baseline/gender", "overamplification_raw"),
        ("toxicity-figures-3-5", "baseline/gender", "selection"),
        ("toxicity-figures-3-5", "downstream-perturbed-data/all", "n"),
        ("toxicity-figures-3-5", "downstream-perturbed-data/male", "positive_ratio"),
        ("toxicity-table10", "downstream-perturbed-data", "bert/gender"),
        ("toxicity-table10", "upstream-sentDebias", "bert/gender"),
        ("toxicity-table12", "bert/baseline", "gender"),
        ("toxicity-table3", "gender/albert/balanced", "AUC_gap"),
        ("toxicity-table3", "gender/albert/balanced", "FPR_gap"),
        ("toxicity-table3", "gender/albert/balanced", "TPR_gap"),
        ("toxicity-table3", "gender/albert/original", "AUC_gap"),
        ("toxicity-table3", "gender/bert/balanced", "AUC_gap"),
        ("toxicity-table3", "gender/bert/balanced", "FPR_gap"),
        ("toxicity-table3", "gender/bert/balanced", "TPR_gap"),
        ("toxicity-table3", "gender/bert/original", "AUC_gap"),
        ("toxicity-table3", "gender/bert/original", "FPR_gap"),
        ("toxicity-table3", "gender/bert/original", "TPR_gap"),
        ("toxicity-table4", "roberta/pretrained", "crows/gender"),
        ("toxicity-table4", "roberta/pretrained", "seat/religion"),
        ("toxicity-table4", "roberta/sentdebias-gender", "stereoset/race"),
    ] + [(f"toxicity-table{n}", row, col) for n in (5, 6, 7, 8)
         for row, col in (("gender/albert/baseline", "AUC_gap"),
                          ("gender/albert/baseline", "FPR_gap"),
                          ("gender/albert/baseline", "TPR_gap"),
                          # the AUC is the model's, whatever the attribute
                          ("gender/bert/baseline", "AUC"), ("race/bert/baseline", "AUC"),
                          ("religion/bert/baseline", "AUC"),
                          ("gender/bert/baseline", "AUC_gap"),
                          ("gender/bert/baseline", "FPR_gap"),
                          ("gender/bert/baseline", "TPR_gap"))]
      + [("toxicity-table8", "gender/bert/upstream-sentDebias-gender", g) for g in pt.GAPS]
      + [("toxicity-table5", "gender/bert/upstream-sentDebias-gender", g) for g in pt.GAPS]
      + [("toxicity-table7", "gender/bert/downstream-perturbed-data", g) for g in pt.GAPS]
      + [("toxicity-table8", "gender/bert/downstream-perturbed-data", g) for g in pt.GAPS]
      + [("toxicity-table9", "bert/selection", "FPR_gap"),
         ("toxicity-text-auc", "bert/baseline", "AUC"),
         ("toxicity-text-fairness-sets", "balanced/all", "n"),
         ("toxicity-text-fairness-sets", "balanced/male", "positive_ratio"),
         ("toxicity-text-fairness-sets", "original/all", "n"),
         ("toxicity-text-fairness-sets", "original/female", "n"),
         ("toxicity-text-fairness-sets", "original/female", "positive_ratio"),
         ("toxicity-text-fairness-sets", "original/male", "n"),
         ("toxicity-text-fairness-sets", "original/male", "positive_ratio"),
         ("toxicity-text-metric-correlations", "balanced", "FPR_gap~TPR_gap"),
         ("toxicity-text-metric-correlations", "original", "FPR_gap~TPR_gap")])


# ------------------------------------------------------------------------ writing


@pytest.mark.parametrize(("x", "text"), [
    (None, ""), (0.0, "0"), (3.0, "3"), (-2.0, "-2"), (0.1234567, "0.123457"),
    (999999999999999.0, "999999999999999"), (1e15, "1e+15"), (-1e15, "-1e+15"),
    (2.5e-7, "2.5e-07"),
])
def test_csv_numbers(x, text: str) -> None:
    """Integers without a decimal point, others to 6 significant digits."""
    assert pt._csv_number(x) == text


@pytest.mark.parametrize(("x", "kw", "text"), [
    (0.0, {}, "0"), (0.0, {"sign": True}, "+0"), (12.0, {}, "12"), (10.0, {}, "10"),
    (-10.0, {}, "-10"), (12.0, {"sign": True}, "+12"), (-12.0, {"sign": True}, "-12"),
    (1234567.0, {}, "1,234,567"), (9.0, {}, "9.000"), (9.0, {"count": True}, "9"),
    (9.0, {"count": True, "sign": True}, "+9"), (-9.0, {}, "-9.000"),
    (1234.56, {}, "1,234.6"), (1234.56, {"sign": True}, "+1,234.6"), (100.5, {}, "100.5"),
    (-100.5, {}, "-100.5"), (99.5, {}, "99.500"), (0.0005, {}, "5.0e-04"),
    (-0.0005, {"sign": True}, "-5.0e-04"), (0.0005, {"sign": True}, "+5.0e-04"),
    (0.001, {}, "0.001"), (0.012345, {"sign": True}, "+0.012"), (-0.5, {}, "-0.500"),
])
def test_markdown_numbers(x: float, kw: dict, text: str) -> None:
    """Integers (counts always) with separators, large values to 1, tiny ones in e-notation."""
    assert pt._md_number(x, **kw) == text


@pytest.mark.parametrize(("part", "label"), [
    ("original", "Original"), ("gender", "Gender"), ("religion", "Religion"), ("bert", "BERT"),
    ("roberta", "RoBERTa"), ("sentdebias-race", "+ SentDebias-race"), ("btc", "#BTCs"),
    ("upstream-sentDebias-gender", "+ upstream-sentDebias-gender"),
    ("imdb-gendered", "IMDB-gendered"), ("baseline", "baseline"), ("FPR_gap", "FPR_gap"),
])
def test_labels(part: str, label: str) -> None:
    """The paper's wording of row and column key parts."""
    assert pt._label(part) == label


def _record(row: str, column: str, *, ours: str = "", published: str = "0.5",
            difference: str = "", reason: str = "", unit: str = "absolute gap",
            paper_model: str = "", our_model: str = "", our_source: str = "",
            stand_in: str = "", our_note: str = "", seeds: str = "1", sd: str = "",
            in_range: str = "") -> dict[str, str]:
    return {"table_id": "t", "row": row, "column": column, "paper_model": paper_model,
            "our_model": our_model, "our_source": our_source, "stand_in": stand_in,
            "ours": ours, "published": published, "difference": difference, "reason": reason,
            "unit": unit, "source": "s", "published_note": "", "our_note": our_note,
            "seeds": seeds if ours else "", "sd": sd, "min": "", "max": "",
            "published_in_range": in_range}


def test_markdown_of_a_single_run() -> None:
    """Title, models, notes, the table in published order and the numbered reasons."""
    records = [
        _record("gender/bert/balanced", "FPR_gap", ours="0.02", published="0.008",
                difference="0.012", paper_model="BERT", our_model="tiny-bert",
                our_source="embedded", stand_in="yes", our_note="ours: a | ours: b"),
        _record("gender/albert/balanced", "TPR_gap", published="0.081", reason="not run: x",
                paper_model="ALBERT"),
        _record("gender/bert/balanced", "TPR_gap", ours="0.05", published="0.05",
                difference="0", paper_model="BERT", our_model="tiny-bert",
                our_source="embedded", stand_in="yes", our_note="ours: b"),
        _record("race/roberta/original", "FPR_gap", published="0.006", reason="not run: x",
                paper_model="RoBERTa", our_model="hub-roberta", our_source="hub",
                stand_in="no"),
        _record("race/bert/original", "AUC_gap", published="0.1", reason="no gaps"),
    ]
    assert pt._markdown("toxicity-table3", records) == """\
# toxicity paper, Table 3: ours beside the published values

Toxicity paper, Table 3: FPR/TPR/AUC gaps of the baseline models on the original and the \
balanced fairness set. Each cell is *ours / published (ours − published)*; *n/a [k]* means \
this run has no value, for reason k below.

Models: BERT → tiny-bert (embedded stand-in); RoBERTa → hub-roberta (the paper's \
checkpoint). A stand-in is our model of the same architecture, not a reproduction of the \
paper's checkpoint.

- ours: a
- ours: b

| row | FPR_gap | TPR_gap | AUC_gap |
|---|---|---|---|
| Gender / BERT / Balanced | 0.020 / 0.008 (+0.012) | 0.050 / 0.05 (+0) |  |
| Gender / ALBERT / Balanced |  | n/a [1] / 0.081 |  |
| Race / RoBERTa / Original | n/a [1] / 0.006 |  |  |
| Race / BERT / Original |  |  | n/a [2] / 0.1 |

Reasons:

1. not run: x
2. no gaps
"""


def test_markdown_without_models_notes_or_reasons() -> None:
    """Only the title, the description and the table; '~' reads 'vs'."""
    records = [_record("original", "FPR_gap~TPR_gap", ours="0.25", published="0.5",
                       difference="-0.25")]
    assert pt._markdown("toxicity-text-metric-correlations", records) == """\
# toxicity paper, §5.2 text: ours beside the published values

Toxicity paper, §5.2 text: Pearson rho between the fairness metrics. Each cell is *ours / \
published (ours − published)*; *n/a [k]* means this run has no value, for reason k below.

| row | FPR_gap vs TPR_gap |
|---|---|
| Original | 0.250 / 0.5 (-0.250) |
"""


def test_markdown_of_counts_over_seeds() -> None:
    """Counts print as integers with separators; several seeds as mean ± sd with whether
    the published value lies in our range."""
    records = [
        _record("gender", "btc", ours="1500", published="14916", difference="-13416",
                unit="count", seeds="3", sd="12.5", in_range="no"),
        _record("gender", "templates", ours="3057.5", published="3057", difference="0.5",
                unit="count", seeds="3", sd="2", in_range="yes"),
        _record("total", "btc", ours="20", published="129598", difference="-129578",
                unit="count"),
        _record("total", "templates", published="14268", unit="count", reason="none"),
        _record("country", "classes", ours="1", published="2", difference="-1", unit="count"),
    ]
    assert pt._markdown("biasfinder-table4", records).split("\n")[4:] == [
        "Ours is the mean ± sd (n − 1) over 3 fine-tuning seeds; *in range* says the "
        "published value lies between our lowest and highest seed.", "",
        "| row | #BTCs | #Templates | #Classes |", "|---|---|---|---|",
        "| Gender | 1,500 ± 12.500 / 14,916 (-13,416; outside range) | "
        "3,057.5 ± 2.000 / 3,057 (+0.500; in range) |  |",
        "| Total | 20 / 129,598 (-129,578) | n/a [1] / 14,268 |  |",
        "| Country-of-Origin |  |  | 1 / 2 (-1) |", "",
        "Reasons:", "", "1. none", ""]


def test_markdown_of_table10_flags() -> None:
    """Table 10 prints ticks and crosses, and in how many seeds the approach lowers all gaps."""
    records = [
        _record("upstream-sentDebias", "bert/gender", ours="1", published="0", difference="1",
                unit="flag"),
        _record("upstream-sentDebias", "bert/race", ours="0", published="0", difference="0",
                unit="flag"),
        _record("downstream-perturbed-data", "bert/gender", ours="0.6666666666666666",
                published="1", difference="-0.333333", unit="flag", seeds="3", sd="0.57735",
                in_range="yes"),
        _record("downstream-perturbed-data", "bert/race", published="1", unit="flag",
                reason="not run"),
    ]
    lines = pt._markdown("toxicity-table10", records).split("\n")
    assert lines[4] == "Ours is the mean ± sd (n − 1) over 3 fine-tuning seeds; *in range* " \
        "says the published value lies between our lowest and highest seed."
    assert lines[6:10] == [
        "| row | BERT Gender | BERT Race |", "|---|---|---|",
        "| upstream-sentDebias | ✓ / ✗ (differs) | ✗ / ✗ (same) |",
        "| + downstream-perturbed-data | ✓ in 2/3 seeds / ✓ | n/a [1] / ✓ |"]


def test_markdown_seed_counts_are_listed_once_each() -> None:
    """Different seed counts are listed once each, sorted."""
    records = [_record("gender", "btc", ours="2", published="3", difference="-1",
                       seeds="2", sd="1", in_range="yes"),
               _record("race", "btc", ours="2", published="3", difference="-1",
                       seeds="3", sd="1", in_range="yes"),
               _record("religion", "btc", ours="2", published="3", difference="-1",
                       seeds="2", sd="1", in_range="yes")]
    assert "over 2, 3 fine-tuning seeds;" in pt._markdown("toxicity-table12", records)


def test_index_counts_the_cells_compared() -> None:
    """One line per table: links, title and how many cells have a value of ours."""
    tables = {"toxicity-table3": [_record("a", "b", ours="1"), _record("a", "c", reason="r")],
              "toxicity-table9": [_record("a", "b", reason="r")]}
    assert pt._index(tables) == """\
# The papers' tables, ours beside the published values

Each table as Markdown (the paper's shape) and CSV (one row per published cell); published \
values from `published/` (see its README).

- [toxicity-table3](toxicity-table3.md) ([csv](toxicity-table3.csv)): toxicity paper, \
Table 3, FPR/TPR/AUC gaps of the baseline models on the original and the balanced fairness \
set; 1 of 2 cells compared
- [toxicity-table9](toxicity-table9.md) ([csv](toxicity-table9.csv)): toxicity paper, \
Table 9, Pearson rho between each source of bias and each fairness gap, per model, over the \
three attributes; 0 of 1 cells compared
"""


def test_output_files_in_order(tmp_path: Path) -> None:
    """A CSV and a Markdown file per table in TABLE_IDS order, then index.md."""
    files = pt.output_files(tmp_path)
    assert len(files) == 2 * 15 + 1
    assert files[:3] == [tmp_path / "biasfinder-table4.csv", tmp_path / "biasfinder-table4.md",
                         tmp_path / "toxicity-table3.csv"]
    assert files[-2:] == [tmp_path / "toxicity-appendix-sentiment.md", tmp_path / "index.md"]


def _seed_results(gender_fpr: list[float | None]) -> list[pt.Results]:
    """One Results per seed: the baseline's balanced gender FPR gap of tiny-bert."""
    runs = []
    for v in gender_fpr:
        gaps = {} if v is None else {("tiny-bert", "baseline", "balanced", "gender", "FPR_gap"):
                                     (v, "")}
        study = pt.Study(Path("d"), gaps, {}, {}, {}, {}, {}, {}, {}, {})
        runs.append(pt.Results(settings=SETTINGS, toxicity=study))
    return runs


def _fpr_cell(value: float, text: str) -> pt.PublishedCell:
    return pt.PublishedCell("p", "toxicity-table3", "gender/bert/balanced", "FPR_gap", text,
                            value, "absolute gap", "Table 3", "pn", "f", 1)


@pytest.mark.parametrize(("published", "in_range"), [(1.0, "yes"), (3.0, "yes"), (2.5, "yes"),
                                                     (0.5, "no"), (3.5, "no")])
def test_records_over_seeds_give_mean_sd_and_range(published: float, in_range: str) -> None:
    """Mean, sample sd, range and whether the published value lies in it (ends included)."""
    cells = [_fpr_cell(published, str(published))]
    (record,) = pt.build_tables(cells, _seed_results([1.0, 3.0, 2.0]))["toxicity-table3"]
    assert record == {
        "table_id": "toxicity-table3", "row": "gender/bert/balanced", "column": "FPR_gap",
        "paper_model": "BERT", "our_model": "tiny-bert", "our_source": "embedded",
        "stand_in": "yes", "ours": "2", "published": str(published),
        "difference": pt._csv_number(2.0 - published), "reason": "", "unit": "absolute gap",
        "source": "Table 3", "published_note": "pn", "our_note": "", "seeds": "3", "sd": "1",
        "min": "1", "max": "3", "published_in_range": in_range, "n": "", "p_permutation": ""}


def test_records_of_two_seeds_and_of_one() -> None:
    """Two seeds have a spread; one run, given alone or in a list, has none."""
    cells = [_fpr_cell(0.5, "0.5")]
    (two,) = pt.build_tables(cells, _seed_results([1.0, 2.0]))["toxicity-table3"]
    assert (two["ours"], two["difference"], two["seeds"], two["min"], two["max"]) == \
        ("1.5", "1", "2", "1", "2")
    assert float(two["sd"]) == pytest.approx(0.5 ** 0.5, abs=1e-6)
    one = pt.build_tables(cells, _seed_results([1.25])[0])["toxicity-table3"][0]
    assert (one["ours"], one["difference"], one["seeds"], one["sd"], one["min"], one["max"],
            one["published_in_range"]) == ("1.25", "0.75", "1", "", "", "", "")
    assert [len(v) for v in pt.build_tables(cells, _seed_results([1.0])).values()] == \
        [0, 1] + [0] * 13


def test_a_cell_missing_in_one_seed_has_that_seeds_reason() -> None:
    """A cell missing in any seed has no mean, and that seed's reason."""
    (record,) = pt.build_tables([_fpr_cell(0.5, "0.5")],
                                _seed_results([1.0, None, 2.0]))["toxicity-table3"]
    assert (record["ours"], record["difference"], record["seeds"], record["sd"],
            record["our_model"]) == ("", "", "", "", "tiny-bert")
    assert record["reason"] == "no balanced-set gaps of tiny-bert/baseline for gender in " \
        "d/report.json"


def test_csv_text_has_the_header_and_one_line_per_record() -> None:
    """Header, one line per record, quoting as CSV needs."""
    record = dict.fromkeys(pt.OUTPUT_COLUMNS, "")
    record.update(table_id="t", row="a/b", column="c", source="Table 1, row A", ours="1")
    assert pt._csv_text([record, record]) == (
        ",".join(pt.OUTPUT_COLUMNS) + "\n" + 't,a/b,c,,,,,1,,,,,"Table 1, row A",,,,,,,,,\n' * 2)


def test_write_paper_tables_over_seeds(tmp_path: Path, world: pt.Results) -> None:
    """Two seeds' toxicity reports and classification files, one representation table: every
    file written, the mean and spread in the CSV and the Markdown, the index counting."""
    pub = _mini_published(tmp_path / "pub", tox_rows="".join(
        f"t,{tid},{row},{col},{v},absolute gap,S,\n" for tid, row, col, v in (
            ("toxicity-table3", "gender/bert/balanced", "FPR_gap", "0.02"),
            ("toxicity-table3", "gender/bert/original", "FPR_gap", "0.1"),
            ("toxicity-table3", "race/bert/balanced", "FPR_gap", "0.3"),
            ("toxicity-table4", "roberta/pretrained", "seat/religion", "0.5"),
            ("toxicity-text-auc", "bert/baseline", "AUC", "0.85"))
        ) + "".join(f"t,{tid},{KEYS[tid]},0.5,u,s,\n" for tid in pt.TABLE_IDS[1:]
                    if tid not in ("toxicity-table3", "toxicity-table4", "toxicity-text-auc")))
    reports, classification = [], []
    for seed, (fpr, auc) in enumerate(((0.01, 0.75), (0.03, 0.875))):
        d = tmp_path / f"seed{seed}"
        report = _toxicity(d)
        data = json.loads(report.read_text(encoding="utf-8"))
        for g in data["gaps"]:
            if (g["model"], g["method"], g["fairness_set"], g["metric"]) == \
                    ("tiny-bert", "baseline", "balanced", "FPR_gap"):
                g["value"] = fpr
        report.write_text(json.dumps(data), encoding="utf-8")
        reports.append(report)
        (d / "c.json").write_text(json.dumps([{"task": "toxicity", "model": "tiny-bert",
                                               "method": "baseline", "roc_auc": auc}]),
                                  encoding="utf-8")
        classification.append(d / "c.json")
    out = tmp_path / "out"
    pt.write_paper_tables(published=pub, settings=SETTINGS, out_dir=out, toxicity=reports,
                          classification=classification,
                          representation=Path(world.paths["representation"]), seeds=[1, 2])
    assert sorted(out.iterdir()) == sorted(pt.output_files(out))
    with open(out / "toxicity-table3.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["row"], r["ours"], r["difference"], r["seeds"], r["min"], r["max"],
             r["published_in_range"]) for r in rows] == [
        ("gender/bert/balanced", "0.02", "0", "2", "0.01", "0.03", "yes"),
        ("gender/bert/original", "0.03", "-0.07", "2", "0.03", "0.03", "no"),
        ("race/bert/balanced", "", "", "", "", "", "")]
    assert float(rows[0]["sd"]) == pytest.approx(2e-4 ** 0.5, rel=1e-5)
    md = (out / "toxicity-table3.md").read_text(encoding="utf-8")
    assert "over 2 fine-tuning seeds" in md
    assert "| Gender / BERT / Balanced | 0.020 ± 0.014 / 0.02 (+0; in range) |" in md
    assert "| Gender / BERT / Original | 0.030 ± 0 / 0.1 (-0.070; outside range) |" in md
    auc = (out / "toxicity-text-auc.csv").read_text(encoding="utf-8").splitlines()[1]
    assert auc.startswith("toxicity-text-auc,bert/baseline,AUC,BERT,tiny-bert,embedded,yes,"
                          "0.8125,0.85,-0.0375,,absolute gap,S,,")
    seat = (out / "toxicity-table4.csv").read_text(encoding="utf-8").splitlines()[1]
    # representation is one file for both seeds: the same value twice, sd 0
    assert seat.endswith(",0.42,0.5,-0.08,,absolute gap,S,,,2,0,0.42,0.42,no,,")
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "toxicity paper, Table 3, FPR/TPR/AUC gaps of the baseline models on the " \
        "original and the balanced fairness set; 2 of 3 cells compared" in index
    assert "toxicity-text-auc.csv)): toxicity paper, §4.2 text, AUC of the fine-tuned " \
        "baseline models; 1 of 1 cells compared" in index


def test_write_paper_tables_of_one_run_writes_nothing_on_an_error(tmp_path: Path) -> None:
    """A bad published key or a wrong file count writes nothing; one run writes its values."""
    pub = _mini_published(tmp_path / "pub", extra="t,toxicity-table3,a,c,1,u,s,\n")
    out = tmp_path / "out"
    with pytest.raises(DataError, match="row key 'a' should have 3"):
        pt.write_paper_tables(published=pub, settings=SETTINGS, out_dir=out)
    assert not out.exists() or not any(out.iterdir())
    with pytest.raises(ConfigError, match="--toxicity: give one file per seed \\(2\\), got 1"):
        pt.write_paper_tables(published=pub, settings=SETTINGS, out_dir=out,
                              toxicity=[tmp_path / "r.json"], seeds=[1, 2])
    pub = _mini_published(tmp_path / "pub2")
    pt.write_paper_tables(published=pub, settings=SETTINGS, out_dir=out)
    t3 = (out / "toxicity-table3.csv").read_text(encoding="utf-8").splitlines()
    assert len(t3) == 2 and t3[1].startswith("toxicity-table3,gender/bert/balanced,FPR_gap,"
                                             ",,,,,0.5,,not produced: no toxicity")
    # one run without seeds: each input is one file, and the value is that run's
    pt.write_paper_tables(published=pub, settings=SETTINGS, out_dir=out,
                          toxicity=_toxicity(tmp_path / "tox"))
    t3 = (out / "toxicity-table3.csv").read_text(encoding="utf-8").splitlines()
    assert t3[1] == "toxicity-table3,gender/bert/balanced,FPR_gap,BERT,tiny-bert,embedded,yes," \
        "0.02,0.5,-0.48,,u,s,,,1,,,,,,"
    assert (out / "biasfinder-table4.md").read_text(encoding="utf-8").endswith(
        "| Gender | n/a [1] / 14,916 |\n\nReasons:\n\n1. not produced: no biasfinder result "
        "was given (--biasfinder)\n")


def test_a_correlation_cell_carries_its_n_and_permutation_p(world: pt.Results) -> None:
    """Table 9 and the §5.2 correlations: beside each rho, its points and permutation p
    (correlations.csv's p_cluster), in the CSV record and the Markdown cell; other cells
    have neither."""
    ours = _ours(world, "toxicity-table9", "bert/selection", "FPR_gap")
    assert (ours.value, ours.n, ours.p_permutation) == (0.5, 3, pytest.approx(0.6666667))
    ours = _ours(world, "toxicity-text-metric-correlations", "balanced", "FPR_gap~TPR_gap")
    assert (ours.value, ours.n, ours.p_permutation) == (-0.75, 6, pytest.approx(0.08))
    gap = _ours(world, "toxicity-table3", "gender/bert/balanced", "FPR_gap")
    assert (gap.n, gap.p_permutation) == (None, None)
    (record,) = pt.build_tables([_cell("toxicity-table9", "bert/selection", "FPR_gap", 0.9,
                                       "0.9")], world)["toxicity-table9"]
    assert (record["n"], record["p_permutation"]) == ("3", "0.666667")
    md = pt._markdown("toxicity-table9", [record])
    assert "| 0.500 / 0.9 (-0.400; n 3, p 0.67) |" in md
    assert "with n = 3 no p can fall below 1/6" in md
    (other,) = pt.build_tables([_cell("toxicity-table3", "gender/bert/balanced", "FPR_gap",
                                      0.9, "0.9")], world)["toxicity-table3"]
    assert (other["n"], other["p_permutation"]) == ("", "")
    assert "no p can fall" not in pt._markdown("toxicity-table3", [other])


@pytest.mark.parametrize(("ps", "shown"), [((0.2, 0.6, 0.4), 0.6), ((0.2, None, 0.4), None)])
def test_over_seeds_a_correlation_shows_the_largest_permutation_p(
        monkeypatch: pytest.MonkeyPatch, ps: tuple[float | None, ...], shown: float | None
) -> None:
    """Several seeds: the weakest evidence is shown (the largest p); a seed without a p
    gives none."""
    cell = _cell("toxicity-table9", "bert/selection", "FPR_gap", 0.9, "0.9")
    each = iter([pt.Ours(value=0.5, n=3, p_permutation=p) for p in ps])
    monkeypatch.setattr(pt, "resolve", lambda c, res: next(each))
    ours, values = pt._across(cell, [pt.Results(settings={})] * 3)
    assert (ours.p_permutation, values) == (shown, [0.5, 0.5, 0.5])


def test_a_model_failing_the_gate_gets_no_table10_flag_and_a_note_in_tables_5_to_8(
        world: pt.Results) -> None:
    """report.json's models: upstream-sentDebias-gender of tiny-bert failed the model-works
    gate. Table 10 gives no flag for it (the reason names it); Table 8's cell keeps its value
    with a note; the baseline's cells are untouched."""
    failed = dataclasses.replace(
        world, toxicity=dataclasses.replace(
            world.toxicity, failed=frozenset({("tiny-bert", "upstream-sentDebias-gender")})))
    flag = pt.resolve(_cell("toxicity-table10", "upstream-sentDebias", "bert/gender"), failed)
    assert flag.value is None
    assert flag.reason == ("tiny-bert/upstream-sentDebias-gender failed the model-works gate "
                           "(models.csv): a model that learned nothing lowers every gap to 0")
    gap = pt.resolve(_cell("toxicity-table8", "gender/bert/upstream-sentDebias-gender",
                           "TPR_gap"), failed)
    assert gap.value == 0.04 and "failed the model-works gate" in gap.note
    base = pt.resolve(_cell("toxicity-table6", "gender/albert/baseline", "FPR_gap"), failed)
    assert base.value == 0.1 and "model-works" not in base.note


def test_the_gate_failures_are_read_from_report_json(tmp_path: Path) -> None:
    """models records with model_works false are the study's failed pairs; a report
    without models (written before the gate) has none."""
    report = _toxicity(tmp_path / "tox")
    assert pt.Study.read(report).failed == frozenset()
    data = json.loads(report.read_text(encoding="utf-8"))
    data["models"] = [{"model": "tiny-bert", "method": "baseline", "model_works": True},
                      {"model": "tiny-bert", "method": "x", "model_works": False}]
    report.write_text(json.dumps(data), encoding="utf-8")
    assert pt.Study.read(report).failed == frozenset({("tiny-bert", "x")})
