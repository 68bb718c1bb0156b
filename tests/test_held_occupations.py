"""btc-held-occupations: BiasFinder's negative control in every world. The occupations the
training reviews hold with no planted rate (less the pre-training corpus's attribute words)
must read alike in every working baseline model; a label leaked into one of them must fail
it. Ground truths are the review world's own; mutants and predictions are synthetic files in
the run's shapes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import review_truths, sentiment_report

from biasrepro.analysis import controls
from biasrepro.errors import DataError

MODELS = ("albert-tiny", "bert-tiny")
N_TEMPLATES = 60


@pytest.fixture(scope="module")
def truths(tmp_path_factory) -> dict[str, Path]:
    return review_truths(tmp_path_factory, pretraining=True)


def _classes(truth: Path) -> list[str]:
    return list(json.loads(truth.read_text())["splits"]["train"]["characteristics"]
                ["occupation"])


def _run(tmp: Path, truth: Path, shift: dict[tuple[str, str], float],
         noise: float = 0.01) -> tuple[Path, list[Path]]:
    """Templates with one mutant of every occupation of the world and of one it never uses;
    each model scores class ``c`` ``shift[(model, c)]`` above a template-specific level."""
    rng = np.random.default_rng(5)
    classes = [*_classes(truth), "zookeeper"]
    frame = pd.DataFrame([{"id": f"occupation-{t:03d}#{k}", "template_id": f"occupation-{t:03d}",
                           "characteristic": "occupation", "class": c}
                          for t in range(N_TEMPLATES) for k, c in enumerate(classes)])
    mutants = tmp / "mutants" / "occupation.parquet"
    mutants.parent.mkdir(parents=True)
    frame.to_parquet(mutants)
    level = np.repeat(rng.uniform(0.2, 0.8, N_TEMPLATES), len(classes))
    preds = []
    for model in MODELS:
        moved = frame["class"].map(lambda c, m=model: shift.get((m, c), 0.0)).to_numpy()
        prob = np.clip(level + rng.normal(0, noise, len(frame)) + moved, 0, 1)
        path = tmp / "predictions" / model / "baseline" / "occupation.parquet"
        path.parent.mkdir(parents=True)
        pd.DataFrame({"id": frame["id"], "prob": prob}).to_parquet(path)
        preds.append(path)
    return mutants, preds


def _row(mutants, preds, truth, sentiment=None, pretraining=None) -> controls.Control:
    (row,) = controls.held_occupation_controls(mutants, preds, truth, sentiment, pretraining)
    assert row.id == "btc-held-occupations"
    return row


@pytest.mark.parametrize("world", ["planted", "null"])
@pytest.mark.parametrize(("shift", "result"), [
    ({}, "pass"),
    ({("bert-tiny", "pilot"): 0.02}, "pass"),                          # within the margin
    ({("bert-tiny", "pilot"): 0.08}, "FAIL"),                          # a leak, one model
    ({("albert-tiny", "pilot"): -0.06, ("bert-tiny", "pilot"): -0.06}, "FAIL"),
    ({("bert-tiny", "nurse"): 0.2, ("bert-tiny", "engineer"): -0.2,
      ("albert-tiny", "zookeeper"): 0.2}, "pass"),                     # planted or unseen
])
def test_held_occupations_read_alike_in_every_world(truths, tmp_path, world, shift,
                                                    result) -> None:
    row = _row(*_run(tmp_path, truths[world], shift), truths[world],
               pretraining=truths[f"{world}-pretraining"])
    assert row.negative_control and row.result == result, row.measured
    # the workflow's report renders the row as reStructuredText, where |x| is a substitution
    assert "|" not in row.measured + row.tolerance + row.control + row.planted
    assert row.measured.startswith("2/2 models" if result == "pass" else "1/2 models"
                                   if len({m for m, _ in shift}) == 1 else "0/2 models")


def test_a_large_effect_inside_wide_noise_is_not_a_failure(truths, tmp_path) -> None:
    """The tolerance is the data's own: an effect whose family-wise interval holds 0 reads
    zero however large, so a noisy model is not failed for its noise."""
    row = _row(*_run(tmp_path, truths["planted"], {("bert-tiny", "pilot"): 0.04}, noise=0.3),
               truths["planted"])
    assert row.result == "pass", row.measured


def test_held_classes_leave_out_planted_classes_and_pretraining_words(truths) -> None:
    t = json.loads(truths["planted"].read_text())
    held = controls.held_classes(t, truths["planted"], None)
    planted = set(t["settings"]["planted"]["occupation"])
    assert planted and not planted & set(held)
    assert set(held) == set(_classes(truths["planted"])) - planted
    pre = json.loads(truths["planted-pretraining"].read_text())
    words = {w for g in pre["associations"].values() for ws in g.values() for w in ws}
    assert "nurse" in words
    unplanted = copy.deepcopy(t)
    for v in unplanted["splits"]["train"]["characteristics"]["occupation"].values():
        v["planted"] = False
    assert "nurse" in controls.held_classes(unplanted, truths["planted"], None)
    assert "nurse" not in controls.held_classes(unplanted, truths["planted"], pre)


def test_a_failed_model_is_left_out_and_bad_files_are_named(truths, tmp_path) -> None:
    mutants, preds = _run(tmp_path, truths["planted"], {("bert-tiny", "pilot"): 0.08})
    sentiment = sentiment_report(tmp_path, {"bert-tiny": False, "albert-tiny": True})
    row = _row(mutants, preds, truths["planted"], sentiment)
    assert row.result == "pass" and row.measured.startswith("1/1 models; albert-tiny")
    assert "left out, below the model-works floor: bert-tiny/baseline" in row.measured
    pd.read_parquet(preds[0]).iloc[1:].to_parquet(preds[0])
    with pytest.raises(DataError, match="no prediction for mutant 'occupation-000#0'"):
        _row(mutants, preds, truths["planted"])
    pd.read_parquet(mutants).drop(columns="template_id").to_parquet(mutants)
    with pytest.raises(DataError, match="template_id"):
        _row(mutants, preds, truths["planted"])


def test_not_run_without_mutants_or_truth(truths, tmp_path) -> None:
    mutants, preds = _run(tmp_path, truths["planted"], {})
    assert _row(None, [], truths["planted"]).result == "not run"
    row = _row(mutants, preds, None)
    assert row.measured == "real data: no planted truth" and row.negative_control
