"""The toxicity study's tables: joining predictions, SenseScore pairs, dataset bias of
training sets, the Pearson groupings and the report writer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasrepro.errors import DataError
from biasrepro.fairness.correlations import correlation_table
from biasrepro.fairness.evaluation import dataset_bias, evaluate, join_predictions, sense_scores
from biasrepro.fairness.report import FILES, prediction_key, write_report
from biasrepro.io import write_parquet

ATTRS = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
         "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]}}
SETTINGS = {"seed": 3, "attributes": ATTRS,
            "fairness": {"threshold": 0.5, "bootstrap": {"resamples": 50, "confidence": 0.9},
                         "attributes": {"toxicity": ["gender", "race"]},
                         "sense_pairs": {"gender": ["male", "female"],
                                         "race": ["black", "white"]}},
            "preprocess": {"civil_comments": {"identity_threshold": 0.5}}}


def _balanced(n_sources: int = 8) -> pd.DataFrame:
    """Every source sentence in every group of its attribute, labels alternating."""
    rows = []
    for attr, groups in (("gender", ["male", "female"]), ("race", ["black", "white", "asian"])):
        for i in range(n_sources):
            src_group = groups[i % len(groups)]
            sid = f"{attr}{i}"
            for g in groups:
                rows.append({"id": sid if g == src_group else f"{sid}>{g}",
                             "text": f"sentence {sid} about {g}", "label": i % 2,
                             "identity": g, "attribute": attr, "source_id": sid,
                             "source_identity": src_group,
                             "is_counterfactual": g != src_group})
    return pd.DataFrame(rows)


def _probs(frame: pd.DataFrame, shift: dict[str, float]) -> pd.DataFrame:
    """A model scoring label*0.6 + 0.2 plus a per-group shift."""
    prob = frame["label"] * 0.6 + 0.2 + frame["identity"].map(shift).fillna(0.0)
    return pd.DataFrame({"id": frame["id"], "label": frame["label"],
                         "prob": prob.clip(0, 1)})


def test_join_matches_ids_in_any_order_and_refuses_mismatches() -> None:
    fset = _balanced()
    pred = _probs(fset, {}).sample(frac=1, random_state=0)
    joined = join_predictions(fset, pred, file="p.parquet")
    assert list(joined["id"]) == list(fset["id"])
    assert np.allclose(joined["prob"], fset["label"] * 0.6 + 0.2)
    with pytest.raises(DataError, match="one to one"):
        join_predictions(fset, pred.iloc[1:], file="p.parquet")
    bad = pred.copy()
    bad.loc[bad.index[0], "label"] = 1 - bad.loc[bad.index[0], "label"]
    with pytest.raises(DataError, match="differs from the fairness set"):
        join_predictions(fset, bad, file="p.parquet")
    with pytest.raises(DataError, match="column 'prob'"):
        join_predictions(fset, pred.drop(columns="prob"), file="p.parquet")


def test_sense_score_compares_the_two_versions_of_each_source_sentence() -> None:
    fset = _balanced()
    joined = join_predictions(fset, _probs(fset, {"female": 0.1, "black": -0.05,
                                                  "white": 0.15}), file="p")
    table = sense_scores(joined, SETTINGS["fairness"]["sense_pairs"], ["gender", "race"])
    gender = table.set_index("attribute").loc["gender"]
    assert gender["n_pairs"] == 8
    assert gender["sense_score"] == pytest.approx(0.1)
    race = table.set_index("attribute").loc["race"]
    # sources written about black or white (not asian): i % 3 in (0, 1) for i < 8 -> 6
    assert race["n_pairs"] == 6
    assert race["mean_difference"] == pytest.approx(0.2)     # f(white) - f(black)
    assert race["sense_score"] == pytest.approx(0.2)
    # read literally (x = the version written, x̂ = its counterfactual) the two directions
    # cancel: 3 sentences about black count +0.2, 3 about white count -0.2
    assert race["sense_score_factual"] == pytest.approx(0.0)
    assert gender["sense_score_factual"] == pytest.approx(0.0)


def test_factual_sense_score_weighs_each_direction_by_its_sentences() -> None:
    fset = _balanced(7)                  # 4 sentences written about male, 3 about female
    joined = join_predictions(fset, _probs(fset, {"female": 0.1}), file="p")
    gender = sense_scores(joined, SETTINGS["fairness"]["sense_pairs"],
                          ["gender"]).set_index("attribute").loc["gender"]
    assert gender["sense_score"] == pytest.approx(0.1)
    assert gender["sense_score_factual"] == pytest.approx((4 * 0.1 - 3 * 0.1) / 7)


def test_evaluate_gives_gaps_groups_and_borkan_with_power_mean() -> None:
    fset = _balanced(12)
    joined = join_predictions(fset, _probs(fset, {"female": 0.35}), file="p")
    out = evaluate(joined, ATTRS, threshold=0.5, resamples=40, confidence=0.9, seed=1)
    gaps = out["gaps"].set_index(["attribute", "metric"])["value"]
    assert gaps["gender", "FPR_gap"] == pytest.approx(1.0)   # female negatives at 0.55
    assert gaps["race", "FPR_gap"] == pytest.approx(0.0)
    assert set(out["borkan"]["identity"]) >= {"male", "female", "power_mean_-5"}
    assert len(out["groups"]) == 5


def test_dataset_bias_from_identity_columns_gender_column_or_none() -> None:
    train = pd.DataFrame({
        "label": [1, 0, 0, 0, 1, 1, 0, 0, 0, 0],
        "male": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0.0], "female": [0, 0, 0, 0, 1, 1, 1, 0, 0, 0.0],
        "black": [0, 0, 0, 0, 0, 0, 0, 1, 0, 0.0], "asian": [0, 0, 0, 0, 0, 0, 0, 0, 1, 0.0],
        "white": [0, 0, 0, 0, 0, 0, 0, 0, 0, 1.0]})
    bias, groups = dataset_bias(train, ATTRS, identity_threshold=0.5)
    row = bias.set_index("attribute").loc["gender"]
    assert row["selection"] == pytest.approx(abs(2 / 3 - 1 / 4))
    assert row["overamplification_raw"] == 1
    assert row["overamplification"] == 1.0                  # max over attributes is gender
    assert row["overamplification_share"] == pytest.approx(0.1)
    assert groups.set_index("group").loc["female", "positive_ratio"] == pytest.approx(2 / 3)
    gendered = pd.DataFrame({"label": [1, 0, 1, 1], "gender": ["male", "male", "female",
                                                               "female"]})
    gb, _ = dataset_bias(gendered, {"gender": ATTRS["gender"]}, identity_threshold=0.5)
    assert gb.loc[0, "selection"] == pytest.approx(0.5)
    none, _ = dataset_bias(pd.DataFrame({"label": [0, 1]}), ATTRS, identity_threshold=0.5)
    assert none["selection"].isna().all()
    assert "no identity annotation" in none.loc[0, "note"]


def test_correlations_are_grouped_as_the_paper_with_n() -> None:
    rng = np.random.default_rng(0)
    gaps = pd.DataFrame([
        {"model": m, "method": meth, "fairness_set": fs, "attribute": a, "metric": metric,
         "value": float(rng.random())}
        for m in ("bert", "roberta") for meth in ("baseline", "perturbed")
        for fs in ("original", "balanced") for a in ("gender", "race", "religion")
        for metric in ("FPR_gap", "TPR_gap", "AUC_gap")])
    bias = pd.DataFrame([{"method": meth, "attribute": a, "selection": float(rng.random()),
                          "overamplification": float(rng.random()),
                          "overamplification_raw": float(rng.random())}
                         for meth in ("baseline", "perturbed")
                         for a in ("gender", "race", "religion")])
    table = correlation_table(gaps, bias)
    fm = table[table["group"] == "fairness_metrics"]
    assert len(fm) == 6 and set(fm["n"]) == {6}               # 2 models x 3 attributes
    both = table[(table["group"] == "bias_vs_fairness") & (table["model"] == "bert")]
    assert sorted(set(both["fairness_set"])) == ["balanced", "original"]   # Figure 2
    t9 = both[both["fairness_set"] == "balanced"]
    assert len(t9) == 6 and set(t9["n"]) == {3}
    assert (t9["note"].str.contains("no confidence interval")).all()
    across = table[table["group"] == "bias_vs_fairness_across_methods"]
    assert set(across["n"]) == {6}
    # overamplification: max-normalised within the baseline's set, raw across methods
    assert set(both["x"]) == {"selection", "overamplification"}
    assert set(across["x"]) == {"selection", "overamplification_raw"}
    # the pooled Table 9 row: 2 models x 3 attributes, the 3 attributes' dataset bias
    pooled = table[(table["group"] == "bias_vs_fairness") & (table["model"] == "all")]
    assert set(pooled["n"]) == {6} and set(pooled["distinct_x"]) == {3}
    assert set(pooled["distinct_y"]) == {6}
    assert (pooled["cluster_permutations"] == "exact (6 orderings)").all()
    assert (pooled["p_cluster"] >= 1 / 6).all()
    assert pooled["note"].str.contains("share 3 x values").all()
    # representation rows join per (model, method): the pretrained model's for both methods
    rep = pd.DataFrame([{"model": m, "method": meth, "attribute": a,
                         "source": "representation_crows", "value": float(rng.random())}
                        for m in ("bert", "roberta") for meth in ("baseline", "perturbed")
                        for a in ("gender", "race", "religion")])
    with_rep = correlation_table(gaps, bias, representation=rep)
    crows = with_rep[(with_rep["x"] == "representation_crows")
                     & (with_rep["group"] == "bias_vs_fairness")]
    assert len(crows) == 2 * 3 * 3 and set(crows["n"]) == {3, 6}   # sets x metrics x models
    # a hand check of one ρ
    sub = gaps[(gaps.method == "baseline") & (gaps.fairness_set == "balanced")
               & (gaps.model == "bert")]
    x = bias[bias.method == "baseline"].set_index("attribute")["selection"]
    y = sub[sub.metric == "AUC_gap"].set_index("attribute")["value"]
    rho = np.corrcoef(x.loc[y.index], y)[0, 1]
    got = t9[(t9["x"] == "selection") & (t9["y"] == "AUC_gap")]["rho"].iloc[0]
    assert got == pytest.approx(rho)


def test_across_methods_compare_raw_overamplification() -> None:
    """A debiased set with a smaller raw gap scores lower, not 1.0 like the baseline."""
    attrs = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
             "race": {"marginalized": ["black"], "non_marginalized": ["white"]}}
    def train(sizes: dict[str, int]) -> pd.DataFrame:
        rows = [{g: float(g == group) for g in sizes} | {"label": 0}
                for group, n in sizes.items() for _ in range(n)]
        return pd.DataFrame(rows)
    base, _ = dataset_bias(train({"female": 10, "male": 30, "black": 5, "white": 25}), attrs,
                           identity_threshold=0.5)
    fair, _ = dataset_bias(train({"female": 20, "male": 21, "black": 14, "white": 16}), attrs,
                           identity_threshold=0.5)
    bias = pd.concat([base.assign(method="baseline"), fair.assign(method="perturbed")])
    assert set(bias["overamplification"]) == {1.0, 0.5}   # both sets top out at 1.0
    gaps = pd.DataFrame([
        {"model": "bert", "method": meth, "fairness_set": "balanced", "attribute": a,
         "metric": metric, "value": v}
        for meth, vs in (("baseline", (0.2, 0.2)), ("perturbed", (0.01, 0.02)))
        for a, v in zip(attrs, vs, strict=True) for metric in ("FPR_gap", "TPR_gap", "AUC_gap")])
    table = correlation_table(gaps, bias)
    across = table[(table["group"] == "bias_vs_fairness_across_methods")
                   & (table["x"] == "overamplification_raw")]
    assert len(across) == 3 and set(across["n"]) == {4}
    # raw x (20, 20, 1, 2) tracks the gaps; the normalised x (1.0, 1.0, 0.5, 1.0) would not
    assert (across["rho"] > 0.99).all() and set(across["distinct_x"]) == {3}
    normalised = np.corrcoef([1.0, 1.0, 0.5, 1.0], [0.2, 0.2, 0.01, 0.02])[0, 1]
    assert normalised < 0.7
    missing = bias.drop(columns="overamplification_raw")
    with pytest.raises(DataError, match="overamplification_raw"):
        correlation_table(gaps, missing)


def test_prediction_paths_name_model_method_and_set() -> None:
    assert prediction_key(Path("r/p/toxicity/bert/baseline/fairness-balanced.parquet")) == (
        "bert", "baseline", "balanced")
    with pytest.raises(DataError, match="unknown fairness set"):
        prediction_key(Path("r/bert/baseline/fairness-other.parquet"))
    with pytest.raises(DataError, match="expected a path"):
        prediction_key(Path("r/bert/baseline/test.parquet"))


def _write_inputs(tmp: Path) -> tuple[Path, Path, list[Path], dict[str, Path]]:
    bal = _balanced(12)
    orig = bal[~bal["is_counterfactual"]].reset_index(drop=True)
    write_parquet(orig, tmp / "original.parquet")
    write_parquet(bal, tmp / "balanced.parquet")
    preds = []
    for model in ("bert", "roberta"):
        for method, shift in (("baseline", {"female": 0.35}), ("perturbed", {})):
            for name, frame in (("original", orig), ("balanced", bal)):
                path = tmp / "pred" / model / method / f"fairness-{name}.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_parquet(_probs(frame, shift), path)
                preds.append(path)
    train = pd.DataFrame({"id": list("abcd"), "text": ["t"] * 4, "label": [1, 0, 0, 0],
                          "male": [1, 1, 0, 0.0], "female": [0, 0, 1, 0.0],
                          "black": [0, 0, 0, 1.0], "white": [0, 0, 0, 0.0],
                          "asian": [0, 0, 0, 0.0]})
    write_parquet(train, tmp / "train.parquet")
    return (tmp / "original.parquet", tmp / "balanced.parquet", preds,
            {"baseline": tmp / "train.parquet", "perturbed": tmp / "train.parquet"})


def test_report_writes_every_table_and_is_reproducible(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    for out in ("a", "b"):
        write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                     training=training, settings=SETTINGS, out_dir=tmp_path / out)
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    gaps = pd.read_csv(tmp_path / "a" / "gaps.csv")
    assert len(gaps) == 2 * 2 * 2 * 2 * 3       # model x method x set x attribute x metric
    base = gaps[(gaps.method == "baseline") & (gaps.fairness_set == "balanced")
                & (gaps.metric == "FPR_gap") & (gaps.attribute == "gender")]
    assert (base["value"] == 1.0).all() and (base["low"] <= base["value"]).all()
    resampling = gaps.groupby("fairness_set")["resampling"].unique()
    assert list(resampling["balanced"]) == ["paired"]          # source sentences resampled
    assert list(resampling["original"]) == ["stratified"]
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["fairness_sets"]["balanced"]["rows"] == 12 * 2 + 12 * 3
    sense = pd.read_csv(tmp_path / "a" / "sensescore.csv")
    assert len(sense) == 2 * 2 * 2
    assert "| balanced | bert | baseline | gender |" in (tmp_path / "a" / "gaps.md").read_text()


def test_report_refuses_a_mismatched_predictions_file_and_leaves_nothing(tmp_path: Path
                                                                         ) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    bad = preds[0]
    write_parquet(pd.read_parquet(bad).iloc[2:], bad)
    with pytest.raises(DataError, match="one to one"):
        write_report(task="toxicity", original=original, balanced=balanced,
                     predictions=preds, training=training, settings=SETTINGS,
                     out_dir=tmp_path / "out")
    assert not any((tmp_path / "out" / f).exists() for f in FILES)


def test_undefined_gap_is_nan_with_its_reason(tmp_path: Path) -> None:
    fset = _balanced(12)
    fset.loc[fset["identity"] == "male", "label"] = 1      # male: no negatives -> FPR NaN
    joined = join_predictions(fset, _probs(fset, {}), file="p")
    gaps = evaluate(joined, ATTRS, threshold=0.5, resamples=20, confidence=0.9,
                    seed=0)["gaps"].set_index(["attribute", "metric"])
    assert math.isnan(gaps.loc[("gender", "FPR_gap"), "value"])
    assert "no negatives" in gaps.loc[("gender", "FPR_gap"), "note"]


# -- the model-works gate -------------------------------------------------------------------

GATED = {**SETTINGS, "fairness": {**SETTINGS["fairness"], "model_floor": {"toxicity": 0.75}}}


def _test_split(tmp: Path, model: str, method: str, prob: list[float],
                label: list[int] | None = None) -> Path:
    path = tmp / "pred" / model / method / "test.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    label = label if label is not None else [i % 2 for i in range(len(prob))]
    write_parquet(pd.DataFrame({"id": [f"t{i}" for i in range(len(prob))], "label": label,
                                "prob": prob}), path)
    return path


def test_the_gate_flags_a_model_below_the_floor_and_correlations_leave_it_out(
        tmp_path: Path) -> None:
    """Three of four models rank their test split well; roberta/perturbed predicts a
    constant (AUC 0.5): it is marked in models.csv, gaps.csv and gaps.md, its points are not
    in the correlations, and correlations.md names it with its reason."""
    original, balanced, preds, training = _write_inputs(tmp_path)
    good = [0.1, 0.9] * 10
    tests = [_test_split(tmp_path, m, me, good) for m, me in
             (("bert", "baseline"), ("bert", "perturbed"), ("roberta", "baseline"))]
    tests.append(_test_split(tmp_path, "roberta", "perturbed", [0.4] * 20))
    for name, settings in (("gated", GATED), ("open", SETTINGS)):
        write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                     training=training, settings=settings, out_dir=tmp_path / name,
                     test_predictions=tests)
    models = pd.read_csv(tmp_path / "gated" / "models.csv").set_index(["model", "method"])
    assert models["model_works"].to_dict() == {
        ("bert", "baseline"): True, ("bert", "perturbed"): True,
        ("roberta", "baseline"): True, ("roberta", "perturbed"): False}
    assert models.loc[("roberta", "perturbed"), "test_auc"] == pytest.approx(0.5)
    assert models.loc[("bert", "baseline"), "test_auc"] == pytest.approx(1.0)
    assert "below the floor 0.75" in models.loc[("roberta", "perturbed"), "note"]
    gaps = pd.read_csv(tmp_path / "gated" / "gaps.csv")
    assert (gaps["model_works"] == ((gaps["model"] != "roberta")
                                    | (gaps["method"] != "perturbed"))).all()
    for name in ("group_metrics.csv", "borkan.csv", "sensescore.csv"):
        assert "model_works" in pd.read_csv(tmp_path / "gated" / name).columns, name
    assert "roberta (below the floor)" in (tmp_path / "gated" / "gaps.md").read_text()
    md = (tmp_path / "gated" / "correlations.md").read_text()
    assert "roberta/perturbed (test ROC-AUC 0.500 below the floor 0.75)" in md
    def n(name: str, model: str) -> int:
        corr = pd.read_csv(tmp_path / name / "correlations.csv")
        (row,) = corr[(corr["group"] == "bias_vs_fairness_across_methods")
                      & (corr["model"] == model) & (corr["fairness_set"] == "balanced")
                      & (corr["x"] == "overamplification_raw")
                      & (corr["y"] == "FPR_gap")]["n"]
        return int(row)

    # method x attribute points: roberta keeps its baseline's 2 of 4, bert all 4
    assert (n("gated", "roberta"), n("open", "roberta")) == (2, 4)
    assert (n("gated", "bert"), n("open", "bert")) == (4, 4)
    report = json.loads((tmp_path / "gated" / "report.json").read_text())
    assert [m["model_works"] for m in report["models"]] == [True, True, True, False]
    # no floor for the task: nothing is checked, and the table says so
    assert set(pd.read_csv(tmp_path / "open" / "models.csv")["note"]) == {
        "not checked: fairness.model_floor has no value for the task"}


def test_a_model_predicting_one_class_fails_the_gate_whatever_it_ranks(tmp_path: Path) -> None:
    """AUC 1.0, but every probability under the threshold: its FPR and TPR gaps would be 0
    by construction."""
    from biasrepro.fairness.report import model_checks

    path = _test_split(tmp_path, "m", "x", [0.1, 0.2] * 10)
    out = model_checks([("m", "x")], {("m", "x"): (path, pd.read_parquet(path))}, 0.75, 0.5)
    row = out.iloc[0]
    assert (row["test_auc"], row["predicted_positive"], row["model_works"]) == (1.0, 0.0, False)
    assert row["note"].startswith("predicts no test text positive at the threshold 0.5")
    one_class = _test_split(tmp_path, "m", "y", [0.1, 0.9], [1, 1])
    out = model_checks([("m", "y")], {("m", "y"): (one_class, pd.read_parquet(one_class))},
                       0.75, 0.5)
    assert not out.iloc[0]["model_works"]
    assert out.iloc[0]["note"] == "ROC-AUC undefined: the test split has one class"


def test_the_gate_refuses_a_missing_or_second_test_file_and_a_bad_path(tmp_path: Path) -> None:
    original, balanced, preds, training = _write_inputs(tmp_path)
    one = _test_split(tmp_path, "bert", "baseline", [0.1, 0.9] * 5)
    with pytest.raises(DataError, match="no test-split predictions of bert/perturbed"):
        write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                     training=training, settings=GATED, out_dir=tmp_path / "o",
                     test_predictions=[one])
    with pytest.raises(DataError, match="a second test-split predictions file"):
        write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                     training=training, settings=GATED, out_dir=tmp_path / "o",
                     test_predictions=[one, one])
    bad = tmp_path / "pred" / "bert" / "baseline" / "fairness-original.parquet"
    with pytest.raises(DataError, match="expected a path .../MODEL/METHOD/test.parquet"):
        write_report(task="toxicity", original=original, balanced=balanced, predictions=preds,
                     training=training, settings=GATED, out_dir=tmp_path / "o",
                     test_predictions=[bad])
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
