"""Cross-study: BiasFinder-style BTCs on the balanced toxicity set, BTC
rates beside group gaps, and their Pearson correlations, on inputs small enough to count
by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.analysis.cross_study import (
    FILES,
    balanced_mutants,
    correlations,
    join_points,
    read_gaps,
    toxicity_btc,
)
from biasrepro.cli import main
from biasrepro.io import write_parquet

SETTINGS = json.dumps({"fairness": {
    "threshold": 0.5, "bootstrap": {"resamples": 10, "confidence": 0.95},
    "attributes": {"toxicity": ["gender", "race"], "sentiment": ["gender"]}}})

#: two gender templates (two groups each) and two race templates (three groups each)
BALANCED = pd.DataFrame([
    ("s1", "he is fine .", 0, "male", "gender", "s1"),
    ("s1>female", "she is fine .", 0, "female", "gender", "s1"),
    ("s2", "she is rude .", 1, "female", "gender", "s2"),
    ("s2>male", "he is rude .", 1, "male", "gender", "s2"),
    ("s3", "black folks here .", 0, "black", "race", "s3"),
    ("s3>white", "white folks here .", 0, "white", "race", "s3"),
    ("s3>asian", "asian folks here .", 0, "asian", "race", "s3"),
    ("s4", "white men , idiots .", 1, "white", "race", "s4"),
    ("s4>black", "black men , idiots .", 1, "black", "race", "s4"),
    ("s4>asian", "asian men , idiots .", 1, "asian", "race", "s4"),
], columns=["id", "text", "label", "identity", "attribute", "source_id"])
#: positive-class probabilities of BALANCED's rows for two methods of one model
PROBS = {
    ("a", "baseline"): [0.9, 0.2, 0.1, 0.3, 0.8, 0.1, 0.6, 0.4, 0.45, 0.2],
    ("a", "debiased"): [0.1, 0.2, 0.7, 0.8, 0.1, 0.2, 0.3, 0.9, 0.9, 0.9],
}


def _predictions(tmp: Path, probs: dict = PROBS, name: str = "fairness-balanced") -> list[str]:
    paths = []
    for (model, method), p in probs.items():
        path = tmp / "pred" / model / method / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(BALANCED[["id", "label"]].assign(
            prob=p, pred=[int(v >= 0.5) for v in p]), path)
        paths.append(str(path))
    return paths


def _gaps(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "method", "fairness_set", "attribute", "metric",
                                       "value", "low", "high", "resamples", "note"])


def _tox_inputs(tmp: Path) -> list[str]:
    write_parquet(BALANCED.assign(source_identity="x", is_counterfactual=False),
                  tmp / "balanced.parquet")
    gaps = _gaps([(m, me, fs, a, g, v, 0, 1, 10, "")
                  for (m, me), v in ((("a", "baseline"), 0.3), (("a", "debiased"), 0.1))
                  for fs in ("balanced", "original") for a in ("gender", "race")
                  for g in ("FPR_gap", "TPR_gap", "AUC_gap")])
    gaps.to_csv(tmp / "tox_gaps.csv", index=False)
    return ["--toxicity-balanced", str(tmp / "balanced.parquet"), "--toxicity-predictions",
            *_predictions(tmp), "--toxicity-gaps", str(tmp / "tox_gaps.csv")]


def _sentiment_inputs(tmp: Path) -> list[str]:
    """Five model x method points: BTC rates 0.1..0.5 and FPR gaps 0.1, 0.3, 0.2, 0.5, 0.4
    (ρ = 8 / sqrt(10 · 10) = 0.8 exactly), a constant TPR gap and two missing AUC gaps."""
    points = [("m1", "baseline"), ("m1", "perturbed"), ("m2", "baseline"), ("m2", "perturbed"),
              ("m3", "baseline")]
    table4 = pd.DataFrame(
        [(m, me, 0.5, c, rate if c == "gender" else 0.9, rate / 2 if c == "gender" else 0.9)
         for (m, me), rate in zip(points, (0.1, 0.2, 0.3, 0.4, 0.5), strict=True)
         for c in ("gender", "occupation", "total")],
        columns=["model", "method", "threshold", "characteristic", "btc_rate",
                 "aligned_btc_rate"])
    table4.to_csv(tmp / "table4.csv", index=False)
    fpr = (0.1, 0.3, 0.2, 0.5, 0.4)
    auc = (0.1, None, 0.3, None, 0.2)
    gaps = _gaps([row for (m, me), f, a in zip(points, fpr, auc, strict=True) for row in (
        (m, me, "original", "gender", "FPR_gap", f, 0, 1, 10, ""),
        (m, me, "original", "gender", "TPR_gap", 0.25, 0, 1, 10, ""),
        (m, me, "original", "gender", "AUC_gap", a, 0, 1, 10, "" if a else "one class"))])
    gaps = pd.concat([gaps, _gaps([("m9", "baseline", "original", "gender", "FPR_gap", 0.5, 0,
                                    1, 10, "")])])
    gaps.to_csv(tmp / "sent_gaps.csv", index=False)
    return ["--biasfinder", str(tmp / "table4.csv"), "--sentiment-gaps",
            str(tmp / "sent_gaps.csv")]


def _run(tmp: Path, *args: str, out: str = "out") -> int:
    return main(["analysis", "cross-study", *args, "--settings", SETTINGS, "--out-dir",
                 str(tmp / out)])


def test_btc_counts_by_hand(tmp_path: Path) -> None:
    mutants = balanced_mutants(BALANCED, file=tmp_path / "b.parquet")
    preds = {key: (Path(p), pd.read_parquet(p))
             for key, p in zip(PROBS, _predictions(tmp_path), strict=True)}
    got = toxicity_btc(mutants, preds, attributes=["gender", "race"], threshold=0.5)
    rows = {(r["method"], r["attribute"]): r for r in got.to_dict("records")}
    # baseline, gender: s1 0.9 vs 0.2 differ, s2 0.1 vs 0.3 agree -> 1 BTC of 2 pairs
    assert rows["baseline", "gender"] == {
        "model": "a", "method": "baseline", "attribute": "gender", "threshold": 0.5,
        "templates": 2, "mutants": 4, "possible_pairs": 2, "btc": 1, "btc_rate": 0.5,
        "templates_with_btc": 1, "templates_with_btc_share": 0.5}
    # baseline, race: s3 (1, 0, 1) -> black/white and white/asian differ; s4 (0, 0, 0) -> 0
    r = rows["baseline", "race"]
    assert (r["templates"], r["mutants"], r["possible_pairs"], r["btc"]) == (2, 6, 6, 2)
    assert r["btc_rate"] == pytest.approx(1 / 3) and r["templates_with_btc_share"] == 0.5
    # debiased: s2 (1, 1), s1 (0, 0), s3 (0, 0, 0), s4 (1, 1, 1): no BTC at all
    assert rows["debiased", "gender"]["btc"] == rows["debiased", "race"]["btc"] == 0
    # at threshold 0.42 s4 becomes (0, 1, 0): two more race BTCs for the baseline
    lower = toxicity_btc(mutants, preds, attributes=["race"], threshold=0.42)
    assert lower.set_index("method").loc["baseline", "btc"] == 4
    assert list(lower["attribute"].unique()) == ["race"]


def test_correlation_with_a_known_rho_and_the_undefined_cases(tmp_path: Path) -> None:
    args = _sentiment_inputs(tmp_path)
    gaps = read_gaps(Path(args[3]), ["gender"])
    btc = pd.read_csv(args[1]).rename(columns={"characteristic": "attribute"})
    btc = btc[btc["attribute"] == "gender"]
    points = join_points("sentiment", btc, gaps, ["gender"])
    assert len(points) == 5 and "m9" not in set(points["model"])
    table = correlations(points, {"sentiment": ["gender"]}, confidence=0.95).set_index(
        ["x", "y"])
    fpr = table.loc["btc_rate", "FPR_gap"]
    assert fpr["rho"] == pytest.approx(0.8) and fpr["n"] == 5
    assert (fpr["distinct_x"], fpr["permutations"]) == (5, "exact (120 orderings)")
    assert 0 < fpr["p_permutation"] <= 1 and fpr["p_cluster"] == fpr["p_permutation"]
    z, half = math.atanh(0.8), 1.959964 / math.sqrt(2)
    assert fpr["low"] == pytest.approx(math.tanh(z - half), abs=1e-5)
    assert fpr["high"] == pytest.approx(math.tanh(z + half), abs=1e-5)
    # the aligned rate is half the rate: the same rho
    assert table.loc["aligned_btc_rate", "FPR_gap"]["rho"] == pytest.approx(0.8)
    assert math.isnan(table.loc["btc_rate", "TPR_gap"]["rho"])
    assert "constant" in table.loc["btc_rate", "TPR_gap"]["note"]
    auc = table.loc["btc_rate", "AUC_gap"]  # (0.1, 0.1), (0.3, 0.3), (0.5, 0.2): rho 0.5
    assert auc["n"] == 3 and auc["rho"] == pytest.approx(0.5)
    assert math.isnan(auc["low"]) and "n > 3" in auc["note"]


def test_command_writes_every_file_and_reruns_byte_identical(tmp_path: Path) -> None:
    args = [*_sentiment_inputs(tmp_path), *_tox_inputs(tmp_path)]
    assert _run(tmp_path, *args, out="one") == 0
    assert _run(tmp_path, *args, out="two") == 0
    for name in FILES:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert summary["headline"]["sentiment"]["original"]["FPR_gap"]["rho"] == pytest.approx(0.8)
    assert summary["unmatched"]["sentiment"] == {"btc_only": [], "gaps_only": ["m9/baseline"]}
    tox = summary["headline"]["toxicity"]["balanced"]["FPR_gap"]
    assert tox["attribute"] == "all" and tox["n"] == 4  # 2 model x method x 2 attributes
    assert {"distinct_x", "p_permutation", "p_cluster"} <= set(tox)
    corr = pd.read_csv(tmp_path / "one" / "correlations.csv")
    per_attr = corr[(corr["task"] == "toxicity") & (corr["attribute"] == "gender")]
    assert set(per_attr["n"]) == {2} and per_attr["rho"].isna().all()
    assert per_attr["note"].str.contains("at least 3").all()
    btc = pd.read_csv(tmp_path / "one" / "toxicity_btc.csv")
    assert list(btc["btc"]) == [1, 2, 0, 0]
    md = (tmp_path / "one" / "correlations.md").read_text()
    assert md.startswith("# Cross-study") and "| sentiment | original | gender | btc_rate" in md
    assert "| distinct x, y |" in md and "| p_perm | p_cluster |" in md


def _error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    assert code == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1
    return lines[0]


def test_bad_probability_fails_and_leaves_earlier_outputs(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    args = _tox_inputs(tmp_path)
    assert _run(tmp_path, *args) == 0  # a failed run leaves this run's outputs untouched
    earlier = {f: (tmp_path / "out" / f).read_bytes() for f in FILES}
    bad = pd.read_parquet(args[3]).assign(prob=[0.1] * 9 + [1.5])
    write_parquet(bad, args[3])
    line = _error(capsys, _run(tmp_path, *args))
    assert "a/baseline/fairness-balanced.parquet" in line and "row 10" in line
    assert "column 'prob'" in line
    assert {f: (tmp_path / "out" / f).read_bytes() for f in FILES} == earlier


def test_bad_gap_value_names_row_and_column(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = _sentiment_inputs(tmp_path)
    gaps = pd.read_csv(args[3], dtype=str)
    gaps.loc[2, "value"] = "high"
    gaps.to_csv(args[3], index=False)
    line = _error(capsys, _run(tmp_path, *args))
    assert "sent_gaps.csv" in line and "row 3" in line and "column 'value'" in line
    assert not any((tmp_path / "out" / f).exists() for f in FILES)


@pytest.mark.parametrize("case", ["half_sentiment", "original_predictions", "no_gender",
                                  "no_inputs"])
def test_refused_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    sent = _sentiment_inputs(tmp_path)
    if case == "half_sentiment":
        args, want = sent[:2], "needs both"
    elif case == "original_predictions":
        tox = _tox_inputs(tmp_path)
        i = tox.index("--toxicity-gaps")
        args = [*tox[:3], *_predictions(tmp_path, name="fairness-original"), *tox[i:]]
        want = "fairness-balanced"
    elif case == "no_gender":
        table4 = pd.read_csv(sent[1])
        table4[table4["characteristic"] != "gender"].to_csv(sent[1], index=False)
        args, want = sent, "no characteristic is a fairness attribute"
    else:
        args, want = [], "nothing to correlate"
    line = _error(capsys, _run(tmp_path, *args))
    assert want in line
    assert not any((tmp_path / "out" / f).exists() for f in FILES)


def test_a_model_failing_the_gate_leaves_the_points_and_is_named(tmp_path: Path) -> None:
    """m2/perturbed's gaps say model_works False: read_gaps drops it, so 4 points remain,
    summary.json and correlations.md name it; a gaps.csv without the column drops nothing."""
    args = _sentiment_inputs(tmp_path)
    gaps = pd.read_csv(args[3])
    gaps.to_csv(tmp_path / "open.csv", index=False)
    gaps["model_works"] = [(m, me) != ("m2", "perturbed")
                           for m, me in zip(gaps["model"], gaps["method"], strict=True)]
    gaps.to_csv(args[3], index=False)
    assert len(read_gaps(tmp_path / "open.csv", ["gender"])) == 6
    kept = read_gaps(Path(args[3]), ["gender"])
    assert ("m2", "perturbed") not in set(zip(kept["model"], kept["method"], strict=True))
    assert len(kept) == 5
    assert _run(tmp_path, *args) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["below_floor"] == {"sentiment": ["m2/perturbed"]}
    assert summary["points"] == {"sentiment": 4}
    md = (tmp_path / "out" / "correlations.md").read_text()
    assert "below the model-works gate's floor (the fairness reports' models.csv): " \
           "sentiment: m2/perturbed." in md


def test_every_model_failing_the_gate_leaves_no_point_and_no_crash(tmp_path: Path) -> None:
    """All sentiment models below the floor: the step still writes its files, with no
    point and every model named."""
    args = _sentiment_inputs(tmp_path)
    gaps = pd.read_csv(args[3])
    gaps["model_works"] = False
    gaps.to_csv(args[3], index=False)
    assert _run(tmp_path, *args) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["points"] == {}
    assert summary["below_floor"]["sentiment"] == [
        "m1/baseline", "m1/perturbed", "m2/baseline", "m2/perturbed", "m3/baseline",
        "m9/baseline"]
    assert pd.read_csv(tmp_path / "out" / "correlations.csv").empty
