"""btc-gender-direction: BiasFinder's female mutants scored against the male mutants of the
same template. Planted, it must show the planted sign beyond the null margin in every model;
with nothing planted it is a negative control and must read zero. Ground truths are the
review world's own; mutants and predictions are synthetic files in the run's shapes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import review_truths, sentiment_report

from biasrepro.analysis import controls
from biasrepro.errors import DataError

MODELS = ("albert-tiny", "bert-tiny")


@pytest.fixture(scope="module")
def truths(tmp_path_factory) -> dict[str, Path]:
    return review_truths(tmp_path_factory)


def _run(tmp: Path, shift: dict[str, float]) -> tuple[Path, list[Path]]:
    """40 templates of 4 mutants (2 female, 2 male); each model scores a template's female
    mutants ``shift[model]`` above its male ones, around a template-specific level."""
    rng = np.random.default_rng(3)
    rows = [{"id": f"gender-{t:03d}#{k}", "template_id": f"gender-{t:03d}",
             "characteristic": "gender", "class": "female" if k < 2 else "male"}
            for t in range(40) for k in range(4)]
    mutants = tmp / "mutants" / "gender.parquet"
    mutants.parent.mkdir(parents=True)
    frame = pd.DataFrame(rows)
    frame.to_parquet(mutants)
    level = np.repeat(rng.uniform(0.2, 0.8, 40), 4)
    noise = rng.normal(0, 0.01, len(frame))
    preds = []
    for model in MODELS:
        prob = np.clip(level + noise + np.where(frame["class"] == "female",
                                                shift.get(model, 0.0), 0.0), 0, 1)
        path = tmp / "predictions" / model / "baseline" / "gender.parquet"
        path.parent.mkdir(parents=True)
        pd.DataFrame({"id": frame["id"], "prob": prob}).to_parquet(path)
        preds.append(path)
    return mutants, preds


def _row(mutants, preds, truth, sentiment=None) -> controls.Control:
    (row,) = controls.gender_direction_controls(mutants, preds, truth, sentiment)
    assert row.id == "btc-gender-direction"
    return row


@pytest.mark.parametrize(("shift", "result"), [
    ({"albert-tiny": -0.15, "bert-tiny": -0.10}, "pass"),   # female lower, as planted
    ({"albert-tiny": -0.15, "bert-tiny": -0.01}, "FAIL"),   # one model within the margin
    ({"albert-tiny": +0.15, "bert-tiny": +0.15}, "FAIL"),   # the opposite way
    ({}, "FAIL"),                                           # nothing found: the null's reading
])
def test_the_planted_world_needs_the_planted_sign_in_every_model(truths, tmp_path, shift,
                                                                 result) -> None:
    t = json.loads(truths["planted"].read_text())["settings"]["planted"]["gender"]
    assert t["female"] < t["male"]  # so female mutants must score lower
    row = _row(*_run(tmp_path, shift), truths["planted"])
    assert row.result == result and not row.negative_control, row.measured


@pytest.mark.parametrize(("shift", "result"), [
    ({}, "pass"),
    ({"bert-tiny": 0.02}, "pass"),     # within the margin
    ({"bert-tiny": -0.1}, "FAIL"),     # a gender effect where nothing is planted
])
def test_the_null_world_reads_zero(truths, tmp_path, shift, result) -> None:
    row = _row(*_run(tmp_path, shift), truths["null"])
    assert row.negative_control and row.result == result, row.measured
    # the workflow's report renders the row as reStructuredText, where |x| is a substitution
    assert "|" not in row.measured + row.tolerance + row.control + row.planted


def test_a_failed_model_is_left_out_and_a_missing_prediction_named(truths, tmp_path) -> None:
    mutants, preds = _run(tmp_path, {"albert-tiny": -0.15, "bert-tiny": 0.0})
    sentiment = sentiment_report(tmp_path, {"bert-tiny": False, "albert-tiny": True})
    row = _row(mutants, preds, truths["planted"], sentiment)
    assert row.result == "pass" and row.measured.startswith("1/1 models; albert-tiny")
    assert "left out, below the model-works floor: bert-tiny/baseline" in row.measured
    short = pd.read_parquet(preds[0]).iloc[1:]
    short.to_parquet(preds[0])
    with pytest.raises(DataError, match="no prediction for mutant 'gender-000#0'"):
        _row(mutants, preds, truths["planted"])


def test_not_run_without_mutants_or_truth(truths, tmp_path) -> None:
    mutants, preds = _run(tmp_path, {})
    assert _row(None, [], truths["planted"]).result == "not run"
    assert _row(mutants, preds, None).measured == "real data: no planted truth"
