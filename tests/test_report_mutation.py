"""The fairness report's files, messages and table tags, written from the survivors of a
mutation run of ``biasrepro.fairness.report`` (docs/testing.md, "Mutation testing").
Expectations are worked out by hand from the small inputs built here."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.errors import DataError
from biasrepro.fairness import report as report_module
from biasrepro.fairness.report import (
    build_tables,
    prediction_key,
    read_fairness_set,
    representation_by_method,
    write_report,
)
from biasrepro.io import write_parquet
from tests.test_study_fairness import SETTINGS, _write_inputs

TAGS = ["model", "method", "fairness_set"]


def _run(tmp_path: Path, **extra):
    original, balanced, preds, training = _write_inputs(tmp_path)
    out = tmp_path / "out"
    write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                 training=training, settings=extra.pop("settings", SETTINGS), out_dir=out,
                 **extra)
    return out, preds, training


def test_report_json_holds_task_settings_sizes_and_the_three_tables(tmp_path: Path) -> None:
    out, _, training = _run(tmp_path)
    report = json.loads((out / "report.json").read_text())
    assert report["task"] == "toxicity"
    assert report["settings"] == SETTINGS
    # the training frame of _write_inputs has 4 rows; both methods read the same file
    assert report["training"] == {m: {"path": str(p), "rows": 4} for m, p in training.items()}
    assert report["fairness_sets"] == {"original": {"rows": 24}, "balanced": {"rows": 60}}
    assert len(report["gaps"]) == 2 * 2 * 2 * 2 * 3   # model x method x set x attr x metric
    assert len(report["sensescore"]) == 2 * 2 * 2      # model x method x attribute
    assert len(report["dataset_bias"]) == 2 * 2        # method x attribute
    assert {r["method"] for r in report["dataset_bias"]} == {"baseline", "perturbed"}
    assert set(report["sensescore"][0]) >= {"model", "method", "attribute", "sense_score"}


def test_every_csv_starts_with_its_tags_and_has_no_index_column(tmp_path: Path) -> None:
    out, _, _ = _run(tmp_path)
    for name in ("gaps.csv", "group_metrics.csv", "borkan.csv"):
        table = pd.read_csv(out / name)
        assert list(table.columns[:3]) == TAGS, name
        assert set(zip(table["model"], table["method"], table["fairness_set"],
                       strict=True)) == {
            (m, me, s) for m in ("bert", "roberta") for me in ("baseline", "perturbed")
            for s in ("original", "balanced")}, name
    sense = pd.read_csv(out / "sensescore.csv")
    assert list(sense.columns[:2]) == ["model", "method"]
    assert sorted(set(zip(sense["model"], sense["method"], strict=True))) == [
        ("bert", "baseline"), ("bert", "perturbed"), ("roberta", "baseline"),
        ("roberta", "perturbed")]
    # balanced set only: 12 source sentences per attribute; 12 gender pairs, race sources
    # about black or white (i % 3 in (0, 1), i < 12) -> 8 pairs
    n_pairs = sense.set_index(["model", "method", "attribute"])["n_pairs"]
    assert (n_pairs.xs("gender", level="attribute") == 12).all()
    assert (n_pairs.xs("race", level="attribute") == 8).all()
    # the baseline shifts female by 0.35, clipped at 1: 0.2 -> 0.55 on the 6 label-0
    # pairs, 0.8 -> 1.0 on the 6 label-1 pairs; mean difference (0.35 + 0.2) / 2
    base = sense[(sense["method"] == "baseline") & (sense["attribute"] == "gender")]
    assert base["sense_score"].tolist() == pytest.approx([0.275, 0.275])
    for name in ("dataset_bias.csv", "training_groups.csv"):
        table = pd.read_csv(out / name)
        assert table.columns[0] == "method", name
        assert sorted(set(table["method"])) == ["baseline", "perturbed"], name
    text = (out / "gaps.csv").read_text()
    assert "\r" not in text and text.startswith("model,method,fairness_set,")


def test_gaps_markdown_file_names_the_task(tmp_path: Path) -> None:
    out, _, _ = _run(tmp_path)
    assert (out / "gaps.md").read_text().startswith("# Group fairness gaps (toxicity)\n\n")
    corr = (out / "correlations.md").read_text()
    assert corr.startswith("# Pearson correlations (toxicity)\n\n")
    header = pd.read_csv(out / "correlations.csv").columns
    assert ("| " + " | ".join(header) + " |") in corr


def test_report_logs_what_it_read_and_how_long_it_took(tmp_path: Path, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="biasrepro.fairness.report"):
        out, _, _ = _run(tmp_path)
    messages = [r.getMessage() for r in caplog.records if r.name == "biasrepro.fairness.report"]
    assert len(messages) == 1
    match = re.fullmatch(r"fairness report \(toxicity\): 8 prediction files, 2 training sets "
                         r"-> (.*) in (\d+\.\d) s", messages[0])
    assert match and match.group(1) == str(out)
    assert 0 <= float(match.group(2)) < 120


def test_report_refuses_a_second_predictions_file_for_the_same_key(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    copy = tmp_path / "again" / "bert" / "baseline" / "fairness-original.parquet"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(preds[0].read_bytes())
    with pytest.raises(DataError) as err:
        write_report(task="toxicity", original=original, balanced=balanced,
                     predictions=[*preds, copy], training=training, settings=SETTINGS,
                     out_dir=tmp_path / "out")
    assert str(err.value) == (f"{copy}: a second predictions file for "
                              "('bert', 'baseline', 'original')")


def test_unreadable_inputs_are_named_by_what_they_are(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    kwargs = {"task": "toxicity", "original": original, "balanced": balanced,
              "predictions": preds, "training": training, "settings": SETTINGS,
              "out_dir": tmp_path / "out"}
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    bad_pred = tmp_path / "x" / "bert" / "other" / "fairness-balanced.parquet"
    bad_pred.parent.mkdir(parents=True)
    bad_pred.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="not a readable predictions") as err:
        write_report(**{**kwargs, "predictions": [*preds, bad_pred]})
    assert str(err.value).startswith(str(bad_pred))
    with pytest.raises(DataError, match="not a readable training data of perturbed"):
        write_report(**{**kwargs, "training": {**training, "perturbed": broken}})
    with pytest.raises(DataError, match="not a readable Parquet representation table"):
        write_report(**kwargs, representation=broken)
    # the balanced set is read as the balanced set: its pairing columns are required
    write_parquet(pd.read_parquet(balanced).drop(columns="source_id"), balanced)
    with pytest.raises(DataError, match="column 'source_id': missing required column"):
        write_report(**kwargs)


def test_prediction_key_errors_name_the_file() -> None:
    path = Path("r/bert/baseline/test.parquet")
    with pytest.raises(DataError) as err:
        prediction_key(path)
    assert str(err.value).startswith(f"{path}: ")


def test_errors_inside_the_tables_name_their_file(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    kwargs = {"task": "toxicity", "original": original, "balanced": balanced,
              "predictions": preds, "training": training, "settings": SETTINGS,
              "out_dir": tmp_path / "out"}
    bad = preds[0]
    write_parquet(pd.read_parquet(bad).iloc[2:], bad)
    with pytest.raises(DataError) as err:
        write_report(**kwargs)
    assert str(err.value).startswith(f"{bad}") and "one to one" in str(err.value)
    _, _, preds, _ = _write_inputs(tmp_path)
    partial = tmp_path / "partial.parquet"
    write_parquet(pd.DataFrame({"id": ["a", "b"], "text": ["t", "u"], "label": [0, 1],
                                "male": [1.0, 0.0], "female": [0.0, 1.0]}), partial)
    with pytest.raises(DataError) as err:
        write_report(**{**kwargs, "predictions": preds,
                        "training": {**training, "perturbed": partial}})
    assert str(err.value).startswith(f"{partial}, column 'asian': missing identity column")


def test_training_groups_use_the_configured_identity_threshold(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    train = tmp_path / "soft.parquet"
    # identity scores 0.4: a member at threshold 0.3, nobody at the default 0.5
    write_parquet(pd.DataFrame({"id": list("ab"), "text": ["t", "u"], "label": [1, 0],
                                "male": [0.4, 0.0], "female": [0.0, 0.4], "black": [0.0] * 2,
                                "white": [0.0] * 2, "asian": [0.0] * 2}), train)
    settings = {**SETTINGS, "preprocess": {"civil_comments": {"identity_threshold": 0.3}}}
    out = tmp_path / "out"
    write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                 training={"baseline": train}, settings=settings, out_dir=out)
    groups = pd.read_csv(out / "training_groups.csv")
    assert list(groups["method"].unique()) == ["baseline"]
    sizes = dict(zip(groups["group"], groups["n"], strict=True))
    assert sizes["male"] == 1 and sizes["female"] == 1 and sizes["black"] == 0


def _frames(tmp_path: Path):
    original, balanced, preds, training = _write_inputs(tmp_path)
    sets = {"original": read_fairness_set(original, "original"),
            "balanced": read_fairness_set(balanced, "balanced")}
    predictions = {prediction_key(p): (p, pd.read_parquet(p)) for p in preds}
    train = {m: (p, pd.read_parquet(p)) for m, p in training.items()}
    return sets, predictions, train


def test_built_tables_are_numbered_from_zero(tmp_path: Path) -> None:
    sets, predictions, train = _frames(tmp_path)
    tables = build_tables(task="toxicity", original=sets["original"],
                          balanced=sets["balanced"], predictions=predictions, training=train,
                          settings=SETTINGS)
    for name in ("gaps", "groups", "borkan", "sense", "dataset_bias", "training_groups"):
        assert list(tables[name].index) == list(range(len(tables[name]))), name
    # without balanced predictions there is no SenseScore at all
    only_original = {k: v for k, v in predictions.items() if k[2] == "original"}
    tables = build_tables(task="toxicity", original=sets["original"],
                          balanced=sets["balanced"], predictions=only_original,
                          training=train, settings=SETTINGS)
    assert tables["sense"].empty and len(tables["gaps"]) == 2 * 2 * 2 * 3


REP_COLUMNS = ["model", "variant", "attribute", "source", "value"]


def _representation(tmp_path: Path, rows: list[tuple], name: str = "rep.parquet") -> Path:
    path = tmp_path / name
    write_parquet(pd.DataFrame(rows, columns=REP_COLUMNS), path)
    return path


def test_representation_rows_reach_the_correlations_per_method(tmp_path: Path,
                                                               monkeypatch) -> None:
    seen = {}
    real = report_module.correlation_table

    def spy(gaps, bias, *, representation=None):
        seen["rep"] = representation
        return real(gaps, bias, representation=representation)

    monkeypatch.setattr(report_module, "correlation_table", spy)
    # values stored as text: the report reads them as numbers
    rep = _representation(tmp_path, [
        ("bert", "pretrained", "gender", "crows", "60.5"),
        ("bert", "sentdebias-gender", "gender", "crows", "52"),
        ("roberta", "pretrained", "gender", "crows", "58")])
    settings = {**SETTINGS, "methods": {"registry": {
        "baseline": {"data": "original"},
        "perturbed": {"data": "original",
                      "sentdebias": {"attribute": "gender", "stage": "upstream"}}}}}
    out, _, _ = _run(tmp_path, representation=rep, settings=settings)
    got = seen["rep"]
    assert list(got.columns) == ["model", "method", "attribute", "source", "value"]
    assert sorted(got.itertuples(index=False, name=None)) == [
        ("bert", "baseline", "gender", "representation_crows", 60.5),
        ("bert", "perturbed", "gender", "representation_crows", 52.0),
        ("roberta", "baseline", "gender", "representation_crows", 58.0)]
    assert got["value"].dtype == "float64"
    assert "representation_crows" in (out / "correlations.csv").read_text()


def test_representation_table_is_checked_cell_by_cell(tmp_path: Path) -> None:
    good = [("bert", "pretrained", "gender", "crows", 60.0),
            ("bert", "pretrained", "race", "crows", 55.0)]
    for i, column in enumerate(REP_COLUMNS[:4]):
        rows = [list(r) for r in good]
        rows[1][i] = " "
        rep = _representation(tmp_path, [tuple(r) for r in rows], f"{column}.parquet")
        with pytest.raises(DataError) as err:
            _run(tmp_path, representation=rep)
        assert str(err.value).startswith(f"{rep}, row 2, column '{column}': text is empty")
    rep = _representation(tmp_path, [("bert", "pretrained", "gender", "crows", "60"),
                                      ("bert", "pretrained", "race", "crows", "x")],
                          "value.parquet")
    with pytest.raises(DataError) as err:
        _run(tmp_path, representation=rep)
    assert str(err.value) == f"{rep}, row 2, column 'value': not a number (got 'x')"
    missing = tmp_path / "missing.parquet"
    write_parquet(pd.DataFrame(good, columns=REP_COLUMNS).drop(columns="source"), missing)
    with pytest.raises(DataError, match="source"):
        _run(tmp_path, representation=missing)


@pytest.mark.parametrize("column", ["identity", "source_id", "source_identity"])
def test_read_fairness_set_checks_each_text_column(tmp_path: Path, column: str) -> None:
    frame = pd.DataFrame({"id": ["a", "b"], "label": [0, 1], "identity": ["male", "female"],
                          "source_id": ["a", "a"], "source_identity": ["male", "male"]})
    frame.loc[1, column] = ""
    path = tmp_path / "set.parquet"
    write_parquet(frame, path)
    with pytest.raises(DataError) as err:
        read_fairness_set(path, "balanced")
    assert str(err.value).startswith(f"{path}, row 2, column '{column}': text is empty")


def test_read_fairness_set_keeps_its_columns_and_numbers_rows_from_zero(tmp_path: Path
                                                                        ) -> None:
    frame = pd.DataFrame({"id": ["a", "b"], "label": [0, 1], "identity": ["male", "female"]})
    path = tmp_path / "set.parquet"
    write_parquet(frame, path)
    read = read_fairness_set(path, "original")
    assert list(read.columns) == ["id", "label", "identity"]
    assert list(read.index) == [0, 1]


def test_representation_by_method_numbers_rows_and_allows_no_variant() -> None:
    table = pd.DataFrame([("m", "pretrained", "gender", "crows", 60.0),
                          ("m", "pretrained", "race", "seat", 0.5)], columns=REP_COLUMNS)
    got = representation_by_method(table, ["a", "b"], {})
    assert list(got.index) == [0, 1, 2, 3]
    down = {"d": {"data": "original", "sentdebias": {"attribute": "gender",
                                                     "stage": "downstream", "base": "a"}}}
    empty = representation_by_method(table, ["d"], down)
    assert len(empty) == 0
    assert list(empty.columns) == ["model", "method", "attribute", "source", "value"]


@pytest.mark.parametrize("methods", [None, {}])
def test_representation_without_a_registry_is_the_pretrained_models(tmp_path: Path,
                                                                    methods) -> None:
    settings = dict(SETTINGS) if methods is None else {**SETTINGS, "methods": methods}
    rep = _representation(tmp_path, [("bert", "pretrained", "gender", "crows", 60.0)])
    out, _, _ = _run(tmp_path, representation=rep, settings=settings)
    assert "representation_crows" in (out / "correlations.csv").read_text()
