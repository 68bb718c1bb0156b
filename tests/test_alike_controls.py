"""The negative control every default run carries: two groups of an attribute that the world
generates alike (black and asian, muslim and jewish) must read alike in every working model.
The ground truths are the world generator's own; the balanced set and the predictions are
synthetic files in the shapes the run writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasrepro import config as cfg
from biasrepro.analysis import controls
from biasrepro.data.world import comments

REPO = Path(__file__).resolve().parents[1]
DEFAULT = (REPO / "config/config.yaml",)
WORLDS = {
    "default": DEFAULT,
    "small": (*DEFAULT, REPO / ".test/config/config.yaml"),
    "null": (*DEFAULT, REPO / "config/null_world.yaml"),
}
RACE = ("white", "black", "asian")


def _truth(files: tuple[Path, ...], out: Path, **groups: dict) -> Path:
    c = cfg.load(*files)
    world = copy.deepcopy(c["world"]["comments"])
    world["groups"].update(groups)
    comments.generate(world, seed=c["seed"], identities=c["identities"],
                      attributes=copy.deepcopy(c["attributes"]),
                      preprocess=copy.deepcopy(c["preprocess"]["civil_comments"]), out_dir=out)
    return out / "ground_truth.json"


@pytest.fixture(scope="module")
def truth(tmp_path_factory) -> Path:
    return _truth(WORLDS["small"], tmp_path_factory.mktemp("world"))


@pytest.mark.parametrize(("world", "pairs"), [
    ("default", {("race", "black", "asian"), ("religion", "jewish", "muslim")}),
    ("small", {("race", "black", "asian"), ("religion", "jewish", "muslim")}),
    ("null", {("gender", "female", "male"), ("race", "black", "asian"),
              ("race", "black", "white"), ("race", "asian", "white"),
              ("religion", "jewish", "muslim"), ("religion", "jewish", "christian"),
              ("religion", "muslim", "christian")}),
])
def test_every_profile_generates_groups_alike(world, pairs, tmp_path) -> None:
    path = _truth(WORLDS[world], tmp_path)
    assert set(controls.alike_pairs(json.loads(path.read_text()), path)) == pairs


def test_a_group_generated_otherwise_is_not_alike(tmp_path) -> None:
    """One more toxic comment about Asians, or one comment fewer: no longer a null pair."""
    for change in ({"n": 35, "toxic_ratio": 0.23}, {"n": 34, "toxic_ratio": 0.20}):
        path = _truth(WORLDS["small"], tmp_path / str(change["n"]) / str(change["toxic_ratio"]),
                      asian=change)
        pairs = controls.alike_pairs(json.loads(path.read_text()), path)
        assert ("race", "black", "asian") not in pairs
        assert ("religion", "jewish", "muslim") in pairs


def _run(tmp: Path, *, leak: dict[str, float] | None = None, only: str | None = None,
         failed: set[tuple[str, str]] = frozenset()) -> tuple[Path, Path, list[Path]]:
    """A report, a balanced race set of 60 source sentences (45 civil) in every group, and
    two models' predictions: 0.2 for civil, 0.8 for toxic sentences; ``leak`` maps a group
    to the share of its civil versions scored 0.9 instead (false positives), in every model
    or ``only`` in that one."""
    rows = [{"id": f"s{i}>{g}", "label": int(i >= 45), "identity": g, "attribute": "race",
             "source_id": f"s{i}", "source_identity": "white"}
            for i in range(60) for g in RACE]
    balanced = tmp / "balanced.parquet"
    tmp.mkdir(parents=True, exist_ok=True)
    fset = pd.DataFrame(rows)
    fset.to_parquet(balanced)
    preds = []
    for model in ("albert-tiny", "bert-tiny"):
        for method in controls.TOXICITY_METHODS:
            prob = np.where(fset["label"] == 1, 0.8, 0.2)
            for group, share in (leak or {}).items() if only in (None, model) else ():
                civil = fset.index[(fset["identity"] == group) & (fset["label"] == 0)]
                prob[civil[: round(share * len(civil))]] = 0.9
            path = tmp / "predictions" / model / method / "fairness-balanced.parquet"
            path.parent.mkdir(parents=True)
            pd.DataFrame({"id": fset["id"], "label": fset["label"], "prob": prob}).to_parquet(
                path)
            preds.append(path)
    report = tmp / "fairness" / "report.json"
    report.parent.mkdir()
    report.write_text(json.dumps({"settings": {"seed": 7, "fairness": {
        "threshold": 0.5, "bootstrap": {"confidence": 0.95, "resamples": 200}}}}))
    pd.DataFrame([{"model": m, "method": k, "model_works": (m, k) not in failed}
                  for m in ("albert-tiny", "bert-tiny")
                  for k in controls.TOXICITY_METHODS]).to_csv(
        report.with_name("gaps.csv"), index=False)
    return report, balanced, preds


def _control(truth: Path, report: Path, balanced: Path, preds: list[Path]) -> controls.Control:
    (row,) = controls.toxicity_alike_controls(report, balanced, preds, truth)
    assert row.id == "tox-alike-fpr" and row.negative_control
    return row


def test_groups_generated_alike_read_alike(truth, tmp_path) -> None:
    row = _control(truth, *_run(tmp_path))
    assert row.result == "pass"
    # 2 models × 2 methods for the one pair the race set holds
    assert row.measured.startswith("1/1 pairs read zero; black vs asian mean +0.0000 ± "
                                   "0.0000 over 4 cells")
    assert "black and asian (race)" in row.planted and "jewish and muslim" in row.planted


@pytest.mark.parametrize(("leak", "only", "result"), [
    ({"asian": 0.2}, None, "FAIL"),      # 9 of 45 civil Asian versions called toxic, every model
    ({"black": 0.2}, None, "FAIL"),      # the sign does not matter
    ({"asian": 1 / 45}, None, "FAIL"),   # one sentence, but every model the same way
    ({"asian": 0.2, "black": 0.2}, None, "pass"),  # both alike again
    ({"white": 0.5}, None, "pass"),      # a group not in an alike pair
    ({"asian": 0.2}, "bert-tiny", "pass"),  # one model's quirk: the cells disagree
])
def test_a_label_leaked_into_one_alike_group_fails(truth, tmp_path, leak, only,
                                                    result) -> None:
    row = _control(truth, *_run(tmp_path, leak=leak, only=only))
    assert row.result == result, row.measured


def test_the_margin_bounds_a_consistent_mean(truth, tmp_path, monkeypatch) -> None:
    """A mean as consistent as one sentence in every model reads zero under a margin above
    it, and one model alone is read by its bootstrap interval."""
    monkeypatch.setattr(controls, "NULL_ALIKE", 0.03)
    assert _control(truth, *_run(tmp_path / "a", leak={"asian": 1 / 45})).result == "pass"
    report, balanced, preds = _run(tmp_path / "b", leak={"asian": 0.2},
                                   failed={("albert-tiny", "baseline"),
                                           ("albert-tiny", "downstream-perturbed-data"),
                                           ("bert-tiny", "downstream-perturbed-data")})
    row = _control(truth, report, balanced, preds)
    assert row.result == "FAIL" and "one cell -0.2000" in row.measured


def test_a_failed_model_is_left_out_and_named(truth, tmp_path) -> None:
    report, balanced, preds = _run(tmp_path, leak={"asian": 0.2},
                                   failed={("albert-tiny", "baseline"),
                                           ("albert-tiny", "downstream-perturbed-data"),
                                           ("bert-tiny", "baseline"),
                                           ("bert-tiny", "downstream-perturbed-data")})
    row = _control(truth, report, balanced, preds)
    assert row.result == "not run"
    assert "no model passes the model-works gate" in row.measured
    assert "albert-tiny/baseline" in row.measured


def test_not_run_where_nothing_is_alike_or_nothing_is_planted(truth, tmp_path) -> None:
    report, balanced, preds = _run(tmp_path)
    other = _truth(WORLDS["small"], tmp_path / "other", asian={"n": 20, "toxic_ratio": 0.15},
                   jewish={"n": 20, "toxic_ratio": 0.15})
    assert _control(other, report, balanced, preds).measured == \
        "this world generates no two groups of an attribute alike"
    assert _control(None, report, balanced, preds).measured == "real data: no planted truth"
    assert _control(truth, None, balanced, preds).result == "not run"
    assert _control(truth, report, None, []).measured == "no balanced-set predictions given"


def test_predictions_of_another_fairness_set_are_refused(truth, tmp_path) -> None:
    report, balanced, preds = _run(tmp_path)
    wrong = preds[0].with_name("fairness-original.parquet")
    preds[0].rename(wrong)
    with pytest.raises(Exception, match="balanced-set predictions"):
        controls.toxicity_alike_controls(report, balanced, [wrong, *preds[1:]], truth)
