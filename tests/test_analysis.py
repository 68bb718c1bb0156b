"""The planted-bias controls, the headline metrics for DVC and the run record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.analysis import controls, headline, record
from biasrepro.cli import main
from biasrepro.errors import DataError

#: training rows and toxic ratio per identity: 40 % of the configured groups below
IDENTITIES = {"female": (10, 0.2), "male": (20, 0.1)}
GROUPS = {"female": {"n": 25, "toxic_ratio": 0.2}, "male": {"n": 50, "toxic_ratio": 0.1}}


def _world(tmp: Path, *, shift: float = 0.0) -> dict[str, Path]:
    """A tiny data summary and civil-comments ground truth; ``shift`` perturbs the former."""
    truth = {
        "settings": {"groups": GROUPS, "multi_identity": {"n": 0, "toxic_ratio": 0.0}},
        "identities": list(IDENTITIES),
        "attributes": {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]}},
        "preprocess": {"split": {"train": 0.4, "validation": 0.3, "test": 0.3}},
        "ambiguous": {"female": {"n_toxic": 3}, "male": {"n_toxic": 0}},
    }
    summary = {"civil_comments": {
        "identities": {"train": {g: {"n": n, "positive": int(n * r),
                                     "positive_ratio": r + shift}
                                 for g, (n, r) in IDENTITIES.items()}},
        "train_dataset_bias": {"selection": {"gender": 0.1 + shift},
                               "overamplification": {"gender": {"normalized": 1.0,
                                                                "raw": 10.0}}},
    }}
    paths = {"summary": tmp / "summary.json", "truth": tmp / "truth.json"}
    paths["summary"].write_text(json.dumps(summary))
    paths["truth"].write_text(json.dumps(truth))
    return paths


def _fairness(tmp: Path, *, base: float, perturbed: float) -> Path:
    """A toxicity report.json with gaps.csv, sensescore.csv and dataset_bias.csv beside it."""
    d = tmp / "toxicity"
    d.mkdir()
    rows, sense, groups = [], [], []
    for model in ("m1", "m2"):
        for method, v in (("baseline", base), ("downstream-perturbed-data", perturbed)):
            for metric in ("FPR_gap", "TPR_gap", "AUC_gap"):
                rows.append({"model": model, "method": method, "fairness_set": "balanced",
                             "attribute": "gender", "metric": metric, "value": abs(v),
                             "low": abs(v) / 2})
            # the world marks female: a positive v is the planted way
            groups += [{"model": model, "method": method, "fairness_set": "balanced",
                        "group": g, "fpr": f} for g, f in (("female", 0.1 + v), ("male", 0.1))]
            sense.append({"model": model, "method": method, "attribute": "gender", "g": "male",
                          "g_hat": "female", "sense_score": abs(v) / 2,
                          "mean_difference": v / 2})
    pd.DataFrame(rows).to_csv(d / "gaps.csv", index=False)
    pd.DataFrame(groups).to_csv(d / "group_metrics.csv", index=False)
    pd.DataFrame(sense).to_csv(d / "sensescore.csv", index=False)
    pd.DataFrame([{"method": "baseline", "attribute": "gender", "selection": 0.05},
                  {"method": "downstream-perturbed-data", "attribute": "gender",
                   "selection": 0.01}]).to_csv(d / "dataset_bias.csv", index=False)
    (d / "report.json").write_text(json.dumps({"task": "toxicity"}))
    return d / "report.json"


def _by_id(rows: list[controls.Control]) -> dict[str, controls.Control]:
    return {c.id: c for c in rows}


def test_data_controls_pass_on_the_planted_values_and_fail_off_them(tmp_path: Path) -> None:
    good = _world(tmp_path)
    rows = _by_id(controls.data_controls(good["summary"], good["truth"]))
    assert [rows[k].result for k in ("data-counts", "data-selection")] == ["pass", "pass"]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = _world(bad_dir, shift=0.01)
    rows = _by_id(controls.data_controls(bad["summary"], bad["truth"]))
    assert rows["data-counts"].result == "FAIL"
    assert rows["data-selection"].result == "FAIL"
    assert rows["data-overamplification"].result == "pass"


def test_real_data_has_no_planted_truth_and_says_so(tmp_path: Path) -> None:
    paths = _world(tmp_path)
    rows = controls.controls(controls.Inputs(data_summary=paths["summary"]))
    data = [c for c in rows if c.id.startswith("data-")]
    assert data and all(c.passed is None for c in data)
    assert all("no planted truth" in c.measured for c in data)
    # studies that did not run are not run, with the reason, never passed
    assert all(c.passed is None for c in rows)
    assert any("was not run" in c.measured for c in rows)


@pytest.mark.parametrize(("base", "perturbed", "result"), [
    (0.2, 0.05, "pass"),
    (0.05, 0.2, "FAIL"),    # found, and not lowered
    (0.01, 0.0, "FAIL"),    # within the null world's margin: nothing found to lower
    (-0.2, -0.05, "FAIL"),  # found the opposite way
])
def test_toxicity_controls_follow_the_direction(tmp_path: Path, base: float, perturbed: float,
                                                result: str) -> None:
    report = _fairness(tmp_path, base=base, perturbed=perturbed)
    truth = _world(tmp_path)["truth"]
    rows = _by_id(controls.toxicity_controls(report, truth))
    assert rows["tox-fpr-gap"].result == result
    assert rows["tox-sensescore"].result == result
    assert "lower after perturbation in" in rows["tox-fpr-gap"].measured
    assert "female" in rows["tox-fpr-gap"].planted  # the groups the world marks
    if base == 0.01:
        assert "did not learn it (no cell found): m1, m2" in rows["tox-sensescore"].measured
    if base < 0:
        assert "the opposite way in m1 gender, m2 gender" in rows["tox-fpr-gap"].measured


def test_biasfinder_and_representation_controls(tmp_path: Path) -> None:
    table = tmp_path / "table4.csv"
    rows = []
    for model, gender in (("a", 0.3), ("b", 0.02)):
        for char, rate in (("gender", gender), ("occupation", 0.05), ("country", 0.04)):
            rows.append({"model": model, "method": "baseline", "characteristic": char,
                         "btc_rate": rate})
        rows.append({"model": model, "method": "downstream-perturbed-data",
                     "characteristic": "gender", "btc_rate": 0.01})
    pd.DataFrame(rows).to_csv(table, index=False)
    truth = tmp_path / "imdb.json"
    truth.write_text(json.dumps({"settings": {"planted": {"gender": {"female": 0.2,
                                                                     "male": 0.8}}}}))
    got = _by_id(controls.biasfinder_controls(table, truth))
    assert got["btc-gender-strongest"].result == "FAIL"  # model b: occupation wins
    assert got["btc-gender-strongest"].measured.startswith("1/2 models")
    assert got["btc-perturbed-lower"].result == "pass"
    tied = pd.DataFrame([{"model": "a", "method": "baseline", "characteristic": c,
                          "btc_rate": 0.0} for c in ("gender", "occupation", "country")])
    tied.to_csv(table, index=False)  # no BTCs at all: gender is not the strongest
    assert _by_id(controls.biasfinder_controls(table, truth))[
        "btc-gender-strongest"].result == "FAIL"

    rep = tmp_path / "rep.csv"
    pd.DataFrame([
        {"model": "a", "variant": "pretrained", "attribute": "gender", "source": "stereoset",
         "value": 70.0},
        {"model": "a", "variant": "pretrained", "attribute": "gender", "source": "crows",
         "value": 40.0},
        {"model": "a", "variant": "pretrained", "attribute": "gender", "source": "seat",
         "value": -1.2},
        {"model": "a", "variant": "sentdebias-gender", "attribute": "gender",
         "source": "seat", "value": 0.3},
    ]).to_csv(rep, index=False)
    stereo = tmp_path / "stereo.json"
    stereo.write_text(json.dumps({"n_sentences": 10, "settings": {"strength": 0.9}}))
    got = _by_id(controls.representation_controls(rep, stereo))
    assert got["rep-stereoset"].result == "pass"
    assert got["rep-crows"].result == "FAIL"
    assert got["rep-seat-debias"].result == "pass"  # |0.3| < |-1.2|


def _rep_table(path: Path, crows_b: float, seat_after: dict[str, float]) -> Path:
    """Table 4's long form: models a and b, three attributes; b's gender CrowS ``crows_b``."""
    rows = []
    for model in ("a", "b"):
        for attr in ("gender", "race", "religion"):
            crows = crows_b if (model, attr) == ("b", "gender") else 70.0
            rows += [{"model": model, "variant": "pretrained", "attribute": attr,
                      "source": "stereoset", "value": 65.0},
                     {"model": model, "variant": "pretrained", "attribute": attr,
                      "source": "crows", "value": crows},
                     {"model": model, "variant": "pretrained", "attribute": attr,
                      "source": "seat", "value": 1.0},
                     {"model": model, "variant": f"sentdebias-{attr}", "attribute": attr,
                      "source": "seat", "value": seat_after.get(f"{model} {attr}", 0.5)}]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_representation_controls_hold_for_every_model_on_its_own(tmp_path: Path) -> None:
    stereo = tmp_path / "stereo.json"
    stereo.write_text(json.dumps({"n_sentences": 10, "settings": {"strength": 0.9}}))
    table = tmp_path / "rep.csv"
    got = _by_id(controls.representation_controls(_rep_table(table, 51.7, {}), stereo))
    assert [got[i].result for i in ("rep-stereoset", "rep-crows", "rep-seat-debias")] == [
        "pass"] * 3
    assert "a: gender 70.0" in got["rep-crows"].measured
    assert "b: gender 51.7" in got["rep-crows"].measured
    # one model at exactly 50 fails, though the mean over models (60) is above 50
    got = _by_id(controls.representation_controls(_rep_table(table, 50.0, {}), stereo))
    assert got["rep-crows"].result == "FAIL"
    assert got["rep-crows"].measured.endswith("(not above 50: b gender)")
    assert got["rep-stereoset"].result == "pass"
    # a missing score fails too
    pd.read_csv(table).query("not (model == 'a' and attribute == 'race' and "
                             "source == 'stereoset')").to_csv(table, index=False)
    got = _by_id(controls.representation_controls(table, stereo))
    assert got["rep-stereoset"].result == "FAIL"
    assert got["rep-stereoset"].measured.startswith("a: gender 65.0, race missing,")
    assert got["rep-stereoset"].tolerance.startswith("none")
    # SEAT: two thirds of all model x attribute cells lower pass, each model listed
    one = _rep_table(table, 60.0, {"b race": 1.5, "b religion": -1.0})
    got = _by_id(controls.representation_controls(one, stereo))
    assert got["rep-seat-debias"].result == "pass"
    assert got["rep-seat-debias"].measured == "lower in 4/6 cells; a: 3/3; b: 1/3"
    fewer = _rep_table(table, 60.0, {"b race": 1.5, "b religion": -1.0, "a gender": 2.0})
    assert _by_id(controls.representation_controls(fewer, stereo))[
        "rep-seat-debias"].result == "FAIL"


def test_controls_command_writes_three_files_identically(tmp_path: Path) -> None:
    paths = _world(tmp_path)
    report = _fairness(tmp_path, base=0.2, perturbed=0.05)
    argv = ["analysis", "controls", "--data-summary", str(paths["summary"]),
            "--comments-truth", str(paths["truth"]), "--toxicity", str(report)]
    assert main([*argv, "--out-dir", str(tmp_path / "a")]) == 0
    assert main([*argv, "--out-dir", str(tmp_path / "b")]) == 0
    for name in controls.OUTPUTS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    summary = json.loads((tmp_path / "a" / "controls.json").read_text())
    assert summary["failed"] == 0 and summary["passed"] >= 5
    md = (tmp_path / "a" / "controls.md").read_text()
    assert md.startswith("# Planted-bias controls") and "| data-counts |" in md
    # checks that hold by construction are bookkeeping: shown apart, never counted
    records = {r["id"]: r for r in summary["controls"]}
    assert not records["perturb-selection"]["evidence"] and records["data-counts"]["evidence"]
    evidence = [r for r in summary["controls"] if r["evidence"]]
    assert summary["total"] == len(evidence) < len(summary["controls"])
    assert summary["bookkeeping"]["total"] == len(summary["controls"]) - len(evidence)
    evidence_part, books = md.split("## Bookkeeping")
    assert "| perturb-selection |" in books and "| perturb-selection |" not in evidence_part
    assert "whatever the data" in books


def test_a_malformed_input_is_one_error_and_no_outputs(tmp_path: Path, capsys) -> None:
    paths = _world(tmp_path)
    paths["truth"].write_text("{not json")
    out = tmp_path / "out"
    code = main(["analysis", "controls", "--data-summary", str(paths["summary"]),
                 "--comments-truth", str(paths["truth"]), "--out-dir", str(out)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "truth.json" in err[0]
    assert not out.exists() or not any(out.iterdir())


def test_a_missing_column_names_the_file_and_column(tmp_path: Path) -> None:
    report = _fairness(tmp_path, base=0.2, perturbed=0.05)
    (report.parent / "gaps.csv").write_text("model,method\nm1,baseline\n")
    truth = _world(tmp_path)["truth"]
    with pytest.raises(DataError, match="gaps.csv.*fairness_set"):
        controls.toxicity_controls(report, truth)


def test_headline_metrics_nest_and_round(tmp_path: Path) -> None:
    cls = tmp_path / "classification.json"
    cls.write_text(json.dumps([{"task": "toxicity", "model": "m1", "method": "baseline",
                                "accuracy": 0.91234567891, "roc_auc": 0.5, "f1": 0.25}]))
    report = _fairness(tmp_path, base=0.2, perturbed=0.05)
    ctl = tmp_path / "controls.json"
    ctl.write_text(json.dumps({"passed": 3, "failed": 1, "not_run": 0, "total": 4}))
    out = tmp_path / "metrics.json"
    assert main(["analysis", "metrics", "--classification", str(cls), "--fairness",
                 str(report), "--controls", str(ctl), "--out", str(out)]) == 0
    m = json.loads(out.read_text())
    assert m["classification"]["toxicity"]["m1"]["baseline"]["accuracy"] == 0.912346
    tox = m["fairness"]["toxicity"]["m2"]["downstream-perturbed-data"]
    assert tox["fpr_gap_gender"] == 0.05 and tox["sensescore_gender"] == 0.025
    assert m["controls"] == {"passed": 3, "failed": 1, "not_run": 0, "total": 4}
    assert "biasfinder" not in m  # sections only for what ran


def test_headline_rejects_rows_without_their_keys(tmp_path: Path) -> None:
    cls = tmp_path / "classification.json"
    cls.write_text(json.dumps([{"task": "toxicity", "model": "m1"}]))
    with pytest.raises(DataError, match="row 1"):
        headline.headline(headline.Inputs(classification=cls))


def test_run_record_hashes_data_as_dvc_does_and_includes_tables(tmp_path: Path) -> None:
    data = tmp_path / "train.csv"
    data.write_bytes(b"text,label\nhello,1\n")
    table = tmp_path / "controls.md"
    table.write_text("# Planted-bias controls\n\n| a |\n|---|\n| 1 |\n")
    out = tmp_path / "REPRODUCTION.md"
    argv = ["analysis", "record", "--config-sha256", "ab" * 32, "--configfiles",
            "config/config.yaml", "--data", str(data), "--tables", str(table),
            "--settings", '{"seed": 7}', "--out", str(out)]
    assert main(argv) == 0
    text = out.read_text()
    assert hashlib.md5(data.read_bytes()).hexdigest() in text
    assert hashlib.sha256(data.read_bytes()).hexdigest() in text
    assert "## Planted-bias controls" in text  # the table's title became a section
    assert "| torch |" in text and "seed: 7" in text and "ab" * 32 in text
    first = out.read_bytes()
    assert main(argv) == 0 and out.read_bytes() == first
    assert record.environment() == record.environment()


def test_run_record_refuses_a_missing_data_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "REPRODUCTION.md"
    code = main(["analysis", "record", "--config-sha256", "x", "--configfiles", "c.yaml",
                 "--data", str(tmp_path / "absent.parquet"), "--settings", '{"seed": 1}',
                 "--out", str(out)])
    assert code == 2 and "absent.parquet" in capsys.readouterr().err
    assert not out.exists()
