"""The data and perturbation controls can fail: each passes on a small world generated in
process, and FAILS when the metric or the data is broken on purpose; the null world (nothing
planted) is their negative control, read as zero."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from statistics import fmean

import numpy as np
import pandas as pd
import pytest

from biasrepro import config as cfg
from biasrepro.analysis import controls
from biasrepro.data import civil_comments, summary
from biasrepro.data.world import comments
from biasrepro.metrics import dataset_bias
from biasrepro.perturb.restratify import restratify

REPO = Path(__file__).resolve().parents[1]
CONFIG = cfg.load(REPO / "config" / "config.yaml")
NULL = cfg.load(REPO / "config" / "config.yaml", REPO / "config" / "null_world.yaml")
IDENTITIES = CONFIG["identities"]
ATTRIBUTES = CONFIG["attributes"]
PREPROCESS = CONFIG["preprocess"]["civil_comments"]
DATA_IDS = ("data-counts", "data-selection", "data-overamplification")

#: a small world whose marginalized sides are not all above the others (so a missing abs()
#: shows) and whose race and religion sides have unequal groups (so max() for mean() shows)
SMALL = {
    "n_background": 120, "background_toxic_ratio": 0.08, "n_unannotated": 20,
    "multi_identity": {"n": 30, "toxic_ratio": 0.3},
    "groups": {"male": {"n": 90, "toxic_ratio": 0.3}, "female": {"n": 60, "toxic_ratio": 0.1},
               "white": {"n": 80, "toxic_ratio": 0.1}, "black": {"n": 50, "toxic_ratio": 0.4},
               "asian": {"n": 40, "toxic_ratio": 0.2}, "christian": {"n": 70,
                                                                    "toxic_ratio": 0.1},
               "muslim": {"n": 50, "toxic_ratio": 0.3}, "jewish": {"n": 30,
                                                                 "toxic_ratio": 0.15}},
    "ambiguous": {"civil_share": 0.1, "toxic_share": {}},
}


def _data_dir(tmp: Path, settings: dict) -> tuple[Path, Path]:
    """Generate the comments, run the data stage on them; (data dir, ground_truth.json)."""
    world = tmp / "world"
    comments.generate(copy.deepcopy(settings), seed=CONFIG["seed"], identities=IDENTITIES,
                      attributes=copy.deepcopy(ATTRIBUTES), preprocess=copy.deepcopy(PREPROCESS),
                      out_dir=world)
    data = tmp / "data"
    civil_comments.prepare(world / "all_data.csv", fmt="csv", member=None,
                           identities=IDENTITIES, settings=copy.deepcopy(PREPROCESS),
                           seed=CONFIG["seed"], out_dir=data / "civil_comments")
    # the summary reads IMDB and SST too: one-row stand-ins
    (data / "imdb").mkdir()
    (data / "sst").mkdir()
    for split in ("train", "test"):
        pd.DataFrame({"label": [0, 1]}).to_parquet(data / "imdb" / f"{split}.parquet")
    pd.DataFrame({"label": [0, 1], "gender": ["female", "male"]}).to_parquet(
        data / "sst" / "fairness.parquet")
    return data, world / "ground_truth.json"


def _summary(data: Path, out: Path) -> Path:
    s = summary.summarize(data, ATTRIBUTES, IDENTITIES, PREPROCESS["identity_threshold"])
    out.write_text(json.dumps(s))
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    return _data_dir(tmp_path_factory.mktemp("small"), SMALL)


def _results(summary_path: Path, truth: Path) -> dict[str, str]:
    return {c.id: c.result for c in controls.data_controls(summary_path, truth)}


def test_data_controls_pass_on_the_small_world(small, tmp_path) -> None:
    data, truth = small
    rows = {c.id: c for c in controls.data_controls(_summary(data, tmp_path / "s.json"), truth)}
    assert {k: rows[k].result for k in DATA_IDS} == dict.fromkeys(DATA_IDS, "pass")
    assert all(rows[k].tolerance and not rows[k].negative_control for k in DATA_IDS)
    assert "derived from the configured" in rows["data-selection"].planted


def _mean_side(counts, groups, of):
    return fmean(of(counts[g]) for g in groups)


def _selection_without_abs(counts, attributes):
    return {a: _mean_side(counts, s["marginalized"], lambda c: c["n_toxic"] / c["n"])
            - _mean_side(counts, s["non_marginalized"], lambda c: c["n_toxic"] / c["n"])
            for a, s in attributes.items()}


def _selection_with_max(counts, attributes):
    def side(groups):
        return max(counts[g]["n_toxic"] / counts[g]["n"] for g in groups)
    return {a: abs(side(s["marginalized"]) - side(s["non_marginalized"]))
            for a, s in attributes.items()}


def _selection_over_all_rows(counts, attributes):
    total = sum(c["n"] for c in counts.values())
    return {a: abs(_mean_side(counts, s["marginalized"], lambda c: c["n_toxic"] / total)
                   - _mean_side(counts, s["non_marginalized"], lambda c: c["n_toxic"] / total))
            for a, s in attributes.items()}


def _selection_swapped_groups(counts, attributes):
    swapped = {**counts, "male": counts["female"], "female": counts["male"],
               "black": counts["white"], "white": counts["black"]}
    return dataset_bias.selection_bias(swapped, attributes)


def _overamp_without_normalization(counts, attributes):
    out = dataset_bias.overamplification_bias(counts, attributes)
    return {a: {"raw": v["raw"], "normalized": v["raw"]} for a, v in out.items()}


def _overamp_sum_normalized(counts, attributes):
    out = dataset_bias.overamplification_bias(counts, attributes)
    total = sum(v["raw"] for v in out.values())
    return {a: {"raw": v["raw"], "normalized": v["raw"] / total} for a, v in out.items()}


def _overamp_counts_toxic_rows(counts, attributes):
    return dataset_bias.overamplification_bias(
        {g: {"n": c["n_toxic"], "n_toxic": c["n_toxic"]} for g, c in counts.items()}, attributes)


def _group_counts_strict(df, identities, threshold, label_column="label"):
    """``>`` for ``>=``: rows at exactly the threshold are lost."""
    return dataset_bias.group_counts(df, identities, threshold + 1e-6, label_column)


def _group_counts_single_identity(df, identities, threshold, label_column="label"):
    """Rows about two groups dropped: not Eq. 4's membership."""
    one = (df[list(identities)] >= threshold).fillna(False).sum(axis=1) == 1
    return dataset_bias.group_counts(df[one], identities, threshold, label_column)


METRIC_MUTANTS = {
    "selection: no abs": ("selection_bias", _selection_without_abs, "data-selection"),
    "selection: max for mean": ("selection_bias", _selection_with_max, "data-selection"),
    "selection: wrong denominator": ("selection_bias", _selection_over_all_rows,
                                     "data-selection"),
    "selection: groups swapped": ("selection_bias", _selection_swapped_groups,
                                  "data-selection"),
    "overamplification: not normalized": ("overamplification_bias",
                                          _overamp_without_normalization,
                                          "data-overamplification"),
    "overamplification: sum normalization": ("overamplification_bias",
                                             _overamp_sum_normalized,
                                             "data-overamplification"),
    "overamplification: toxic rows counted": ("overamplification_bias",
                                              _overamp_counts_toxic_rows,
                                              "data-overamplification"),
    "membership: > for >=": ("group_counts", _group_counts_strict, "data-counts"),
    "membership: single identity only": ("group_counts", _group_counts_single_identity,
                                         "data-counts"),
}


@pytest.mark.parametrize("mutant", sorted(METRIC_MUTANTS))
def test_a_broken_metric_fails_its_control(small, tmp_path, monkeypatch, mutant) -> None:
    data, truth = small
    name, broken, control = METRIC_MUTANTS[mutant]
    monkeypatch.setattr(summary, name, broken)
    assert _results(_summary(data, tmp_path / "s.json"), truth)[control] == "FAIL"


def _copy_data(data: Path, tmp: Path) -> Path:
    out = tmp / "data"
    for f in data.rglob("*.parquet"):
        (out / f.relative_to(data)).parent.mkdir(parents=True, exist_ok=True)
        (out / f.relative_to(data)).write_bytes(f.read_bytes())
    return out


def _swap_columns(df: pd.DataFrame) -> pd.DataFrame:
    return df.rename(columns={"male": "female", "female": "male"})


def _drop_multi_identity(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df[IDENTITIES] >= 0.5).fillna(False).sum(axis=1) < 2]


def _flip_a_label(df: pd.DataFrame) -> pd.DataFrame:
    row = df.index[(df["black"] >= 0.5).fillna(False) & (df["label"] == 0)][0]
    return df.assign(label=df["label"].where(df.index != row, 1))


def _lose_a_row(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(index=df.index[(df["jewish"] >= 0.5).fillna(False)][0])


DATA_MUTANTS = {"identity columns swapped": _swap_columns,
                "multi-identity rows lost": _drop_multi_identity,
                "one label flipped": _flip_a_label, "one row lost": _lose_a_row}


@pytest.mark.parametrize("mutant", sorted(DATA_MUTANTS))
def test_broken_training_data_fails_the_counts(small, tmp_path, mutant) -> None:
    data, truth = small
    broken = _copy_data(data, tmp_path)
    train = broken / "civil_comments" / "train.parquet"
    DATA_MUTANTS[mutant](pd.read_parquet(train)).to_parquet(train)
    results = _results(_summary(broken, tmp_path / "s.json"), truth)
    assert results["data-counts"] == "FAIL"
    if mutant != "identity columns swapped":  # Eq. 4 and 5 are symmetric in g and ĝ
        assert "FAIL" in {results["data-selection"], results["data-overamplification"]}


# -- re-stratification --------------------------------------------------------------------


def _restratified(train: pd.DataFrame, select: str, path: Path) -> Path:
    out, _ = restratify(train, identities=IDENTITIES, augment=lambda ts: [t + " !" for t in ts],
                        target_ratio=0.5, seed=0, select=select,
                        identity_threshold=PREPROCESS["identity_threshold"])
    out.to_parquet(path)
    return path


def _restratify_result(path: Path) -> controls.Control:
    return controls.perturbation_controls(
        path, None, identities=IDENTITIES, identity_threshold=PREPROCESS["identity_threshold"],
        target_ratio=0.5)[0]


def test_restratify_control_reads_the_parquet_and_can_fail(small, tmp_path) -> None:
    data, _ = small
    train = pd.read_parquet(data / "civil_comments" / "train.parquet")
    good = _restratify_result(_restratified(train, "identity_label", tmp_path / "a.parquet"))
    assert good.result == "pass" and good.id == "restratify-ratio" and good.tolerance
    # groups counted by their single-identity rows only: the rows about two groups (Eq. 4's
    # membership counts them) keep the groups below the target
    single = _restratify_result(_restratified(train, "single_identity", tmp_path / "b.parquet"))
    assert single.result == "FAIL" and "below" in single.measured
    # synthetic positives lost, or labelled negative
    out = pd.read_parquet(tmp_path / "a.parquet")
    out[~out["is_synthetic"]].to_parquet(tmp_path / "c.parquet")
    assert _restratify_result(tmp_path / "c.parquet").result == "FAIL"
    out.assign(label=np.where(out["is_synthetic"], 0, out["label"])).to_parquet(
        tmp_path / "d.parquet")
    assert _restratify_result(tmp_path / "d.parquet").result == "FAIL"


# -- the null world: the negative control -------------------------------------------------


def test_the_null_world_plants_nothing() -> None:
    world = NULL["world"]
    groups = world["comments"]["groups"]
    assert len({(g["n"], g["toxic_ratio"]) for g in groups.values()}) == 1
    assert len(set(world["comments"]["ambiguous"]["toxic_share"].values())) <= 1
    for classes in world["reviews"]["planted"].values():
        assert set(classes.values()) == {0.5}
    assert NULL["models"]["embedded"]["stereotypes"]["strength"] is None
    small = cfg.load(REPO / "config/config.yaml", REPO / ".test/config/config.yaml",
                     REPO / "config/null_world.yaml", REPO / ".test/config/null_world.yaml")
    assert len({(g["n"], g["toxic_ratio"])
                for g in small["world"]["comments"]["groups"].values()}) == 1


def test_the_null_world_reads_zero_and_is_marked_negative(tmp_path) -> None:
    settings = copy.deepcopy(NULL["world"]["comments"])
    scale = 10  # a tenth of the null world's sizes keeps the test fast
    for spec in settings["groups"].values():
        spec["n"] //= scale
    settings["n_background"] //= scale
    settings["n_unannotated"] //= scale
    data, truth = _data_dir(tmp_path, settings)
    s = _summary(data, tmp_path / "s.json")
    rows = {c.id: c for c in controls.data_controls(s, truth)}
    assert {k: rows[k].result for k in DATA_IDS} == dict.fromkeys(DATA_IDS, "pass")
    assert all(rows[k].negative_control for k in DATA_IDS)
    bias = json.loads(s.read_text())["civil_comments"]["train_dataset_bias"]
    assert all(v == 0 for v in bias["selection"].values())
    assert all(v["raw"] == 0 and v["normalized"] == 0
               for v in bias["overamplification"].values())
    # a metric that reads a difference where none is planted fails the negative control
    s2 = json.loads(s.read_text())
    s2["civil_comments"]["train_dataset_bias"]["selection"]["race"] = 0.01
    (tmp_path / "s2.json").write_text(json.dumps(s2))
    assert _results(tmp_path / "s2.json", truth)["data-selection"] == "FAIL"


def test_the_command_reads_the_restratified_parquet_with_the_configured_membership(
        small, tmp_path) -> None:
    from biasrepro.cli import main

    data, _ = small
    train = pd.read_parquet(data / "civil_comments" / "train.parquet")
    parquet = _restratified(train, "identity_label", tmp_path / "r.parquet")
    settings = json.dumps({"identities": IDENTITIES,
                           "preprocess.civil_comments.identity_threshold": 0.5,
                           "perturbation.restratify.target_ratio": 0.5})
    assert main(["analysis", "controls", "--stratified", str(parquet), "--settings", settings,
                 "--out-dir", str(tmp_path / "out")]) == 0
    rows = {r["id"]: r for r in json.loads((tmp_path / "out/controls.json").read_text())[
        "controls"]}
    assert rows["restratify-ratio"]["result"] == "pass"
    assert set(controls.COLUMNS) <= set(rows["restratify-ratio"])
    assert main(["analysis", "controls", "--stratified", str(parquet),
                 "--out-dir", str(tmp_path / "bad")]) != 0
