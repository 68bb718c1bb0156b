"""The headline metrics for ``dvc metrics`` (``biasrepro.analysis.headline``), section by
section on inputs built here, each expected dict written out by hand: which rows and keys it
keeps, how it nests and rounds, and its messages."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from biasrepro.analysis import headline as hl
from biasrepro.errors import DataError


def _json(path: Path, value) -> Path:
    path.write_text(json.dumps(value))
    return path


def _csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_classification_keeps_the_test_split_rounded(tmp_path: Path) -> None:
    rows = [
        {"task": "toxicity", "model": "bert", "method": "baseline", "set": "test",
         "accuracy": 0.5, "roc_auc": 2 / 3, "f1": 0.4, "n": 10, "positive_rate": 0.3},
        {"task": "toxicity", "model": "bert", "method": "baseline", "set": "validation",
         "accuracy": 0.9, "roc_auc": 0.9, "f1": 0.9},
        {"task": "sentiment", "model": "a", "method": "m",  # no set: a test-split row
         "accuracy": 1.0, "roc_auc": 0.1234564, "f1": 1},
    ]
    got = hl.headline(hl.Inputs(classification=_json(tmp_path / "c.json", rows)))
    assert got == {"classification": {
        "toxicity": {"bert": {"baseline": {"accuracy": 0.5, "roc_auc": 0.666667, "f1": 0.4}}},
        "sentiment": {"a": {"m": {"accuracy": 1.0, "roc_auc": 0.123456, "f1": 1}}}}}


def test_classification_messages(tmp_path: Path) -> None:
    path = _json(tmp_path / "c.json", {"task": "toxicity"})
    with pytest.raises(DataError) as err:
        hl.classification(path)
    assert str(err.value) == f"{path}: expected a list of per-model rows"
    path = _json(tmp_path / "d.json", [
        {"task": "t", "model": "m", "method": "x", "accuracy": 1, "roc_auc": 1, "f1": 1},
        {"task": "t", "model": "m", "method": "y", "accuracy": 1, "roc_auc": 1}])
    with pytest.raises(DataError) as err:
        hl.classification(path)
    assert str(err.value) == (f"{path}, row 2: needs task, model, method, accuracy, roc_auc "
                              "and f1")
    path = _json(tmp_path / "e.json", ["not a row"])
    with pytest.raises(DataError, match=r"row 1: needs task"):
        hl.classification(path)


def _fairness(tmp_path: Path, task: str | None = "toxicity") -> Path:
    report = _json(tmp_path / "report.json", {} if task is None else {"task": task})
    _csv(tmp_path / "gaps.csv",
         "model,method,fairness_set,attribute,metric,value\n"
         "bert,baseline,balanced,gender,FPR_gap,0.1234567\n"
         "bert,baseline,balanced,race,AUC_gap,\n"
         "bert,baseline,original,gender,FPR_gap,0.9\n"
         "bert,perturbed,balanced,gender,TPR_gap,0.05\n")
    _csv(tmp_path / "sensescore.csv",
         "model,method,attribute,sense_score\n"
         "bert,baseline,gender,0.25\n"
         "roberta,baseline,religion,0.5\n")
    return report


def test_fairness_keeps_the_balanced_set_and_adds_sensescore(tmp_path: Path) -> None:
    got = hl.headline(hl.Inputs(fairness=(_fairness(tmp_path),)))
    assert got == {"fairness": {"toxicity": {
        "bert": {"baseline": {"fpr_gap_gender": 0.123457, "auc_gap_race": None,
                              "sensescore_gender": 0.25},
                 "perturbed": {"tpr_gap_gender": 0.05}},
        "roberta": {"baseline": {"sensescore_religion": 0.5}}}}}


def test_fairness_needs_its_task(tmp_path: Path) -> None:
    report = _fairness(tmp_path, task=None)
    with pytest.raises(DataError) as err:
        hl.fairness(report)
    assert str(err.value) == f"{report}: missing key 'task'"
    _json(report, {"task": 3})
    with pytest.raises(DataError, match="missing key 'task'"):
        hl.fairness(report)


def test_biasfinder_representation_cross_study_and_controls(tmp_path: Path) -> None:
    btc = _csv(tmp_path / "btc.csv", "model,method,characteristic,btc_rate,n\n"
                                     "bert,baseline,gender,1.23456789,5\n"
                                     "bert,baseline,country,0,5\n")
    rep = _csv(tmp_path / "rep.csv", "model,variant,attribute,source,value\n"
                                     "bert,pretrained,gender,crows,61.5\n"
                                     "bert,sentdebias-gender,gender,seat,0.3333333333\n")
    cross = _json(tmp_path / "cross.json", {"r": 0.1234567891, "n": 12,
                                           "points": [0.1234567891], "nested": {"p": 1e-9}})
    ctl = _json(tmp_path / "controls.json", {"passed": 3, "failed": 1, "total": 4,
                                              "extra": 9})
    got = hl.headline(hl.Inputs(biasfinder=btc, representation=rep, cross_study=cross,
                                controls=ctl))
    assert got == {
        "biasfinder": {"bert": {"baseline": {"gender": 1.234568, "country": 0.0}}},
        "representation": {"bert": {"pretrained": {"crows_gender": 61.5},
                                    "sentdebias-gender": {"seat_gender": 0.333333}}},
        # lists are kept as they are; floats in nested mappings are rounded
        "cross_study": {"r": 0.123457, "n": 12, "points": [0.1234567891],
                        "nested": {"p": 0.0}},
        "controls": {"passed": 3, "failed": 1, "not_run": None, "total": 4},
    }
    assert list(got) == ["biasfinder", "representation", "cross_study", "controls"]


def test_nothing_ran_gives_an_empty_headline_and_the_file_is_what_is_returned(
        tmp_path: Path) -> None:
    assert hl.headline(hl.Inputs()) == {}
    out = tmp_path / "metrics.json"
    cls = _json(tmp_path / "c.json", [{"task": "t", "model": "m", "method": "x",
                                       "accuracy": 0.5, "roc_auc": 0.5, "f1": 0.5}])
    got = hl.write_headline(hl.Inputs(classification=cls), out)
    assert json.loads(out.read_text()) == got == {
        "classification": {"t": {"m": {"x": {"accuracy": 0.5, "roc_auc": 0.5, "f1": 0.5}}}}}


def test_round_keeps_what_is_not_a_float() -> None:
    assert hl._round({"a": 1.23456789, "b": 7, "c": "x", "d": {"e": 2.0000004}}) == {
        "a": 1.234568, "b": 7, "c": "x", "d": {"e": 2.0}}
    assert hl.DECIMALS == 6 and math.isnan(hl._round(float("nan")))


@pytest.mark.parametrize(("name", "text"), [
    ("gaps.csv", "model,method,fairness_set,attribute,metric\nbert,b,balanced,gender,FPR_gap\n"),
    ("sensescore.csv", "model,method,attribute\nbert,b,gender\n"),
])
def test_fairness_tables_missing_a_column_are_named(tmp_path: Path, name: str,
                                                     text: str) -> None:
    report = _fairness(tmp_path)
    _csv(tmp_path / name, text)
    with pytest.raises(DataError) as err:
        hl.fairness(report)
    missing = "value" if name == "gaps.csv" else "sense_score"
    assert str(tmp_path / name) in str(err.value) and missing in str(err.value)


@pytest.mark.parametrize(("field", "text", "missing"), [
    ("biasfinder", "model,method,characteristic\nbert,b,gender\n", "btc_rate"),
    ("representation", "model,variant,attribute,value\nbert,p,gender,1\n", "source"),
])
def test_tables_missing_a_column_are_named(tmp_path: Path, field: str, text: str,
                                           missing: str) -> None:
    path = _csv(tmp_path / "t.csv", text)
    with pytest.raises(DataError) as err:
        hl.headline(hl.Inputs(**{field: path}))
    assert str(path) in str(err.value) and missing in str(err.value)
