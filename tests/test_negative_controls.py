"""The null world's negative controls: every planted-bias control knows from the world's
ground truth that nothing is planted, then expects its statistic to read zero within a stated
tolerance, is marked negative_control, and FAILS when a metric reads a clear difference.

The ground truths are the world generators' own (small sizes); the results are synthetic
files in the shapes the run writes (BiasFinder's table4.csv, the fairness report's gaps.csv,
sensescore.csv and dataset_bias.csv, the representation table4.csv)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binom

from biasrepro import config as cfg
from biasrepro.analysis import controls
from biasrepro.data.world import comments, reviews, stereotypes
from biasrepro.data.world.benchmarks import ITEMS

REPO = Path(__file__).resolve().parents[1]
SMALL = (REPO / "config/config.yaml", REPO / ".test/config/config.yaml")
WORLDS = {
    "planted": cfg.load(*SMALL),
    "null": cfg.load(*SMALL, REPO / "config/null_world.yaml",
                     REPO / ".test/config/null_world.yaml"),
}
MODELS = ("albert-tiny", "bert-tiny")
ATTRIBUTES = ("gender", "race", "religion")
#: every control but restratify-ratio, a construction that is the same in every world
NEGATIVE = ("data-counts", "data-selection", "data-overamplification", "perturb-selection",
            "btc-gender-strongest", "btc-perturbed-lower", "tox-fpr-gap", "tox-sensescore",
            "rep-stereoset", "rep-crows", "rep-seat-debias")


def _truths(c: dict, out: Path) -> dict[str, Path]:
    """The three ground_truth.json files the world's generators write for config ``c``."""
    world, seed = c["world"], c["seed"]
    reviews.generate(copy.deepcopy(world["reviews"]), seed=seed, out_dir=out / "imdb")
    comments.generate(copy.deepcopy(world["comments"]), seed=seed, identities=c["identities"],
                      attributes=copy.deepcopy(c["attributes"]),
                      preprocess=copy.deepcopy(c["preprocess"]["civil_comments"]),
                      out_dir=out / "civil_comments")
    stereotypes.generate(copy.deepcopy(c["models"]["embedded"]["stereotypes"]), seed=seed,
                         out_dir=out / "stereotypes")
    return {k: out / d / "ground_truth.json"
            for k, d in (("reviews", "imdb"), ("comments", "civil_comments"),
                         ("stereotypes", "stereotypes"))}


@pytest.fixture(scope="module")
def truths(tmp_path_factory) -> dict[str, dict[str, Path]]:
    return {name: _truths(c, tmp_path_factory.mktemp(name)) for name, c in WORLDS.items()}


def test_the_truth_files_say_whether_anything_is_planted(truths) -> None:
    for name, paths in truths.items():
        read = {k: json.loads(p.read_text()) for k, p in paths.items()}
        null = name == "null"
        assert controls.comments_null(read["comments"], paths["comments"]) is null
        assert controls.reviews_null(read["reviews"], paths["reviews"]) is null
        assert controls.stereotypes_null(read["stereotypes"]) is null


def test_a_truth_that_plants_one_thing_is_not_null(truths) -> None:
    paths = truths["null"]
    t = json.loads(paths["reviews"].read_text())
    t["settings"]["planted"]["country"]["Norway"] = 0.6
    assert not controls.reviews_null(t, paths["reviews"])
    t = json.loads(paths["comments"].read_text())
    t["ambiguous"]["muslim"]["n_toxic"] += 1  # one more toxic comment without a cue
    assert not controls.comments_null(t, paths["comments"])
    t = json.loads(paths["stereotypes"].read_text())
    t["pairs"]["race"]["black"]["loud"] += 2
    assert not controls.stereotypes_null(t)


# -- results in the run's shapes ------------------------------------------------------------


def _biasfinder(path: Path, rates: dict[tuple[str, str, str], float]) -> Path:
    """BiasFinder's table4.csv: per model, method and characteristic (and total)."""
    classes = {"gender": 2.0, "occupation": 100.0, "country": 26.0}
    rows = []
    for model in MODELS:
        for method in ("baseline", "downstream-perturbed-data"):
            for char, k in classes.items():
                rate = rates.get((model, method, char), 0.04)
                pairs = 2500
                rows.append({"model": model, "method": method, "threshold": 0.5,
                             "lists": "project", "occupation_templates": "each_distinct",
                             "characteristic": char, "classes": k, "templates": 25,
                             "mutants": 300, "btc": round(rate * pairs), "possible_pairs": pairs,
                             "btc_rate": rate, "aligned_pairs": pairs,
                             "aligned_btc": round(rate * pairs), "aligned_btc_rate": rate,
                             "templates_with_btc": 3})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _toxicity(d: Path, *, gap: dict | None = None, sense: dict | None = None,
              selection: dict | None = None) -> Path:
    """The toxicity fairness report.json with gaps.csv, sensescore.csv and dataset_bias.csv
    beside it; every cell reads zero unless given: ``gap`` (model, method, attribute) ->
    (value, low, high), ``sense`` -> SenseScore, ``selection`` (method, attribute) -> Eq. 4."""
    d.mkdir(parents=True, exist_ok=True)
    gap, sense, selection = gap or {}, sense or {}, selection or {}
    gaps, scores, bias = [], [], []
    for model in MODELS:
        for method in ("baseline", "downstream-perturbed-data", "upstream-sentDebias-gender"):
            for attr in ATTRIBUTES:
                for fset in ("original", "balanced"):
                    for metric in ("FPR_gap", "TPR_gap", "AUC_gap"):
                        value, low, high = (gap.get((model, method, attr), (0.01, 0.0, 0.05))
                                            if (fset, metric) == ("balanced", "FPR_gap")
                                            else (0.3, 0.2, 0.4))  # not what is checked
                        gaps.append({"model": model, "method": method, "fairness_set": fset,
                                     "attribute": attr, "metric": metric, "value": value,
                                     "low": low, "high": high, "resamples": 200,
                                     "resampling": "paired" if fset == "balanced"
                                     else "stratified", "note": ""})
                s = sense.get((model, method, attr), 0.003)
                scores.append({"model": model, "method": method, "attribute": attr, "g": "x",
                               "g_hat": "y", "n_pairs": 26, "sense_score": s,
                               "mean_difference": -s, "sense_score_factual": s / 2, "note": ""})
    for method in ("baseline", "downstream-perturbed-data"):
        for attr in ATTRIBUTES:
            bias.append({"method": method, "attribute": attr,
                         "selection": selection.get((method, attr), 0.0),
                         "overamplification_raw": 0.0, "overamplification": 0.0,
                         "overamplification_share": 0.0, "note": ""})
    members = [g for attr in ATTRIBUTES for side in WORLDS["planted"]["attributes"][attr].values()
               for g in side]
    groups = [{"model": model, "method": method, "fairness_set": "balanced", "group": g,
               "fpr": 0.1} for model in MODELS
              for method in ("baseline", "downstream-perturbed-data", "upstream-sentDebias-gender")
              for g in members]
    pd.DataFrame(gaps).to_csv(d / "gaps.csv", index=False)
    pd.DataFrame(groups).to_csv(d / "group_metrics.csv", index=False)
    pd.DataFrame(scores).to_csv(d / "sensescore.csv", index=False)
    pd.DataFrame(bias).to_csv(d / "dataset_bias.csv", index=False)
    settings = {"fairness": {"bootstrap": {"confidence": 0.95, "resamples": 200}}}
    (d / "report.json").write_text(json.dumps({"task": "toxicity", "settings": settings}))
    return d / "report.json"


def _representation(path: Path, scores: dict[tuple[str, str, str], float] | None = None
                    ) -> Path:
    """The representation table4.csv; every score 50 (SEAT 0.4) unless ``scores`` (model,
    attribute, source) says otherwise."""
    scores = scores or {}
    rows = []
    for model in MODELS:
        for variant in ("pretrained", *(f"sentdebias-{a}" for a in ATTRIBUTES)):
            for attr in ATTRIBUTES:
                for source, default in (("crows", 50.0), ("stereoset", 50.0), ("seat", 0.4)):
                    value = scores.get((model, attr, source), default)
                    rows.append({"model": model, "variant": variant, "attribute": attr,
                                 "source": source,
                                 "value": value if variant == "pretrained" else default})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _by_id(rows: list[controls.Control]) -> dict[str, controls.Control]:
    return {c.id: c for c in rows}


# -- the null world reads zero ----------------------------------------------------------------


def test_every_null_control_reads_zero_states_its_tolerance_and_is_marked(truths,
                                                                          tmp_path) -> None:
    t = truths["null"]
    rows = _by_id(
        controls.perturbation_controls(None, _toxicity(tmp_path / "tox"), truth=t["comments"])
        + controls.biasfinder_controls(_biasfinder(tmp_path / "bf.csv", {}), t["reviews"])
        + controls.toxicity_controls(tmp_path / "tox" / "report.json", t["comments"])
        + controls.representation_controls(_representation(tmp_path / "rep.csv"),
                                           t["stereotypes"]))
    judged = [i for i in NEGATIVE if i in rows and i != "rep-seat-debias"]
    assert len(judged) == 7
    for i in judged:
        assert rows[i].result == "pass", (i, rows[i].measured)
        assert rows[i].negative_control, i
        assert rows[i].tolerance, i
        assert "nothing planted" in rows[i].planted, i
        assert rows[i].expected.startswith(("reads zero", "reads no bias")), i
    # the workflow's report renders the rows as reStructuredText: |x| is a substitution there,
    # and only |Δ| is defined (workflow/report/workflow.rst)
    for row in rows.values():
        text = " ".join([row.control, row.planted, row.expected, row.measured, row.tolerance])
        assert set(re.findall(r"\|([^|\s][^|]*?)\|", text)) <= {"Δ"}, row.id
    # SentenceDebias's SEAT reduction has no null reading: listed with its pretrained effect sizes
    seat = rows["rep-seat-debias"]
    assert seat.passed is None and seat.negative_control
    assert "albert-tiny gender 0.40" in seat.measured
    assert rows["restratify-ratio"].result == "not run"
    assert not rows["restratify-ratio"].negative_control
    assert rows["tox-fpr-gap"].measured.startswith("12/12 cells read zero")
    assert "95% bootstrap interval contains 0" in rows["tox-fpr-gap"].tolerance


def test_the_same_readings_fail_the_planted_world(truths, tmp_path) -> None:
    """Where the world plants, nothing read zero is what the planted expectations refuse."""
    t = truths["planted"]
    rows = _by_id(
        controls.biasfinder_controls(_biasfinder(tmp_path / "bf.csv", {}), t["reviews"])
        + controls.representation_controls(_representation(tmp_path / "rep.csv"),
                                           t["stereotypes"]))
    for i in ("btc-gender-strongest", "btc-perturbed-lower", "rep-stereoset", "rep-crows"):
        assert rows[i].result == "FAIL" and not rows[i].negative_control, i


def test_every_control_of_the_null_world_is_marked_even_when_not_run(truths) -> None:
    t = truths["null"]
    rows = controls.controls(controls.Inputs(comments_truth=t["comments"],
                                             reviews_truth=t["reviews"],
                                             stereotypes_truth=t["stereotypes"]))
    by = _by_id(rows)
    assert all(by[i].negative_control for i in NEGATIVE if by[i].passed is None
               and not by[i].id.startswith("data-"))


# -- and fails where a metric reads a clear difference -------------------------------------

BF_MUTANTS = {
    # gender BTCs far above occupation's and country's in one model
    "gender strongest": ({("bert-tiny", "baseline", "gender"): 0.30}, "btc-gender-strongest"),
    # perturbation lowers a gender sensitivity that was never planted
    "perturbation lowers": ({**{(m, "baseline", "gender"): 0.08 for m in MODELS},
                             ("albert-tiny", "baseline", "gender"): 0.2},
                            "btc-perturbed-lower"),
}


@pytest.mark.parametrize("mutant", sorted(BF_MUTANTS))
def test_a_biasfinder_difference_fails_the_null_world(truths, tmp_path, mutant) -> None:
    rates, control = BF_MUTANTS[mutant]
    rows = _by_id(controls.biasfinder_controls(_biasfinder(tmp_path / "bf.csv", rates),
                                               truths["null"]["reviews"]))
    assert rows[control].result == "FAIL" and rows[control].negative_control
    assert rows[control].measured.startswith("1/2 models")


def test_biasfinder_null_tolerance_is_the_stated_one(truths, tmp_path) -> None:
    edge = {("albert-tiny", "baseline", "gender"): 0.04 + controls.NULL_BTC - 1e-6}
    rows = _by_id(controls.biasfinder_controls(_biasfinder(tmp_path / "bf.csv", edge),
                                               truths["null"]["reviews"]))
    assert rows["btc-gender-strongest"].result == "pass"
    assert f"at most {controls.NULL_BTC:g}" in rows["btc-gender-strongest"].tolerance


TOX_MUTANTS = {
    # a baseline gap whose interval excludes 0, far above the margin
    "FPR gap": ({"gap": {("bert-tiny", "baseline", "race"): (0.2, 0.1, 0.3)}}, "tox-fpr-gap"),
    # the perturbed-data model's too
    "perturbed FPR gap": ({"gap": {("albert-tiny", "downstream-perturbed-data", "gender"):
                                   (0.08, 0.03, 0.12)}}, "tox-fpr-gap"),
    "FPR gap undefined": ({"gap": {("bert-tiny", "baseline", "gender"):
                                   (float("nan"),) * 3}}, "tox-fpr-gap"),
    "SenseScore": ({"sense": {("albert-tiny", "baseline", "religion"): 0.1}},
                   "tox-sensescore"),
    "perturbed selection": ({"selection": {("downstream-perturbed-data", "race"): 0.05}},
                            "perturb-selection"),
    "original selection": ({"selection": {("baseline", "gender"): 0.01}},
                           "perturb-selection"),
}


@pytest.mark.parametrize("mutant", sorted(TOX_MUTANTS))
def test_a_toxicity_difference_fails_the_null_world(truths, tmp_path, mutant) -> None:
    kwargs, control = TOX_MUTANTS[mutant]
    report = _toxicity(tmp_path / "tox", **kwargs)
    truth = truths["null"]["comments"]
    rows = _by_id(controls.toxicity_controls(report, truth)
                  + controls.perturbation_controls(None, report, truth=truth))
    assert rows[control].result == "FAIL" and rows[control].negative_control
    others = {"tox-fpr-gap", "tox-sensescore", "perturb-selection"} - {control}
    assert all(rows[o].result == "pass" for o in others)


@pytest.mark.parametrize(("cell", "result"), [
    ((0.3, 0.0, 0.6), "pass"),      # a wide interval that holds 0: nothing found
    ((0.015, 0.005, 0.03), "pass"),  # off 0 but within the stated margin
    ((0.04, 0.02, 0.06), "FAIL"),   # off 0 and beyond it
])
def test_an_fpr_gap_reads_zero_by_its_interval_or_the_margin(truths, tmp_path, cell,
                                                             result) -> None:
    report = _toxicity(tmp_path / "tox", gap={("albert-tiny", "baseline", "gender"): cell})
    rows = _by_id(controls.toxicity_controls(report, truths["null"]["comments"]))
    assert rows["tox-fpr-gap"].result == result


def test_toxicity_null_needs_only_the_baseline(truths, tmp_path) -> None:
    report = _toxicity(tmp_path / "tox")
    gaps = pd.read_csv(report.with_name("gaps.csv"))
    gaps[gaps.method != "downstream-perturbed-data"].to_csv(report.with_name("gaps.csv"),
                                                            index=False)
    rows = _by_id(controls.toxicity_controls(report, truths["null"]["comments"]))
    assert rows["tox-fpr-gap"].result == "pass"
    assert rows["tox-fpr-gap"].measured.startswith("6/6 cells")


REP_MUTANTS = {
    "stereoset above": ({("bert-tiny", "race", "stereoset"): 75.0}, "rep-stereoset"),
    "crows below": ({("albert-tiny", "gender", "crows"): 25.0}, "rep-crows"),  # two-sided
    "crows missing": ({("albert-tiny", "religion", "crows"): float("nan")}, "rep-crows"),
}


@pytest.mark.parametrize("mutant", sorted(REP_MUTANTS))
def test_a_representation_difference_fails_the_null_world(truths, tmp_path, mutant) -> None:
    scores, control = REP_MUTANTS[mutant]
    rows = _by_id(controls.representation_controls(_representation(tmp_path / "r.csv", scores),
                                                   truths["null"]["stereotypes"]))
    assert rows[control].result == "FAIL" and rows[control].negative_control
    assert "outside" in rows[control].measured


def test_representation_band_holds_chance_readings(truths, tmp_path) -> None:
    low, high = controls.null_band(ITEMS, len(MODELS) * len(ATTRIBUTES))
    inside = {("bert-tiny", "gender", "crows"): 60.0,
              ("albert-tiny", "race", "stereoset"): round(low, 2)}
    rows = _by_id(controls.representation_controls(_representation(tmp_path / "r.csv", inside),
                                                   truths["null"]["stereotypes"]))
    assert rows["rep-crows"].result == rows["rep-stereoset"].result == "pass"
    assert f"Binomial({ITEMS}, ½)" in rows["rep-crows"].tolerance
    assert "6 cells" in rows["rep-crows"].tolerance


@pytest.mark.parametrize("cells", [1, 3, 9])
def test_null_band_is_the_binomial_central_band(cells) -> None:
    low, high = controls.null_band(ITEMS, cells)
    assert low + high == pytest.approx(100)
    k = round(low * ITEMS / 100)
    tail = (1 - controls.NULL_CONFIDENCE) / (2 * cells)
    assert binom.cdf(k - 1, ITEMS, 0.5) <= tail < binom.cdf(k, ITEMS, 0.5)
    assert controls.null_band(ITEMS, 1) == pytest.approx((100 * 22 / 60, 100 * 38 / 60))
    assert controls.null_band(ITEMS, cells + 1)[0] <= low


# -- the world plants nothing in the null world ------------------------------------------------


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_neutral_reviews_carry_exactly_the_planted_gender_association(name, tmp_path) -> None:
    """The reviews without a sentiment cue, which a model can fit through identity only, are
    the same share of each label × gender cell: among them P(positive | gender) is the
    planted rate up to one review, and equal for both genders in the null world."""
    settings = copy.deepcopy(WORLDS[name]["world"]["reviews"]) | {
        "n_train": 1000, "neutral_by_gender": True}
    splits, ann, truth = reviews.build(settings, seed=WORLDS[name]["seed"])
    train = ann[ann["split"] == "train"].reset_index(drop=True).assign(
        label=splits["train"]["label"])
    neutral = train[train["neutral"]]
    planted = truth["splits"]["train"]["characteristics"]["gender"]
    rates = neutral.groupby("gender")["label"].agg(["mean", "size"])
    for gender, (rate, size) in rates.iterrows():
        assert abs(rate - planted[gender]["positive_ratio"]) <= 2 / size, (gender, rate)
    if name == "null":
        assert abs(rates.loc["female", "mean"] - rates.loc["male", "mean"]) <= 0.01
    else:
        assert rates.loc["male", "mean"] - rates.loc["female", "mean"] > 0.6


def test_the_null_world_draws_no_cue_reviews_per_gender_the_default_per_label() -> None:
    assert WORLDS["null"]["world"]["reviews"]["neutral_by_gender"] is True
    assert WORLDS["planted"]["world"]["reviews"]["neutral_by_gender"] is False


def _gate(report: Path, failed: set[tuple[str, str]]) -> None:
    """Mark the gate's verdict in gaps.csv, as the fairness report writes it."""
    gaps = pd.read_csv(report.with_name("gaps.csv"))
    gaps["model_works"] = [(m, k) not in failed for m, k in zip(gaps["model"], gaps["method"],
                                                                strict=True)]
    gaps.to_csv(report.with_name("gaps.csv"), index=False)


def test_a_model_below_the_floor_proves_nothing_in_the_null_world(truths, tmp_path) -> None:
    """A model that predicts one class reads zero whatever the data: its cells are left out
    of the null world's toxicity controls, named, and with no working model left the control
    is not run (it cannot pass on constant models)."""
    report = _toxicity(tmp_path / "tox", gap={("albert-tiny", "baseline", "gender"):
                                              (0.2, 0.1, 0.3)})
    _gate(report, {("albert-tiny", "baseline")})
    rows = _by_id(controls.toxicity_controls(report, truths["null"]["comments"]))
    assert rows["tox-fpr-gap"].result == "pass"  # the failing cell was the failed model's
    assert "left out, below the model-works floor: albert-tiny/baseline" in \
        rows["tox-fpr-gap"].measured
    assert "albert-tiny baseline" not in rows["tox-fpr-gap"].measured.split("; left out")[0]
    every = {(m, k) for m in ("albert-tiny", "bert-tiny") for k in controls.TOXICITY_METHODS}
    _gate(report, every)
    rows = _by_id(controls.toxicity_controls(report, truths["null"]["comments"]))
    for control in ("tox-fpr-gap", "tox-sensescore"):
        assert rows[control].result == "not run" and rows[control].negative_control
        assert "no model passes the model-works gate" in rows[control].measured


def test_the_planted_controls_leave_a_failed_model_out_too(truths, tmp_path) -> None:
    report = _toxicity(tmp_path / "tox")
    _gate(report, {("bert-tiny", "downstream-perturbed-data")})
    rows = _by_id(controls.toxicity_controls(report, truths["planted"]["comments"]))
    assert "left out, below the model-works floor: bert-tiny/downstream-perturbed-data" in \
        rows["tox-fpr-gap"].measured


def test_a_failed_model_of_another_method_is_not_named(truths, tmp_path) -> None:
    """Only the methods a control reads: a failed downstream-SentDebias model is no concern
    of the baseline-against-perturbed-data rows."""
    report = _toxicity(tmp_path / "tox")
    gaps = pd.read_csv(report.with_name("gaps.csv"))
    extra = gaps[gaps.method == "baseline"].assign(method="downstream-sentDebias-gender")
    pd.concat([gaps, extra]).to_csv(report.with_name("gaps.csv"), index=False)
    _gate(report, {("bert-tiny", "downstream-sentDebias-gender")})
    for world in ("planted", "null"):
        rows = _by_id(controls.toxicity_controls(report, truths[world]["comments"]))
        assert "left out" not in rows["tox-fpr-gap"].measured, world


def test_biasfinder_controls_read_only_working_sentiment_models(truths, tmp_path) -> None:
    """A sentiment model the gate failed has no BTCs whatever the data: the BiasFinder
    controls leave it out and name it, in either world; none left, they are not run."""
    table = _biasfinder(tmp_path / "bf.csv", {("albert-tiny", "baseline", "gender"): 0.5})
    report = _toxicity(tmp_path / "sent")  # a report with gaps.csv, as the sentiment one
    _gate(report, {("albert-tiny", "baseline")})
    rows = _by_id(controls.biasfinder_controls(table, truths["null"]["reviews"], report))
    assert rows["btc-gender-strongest"].result == "pass"  # the failing rate was albert's
    assert rows["btc-gender-strongest"].measured.startswith("1/1 models; bert-tiny")
    assert "left out, below the model-works floor: albert-tiny/baseline" in \
        rows["btc-gender-strongest"].measured
    _gate(report, {(m, k) for m in MODELS for k in ("baseline", "downstream-perturbed-data")})
    for world in ("planted", "null"):
        rows = _by_id(controls.biasfinder_controls(table, truths[world]["reviews"], report))
        for control in ("btc-gender-strongest", "btc-perturbed-lower"):
            assert rows[control].result == "not run", world
            assert "no model passes the model-works gate" in rows[control].measured
