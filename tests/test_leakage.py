"""The leakage check: fitted texts against every set a model is scored on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from biasrepro.cli import main
from biasrepro.data.leakage import check, normalise, write
from biasrepro.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[1]


def _parquet(path: Path, ids: list[str], texts: list[str], source: list[str] | None = None
             ) -> str:
    df = pd.DataFrame({"id": ids, "text": texts, "label": [0] * len(ids)})
    if source is not None:
        df["source_id"] = source
    df.to_parquet(path)
    return str(path)


def _plan(tmp_path: Path, test_texts: list[str], test_ids: list[str]) -> dict:
    train = _parquet(tmp_path / "train.parquet", ["a", "b", "c"],
                     ["A fine  film.", "Dull.", "She shines."])
    perturbed = _parquet(tmp_path / "perturbed.parquet", ["a", "a>male"],
                         ["A fine film.", "He shines."], source=["a", "a"])
    test = _parquet(tmp_path / "test.parquet", test_ids, test_texts)
    return {"task": "sentiment", "methods": [
        {"method": "baseline", "models": ["m1", "m2"], "fitted": {"train": train},
         "scored": {"test": test}},
        {"method": "downstream-perturbed-data", "models": ["m1"],
         "fitted": {"train": perturbed}, "scored": {"test": test}}]}


def test_normalisation_folds_whitespace_and_keeps_case() -> None:
    assert normalise([" A  fine\n\tfilm. ", "a fine film."]).tolist() == [
        "A fine film.", "a fine film."]


def test_clean_setup_passes(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["a fine film.", "Brilliant."], ["t1", "t2"])  # case differs
    report = write(plan, identical_texts="fail", out_json=tmp_path / "l.json",
                   out_md=tmp_path / "l.md")
    assert report["passed"] and all(r["texts"] == 0 for r in report["pairs"])
    assert len(report["pairs"]) == 3  # two models of baseline, one of the perturbed method
    assert "No overlap" in (tmp_path / "l.md").read_text()


def test_planted_shared_row_fails_with_the_count_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "l.json").write_text("stale")
    # "b" is a training row scored again; "a" reappears with other spacing
    plan = _plan(tmp_path, ["Dull.", "A fine film.", "New."], ["b", "a", "t3"])
    with pytest.raises(DataError, match=r"sentiment m1 baseline: 2 text\(s\) of train .* are "
                       r"also in test .*: 2 from shared rows, 0 identical texts"):
        write(plan, identical_texts="report", out_json=tmp_path / "l.json",
              out_md=tmp_path / "l.md")
    assert (tmp_path / "l.json").read_text() == "stale" and not (tmp_path / "l.md").exists()


def test_identical_texts_of_distinct_rows_follow_the_policy(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["He shines.", "Dull."], ["t1", "t2"])  # distinct source rows
    report = check(plan, identical_texts="report")
    assert report["passed"]
    counts = {(r["model"], r["method"]): (r["texts"], r["shared_rows"], r["identical_texts"])
              for r in report["pairs"]}
    assert counts == {("m1", "baseline"): (1, 0, 1), ("m2", "baseline"): (1, 0, 1),
                      ("m1", "downstream-perturbed-data"): (1, 0, 1)}
    assert not check(plan, identical_texts="fail")["passed"]
    with pytest.raises(ConfigError, match="leakage.identical_texts.sentiment"):
        check(plan, identical_texts="warn")


def test_cli_fails_nonzero_naming_the_sets(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(tmp_path, ["Dull."], ["b"])
    rc = main(["leakage", "--plan", json.dumps(plan),
               "--settings", json.dumps({"leakage.identical_texts.sentiment": "fail"}),
               "--out-json", str(tmp_path / "l.json"), "--out-md", str(tmp_path / "l.md")])
    assert rc == 2 and "1 text(s) of train" in capsys.readouterr().err
    assert not (tmp_path / "l.json").exists()


def _job(job, _level):
    plan = (json.loads(job.params.plan) if job.rule.name in ("leakage_check", "leakage_gate")
            else None)
    return job.rule.name, dict(job.wildcards.items()), list(map(str, job.input)), plan


def test_dag_checks_every_trained_model_before_scoring() -> None:
    """Every task's check covers each model × method, and each scoring job waits for the
    verdict on the set it scores."""
    from biasrepro import snakedag

    jobs, config = snakedag.dag_jobs(REPO / "config/config.yaml", REPO, _job)
    checks = {w["task"]: (inputs, plan) for rule, w, inputs, plan in jobs
              if rule == "leakage_check"}
    assert set(checks) == {t for t, models in config["models"]["tasks"].items() if models}
    for task, (inputs, plan) in checks.items():
        covered = {(model, m["method"]) for m in plan["methods"] for model in m["models"]}
        assert covered == {(model, method) for model in config["models"]["tasks"][task]
                           for method in config["methods"]["tasks"][task]}
        for m in plan["methods"]:
            assert "test" in m["scored"] and "fairness-balanced" in m["scored"]
            assert set(m["fitted"].values()) <= set(inputs)
    sentiment = {m["method"]: m for m in checks["sentiment"][1]["methods"]}
    gendered = sentiment["imdb-gendered"]
    assert gendered["fitted"]["validation"] == "results/sentiment/imdb_gendered/validation.parquet"
    assert {"imdb-gendered-test", "imdb-gendered-perturbed-test", "biasfinder-corpus",
            "biasfinder-mutants-gender"} <= set(gendered["scored"])
    # each scoring job waits for the verdict on the set it scores, which checks that set alone
    gates = {(w["task"], w["scored"]): (inputs, plan) for rule, w, inputs, plan in jobs
             if rule == "leakage_gate"}
    for (task, scored), (inputs, plan) in gates.items():
        whole = {m["method"]: m for m in checks[task][1]["methods"]}
        assert all(m["scored"] == {scored: whole[m["method"]]["scored"][scored]}
                   and m["fitted"] == whole[m["method"]]["fitted"] for m in plan["methods"])
        assert {m["method"] for m in plan["methods"]} == {
            m for m, full in whole.items() if scored in full["scored"]}
        if not plan["methods"]:  # a set every method fits on (a validation split)
            assert all(inputs[0] in m["fitted"].values() for m in whole.values()), scored
            continue
        assert {p for m in plan["methods"] for sets in (m["fitted"], m["scored"])
                for p in sets.values()} == set(inputs)
    for rule, w, inputs, _ in jobs:
        if rule.startswith("predict_"):
            task = rule.removeprefix("predict_")
            assert f"results/{task}/leakage/{w['scored']}.json" in inputs
            assert not [i for i in inputs if i.endswith("leakage.json")]
        if rule == "biasfinder_predict":
            assert {f"results/sentiment/leakage/biasfinder-mutants-{c}.json"
                    for c in config["biasfinder"]["characteristics"]} <= set(inputs)
            assert "results/sentiment/leakage.json" not in inputs
