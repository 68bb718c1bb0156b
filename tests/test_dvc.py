"""DVC: dvc.yaml is derived from the Snakemake DAG (and fresh); `dvc repro` works in a fresh
clone, rebuilding only what a parameter change affects (a dataset parameter: the SST set's
size reruns its world, its preparation, the summary and the sentiment fairness report, and no
model); `dvc metrics diff` and `dvc plots diff` compare two revisions."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import BIN, REPO, SMALL_CONFIG, downstream_stages, env_with_venv

from biasrepro import config, dvc
from biasrepro.cli import main


@pytest.fixture(scope="module")
def dag_jobs() -> list[dict[str, Any]]:
    """The default config's Snakemake DAG, built once for the tests that check against it."""
    return dvc._dag_jobs(dvc.DEFAULT_CONFIG, REPO)


def test_dvc_yaml_matches_the_snakemake_dag(dag_jobs: list[dict[str, Any]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dvc, "_dag_jobs", lambda configfile, repo: dag_jobs)
    dvc.check()  # raises with "regenerate it with `biasrepro dvc-yaml`" when stale


def test_a_stale_dvc_yaml_or_plot_template_is_detected(
        dag_jobs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(dvc, "_dag_jobs", lambda configfile, repo: dag_jobs)
    for rel, text in dvc.files(dag_jobs).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    dvc.check(repo=tmp_path)
    stale = tmp_path / "dvc.yaml"
    fresh = stale.read_text()
    stale.write_text(fresh.replace("world_sst", "world_ssst"))
    with pytest.raises(Exception, match=r"^dvc.yaml is stale"):
        dvc.check(repo=tmp_path)
    stale.write_text(fresh)
    gaps = tmp_path / dvc.TEMPLATE_DIR / "biasrepro_fairness_gaps.json"
    gaps.write_text(gaps.read_text().replace('"model"', '"method"'))
    with pytest.raises(Exception, match=r"biasrepro_fairness_gaps.json is stale"):
        dvc.check(repo=tmp_path)
    gaps.unlink()
    with pytest.raises(Exception, match=r"biasrepro_fairness_gaps.json is stale"):
        dvc.check(repo=tmp_path)


def test_stage_params_are_the_keys_each_rule_reads() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    params = {name: s.get("params", [{}])[0].get("config/config.yaml", [])
              for name, s in stages.items()}
    assert params["world_comments"] == sorted(
        ["seed", "identities", "attributes", "preprocess.civil_comments", "world.comments"])
    assert params["prepare_imdb"] == ["datasets.imdb"]
    assert "world.comments" not in params["world_reviews"]
    cc_deps = stages["prepare_civil_comments"]["deps"]
    assert cc_deps[0] == "resources/world/civil_comments/all_data.csv"
    assert {"world_reviews", "world_comments", "world_sst", "prepare_imdb",
            "prepare_civil_comments", "prepare_sst", "data_summary",
            "pretrain_embedded_bert-tiny", "finetune_toxicity_roberta-tiny",
            "model_metrics"} <= set(stages)
    assert params["finetune_sentiment_albert-tiny"] == sorted(
        ["seed", "models.registry.albert-tiny", "models.training.sentiment"])


def test_stages_depend_on_the_modules_their_command_imports() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]

    def code(name: str) -> set[str]:
        return {d for d in stages[name]["deps"] if d.startswith(("src/", "workflow/", "Snakefile"))}

    def using(path: str) -> set[str]:
        return {name for name in stages if path in code(name)}

    assert using("src/biasrepro/analysis/figures.py") == {"figures"}
    entry = dvc._module_file(REPO / "src", main.__module__)  # runs every command
    assert entry is not None and using(entry.relative_to(REPO).as_posix()) == set(stages)
    finetune = code("finetune_toxicity_bert-tiny")
    assert "src/biasrepro/models/finetune.py" in finetune
    assert not any(d.startswith(("src/biasrepro/analysis/", "src/biasrepro/biasfinder/"))
                   for d in finetune)
    assert {"Snakefile", "workflow/rules/common.smk", "workflow/rules/models.smk",
            "workflow/scripts/biasrepro.py"} <= finetune
    assert "workflow/rules/analysis.smk" not in finetune
    # its rule file's helpers (included by models.smk), not another rule file's
    assert "workflow/rules/helpers/models.smk" in finetune
    assert not any(d.startswith("workflow/rules/helpers/") and not d.endswith("/models.smk")
                   for d in finetune)
    assert using("src/biasrepro/dvc.py") == set()  # no rule records or derives dvc.yaml


def test_metrics_and_plots_are_declared_on_what_the_dag_produces() -> None:
    doc = yaml.safe_load((REPO / "dvc.yaml").read_text())
    stages = doc["stages"]
    assert stages["analysis_metrics"]["metrics"] == [{"results/metrics.json": {"cache": True}}]
    assert "results/metrics.json" not in stages["analysis_metrics"].get("outs", [])
    outs = {o for s in stages.values() for o in s.get("outs", [])}
    plots = {path: props for plot in doc["plots"] for path, props in plot.items()}
    assert set(plots) <= outs
    assert {"results/biasfinder/imdb-test/table4.csv", "results/toxicity/fairness/gaps.csv",
            "results/sentiment/fairness/training_groups.csv",
            "results/representation/table4.csv"} <= set(plots)
    assert plots["results/toxicity/fairness/gaps.csv"] == {
        "template": "biasrepro_fairness_gaps", "title":
        "Group fairness gaps with bootstrap CIs (toxicity)", "x": "value", "x_label": "gap",
        "y": "method"}
    for props in plots.values():
        assert (REPO / dvc.TEMPLATE_DIR / f"{props['template']}.json").is_file()


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env_with_venv(), capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _git_commit(repo: Path, message: str) -> None:
    _run(["git", "add", "-A"], repo)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], repo)


#: a DAG of three jobs writing what the metrics and plots tables name
FAKE_JOBS = [
    {"rule": "biasfinder_table", "wildcards": {"dataset": "imdb-test"},
     "input": ["resources/in.txt"], "settings": {},
     "output": ["results/biasfinder/imdb-test/table4.csv", "results/biasfinder/imdb-test/t.md"]},
    {"rule": "fairness_report", "wildcards": {"task": "toxicity"},
     "input": ["resources/in.txt"], "settings": {},
     "output": ["results/toxicity/fairness/gaps.csv",
                "results/toxicity/fairness/training_groups.csv"]},
    {"rule": "analysis_metrics", "wildcards": {}, "settings": {},
     "input": ["results/biasfinder/imdb-test/table4.csv", "results/toxicity/fairness/gaps.csv"],
     "output": ["results/metrics.json"]},
]


def _write_run(repo: Path, btc_rate: float, gap: float) -> None:
    """One run's outputs of :data:`FAKE_JOBS`, with a chosen BTC rate and gender FPR gap."""
    files = {
        "results/biasfinder/imdb-test/table4.csv":
            "model,method,characteristic,btc_rate\n"
            f"bert-tiny,baseline,gender,{btc_rate}\nbert-tiny,baseline,country,0.02\n",
        "results/biasfinder/imdb-test/t.md": "| table |\n",
        "results/toxicity/fairness/gaps.csv":
            "model,method,fairness_set,attribute,metric,value,low,high\n"
            f"bert-tiny,baseline,balanced,gender,FPR_gap,{gap},0.0,0.2\n",
        "results/toxicity/fairness/training_groups.csv":
            "method,group,n,n_positive,positive_ratio\nbaseline,female,10,3,0.3\n",
        "results/metrics.json": json.dumps(
            {"toxicity": {"bert-tiny": {"baseline": {"fpr_gap_gender": gap}}},
             "biasfinder": {"bert-tiny": {"baseline": {"btc_rate_gender": btc_rate}}}}),
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


def test_metrics_json_is_a_metric_and_the_tables_are_plots() -> None:
    doc = dvc.document(FAKE_JOBS)
    assert doc["stages"]["analysis_metrics"]["metrics"] == [
        {"results/metrics.json": {"cache": True}}]
    assert "outs" not in doc["stages"]["analysis_metrics"]
    assert doc["stages"]["biasfinder_table_imdb-test"]["outs"] == FAKE_JOBS[0]["output"]
    assert [next(iter(p)) for p in doc["plots"]] == [  # the DAG's tabular outputs only
        "results/biasfinder/imdb-test/table4.csv", "results/toxicity/fairness/gaps.csv",
        "results/toxicity/fairness/training_groups.csv"]
    assert doc["plots"][0]["results/biasfinder/imdb-test/table4.csv"] == {
        "template": "biasrepro_btc_rate", "title": "BTC rate, BiasFinder Table 4 (imdb-test)",
        "x": "btc_rate", "x_label": "BTC rate", "y": "model"}
    assert set(dvc.files(FAKE_JOBS)) == {Path("dvc.yaml")} | {
        dvc.TEMPLATE_DIR / f"biasrepro_{name}.json"
        for name in ("btc_rate", "fairness_gaps", "training_groups")}
    assert "plots" not in dvc.document(FAKE_JOBS[2:])


def test_dvc_metrics_diff_and_plots_diff_compare_two_revisions(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "resources").mkdir()
    (repo / "resources/in.txt").write_text("input\n")
    _run(["git", "init", "-q"], repo)
    _run([str(BIN / "dvc"), "init", "-q"], repo)
    for rel, text in dvc.files(FAKE_JOBS).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _write_run(repo, btc_rate=0.25, gap=0.125)
    _run([str(BIN / "dvc"), "commit", "-f", "-q"], repo)  # the lock; metrics and CSVs cached
    _git_commit(repo, "first run")
    in_git = _run(["git", "ls-files", "results"], repo).split()
    assert all(f.endswith(".gitignore") for f in in_git)  # results come from the DVC cache
    _write_run(repo, btc_rate=0.0625, gap=0.5)

    diff = json.loads(_run([str(BIN / "dvc"), "metrics", "diff", "--json"], repo))
    assert diff == {"results/metrics.json": {
        "toxicity.bert-tiny.baseline.fpr_gap_gender": {"old": 0.125, "new": 0.5, "diff": 0.375},
        "biasfinder.bert-tiny.baseline.btc_rate_gender":
            {"old": 0.25, "new": 0.0625, "diff": -0.1875}}}

    plots = json.loads(_run([str(BIN / "dvc"), "plots", "diff", "HEAD", "--json"], repo))
    plots = {path: renders[0] for path, renders in plots["data"].items()}
    assert set(plots) == {"results/biasfinder/imdb-test/table4.csv",
                          "results/toxicity/fairness/gaps.csv",
                          "results/toxicity/fairness/training_groups.csv"}
    btc = plots["results/biasfinder/imdb-test/table4.csv"]
    assert btc["type"] == "vega" and set(btc["revisions"]) == {"HEAD", "workspace"}
    spec = btc["content"]  # our template, filled: anchors replaced, facets kept
    assert spec["title"] == "BTC rate, BiasFinder Table 4 (imdb-test)"
    assert spec["facet"] == {"row": {"field": "characteristic", "type": "nominal"}}
    assert spec["spec"]["encoding"]["x"]["field"] == "btc_rate"
    assert "<DVC_METRIC" not in json.dumps(spec)
    gender = {(row["rev"], row["btc_rate"]) for row in spec["data"]["values"]
              if row["characteristic"] == "gender"}
    assert gender == {("HEAD", "0.25"), ("workspace", "0.0625")}  # HEAD's from the DVC cache
    gaps = plots["results/toxicity/fairness/gaps.csv"]["content"]
    assert {(row["rev"], row["value"]) for row in gaps["data"]["values"]} == {
        ("HEAD", "0.125"), ("workspace", "0.5")}
    assert [layer["mark"] for layer in gaps["spec"]["layer"]][0] == "rule"  # the CI bars


def _ran(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def _closure(stages: dict[str, Any], start: list[str], upstream: bool) -> set[str]:
    """``start`` and every stage upstream (or downstream) of it, by dvc.yaml's deps and outs."""
    producer = {o: n for n, s in stages.items()
                for o in s.get("outs", []) + [next(iter(m)) for m in s.get("metrics", [])]}
    edges: dict[str, set[str]] = {n: set() for n in stages}
    for name, stage in stages.items():
        for dep in stage["deps"]:
            if dep in producer:
                if upstream:
                    edges[name].add(producer[dep])
                else:
                    edges[producer[dep]].add(name)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        if (name := todo.pop()) not in seen:
            seen.add(name)
            todo.extend(edges[name])
    return seen


@pytest.mark.slow
def test_dvc_repro_in_a_fresh_clone_reruns_only_affected_stages(checkout: Path) -> None:
    # The small profile as a complete config/config.yaml (DVC reads params from that file).
    small = config.load(checkout / "config/config.yaml", checkout / SMALL_CONFIG)
    (checkout / "config/config.yaml").write_text(yaml.safe_dump(small, sort_keys=False))
    # its stages: one per job of the small profile (fewer models than the default's)
    _run([str(BIN / "biasrepro"), "dvc-yaml"], checkout)
    _run(["git", "init", "-q"], checkout)
    _git_commit(checkout, "clone")
    stages = yaml.safe_load((checkout / "dvc.yaml").read_text())["stages"]

    # Of all stages, only world_sst reads world.sst.n (or a key above it) ...
    def reads_sst(stage: dict[str, Any]) -> bool:
        keys = stage.get("params", [{}])[0].get("config/config.yaml", [])
        return any("world.sst.n".startswith(k) and "world.sst.n"[len(k):][:1] in ("", ".")
                   for k in keys)

    assert {n for n, s in stages.items() if reads_sst(s)} == {"world_sst"}
    # ... and DVC agrees on the part that builds the data and its summary (the stages after
    # them, fine-tuning included, are the subject of test_dvc_record's dataset swap).
    targets = ["data_summary"]
    built = _closure(stages, targets, upstream=True)
    assert {"world_sst", "world_reviews", "world_comments", "prepare_sst", "prepare_imdb",
            "prepare_civil_comments", "data_summary"} <= built
    first = _run([str(BIN / "dvc"), "repro", *targets], checkout)
    assert _ran(first) == built
    dvc_status = [str(BIN / "dvc"), "status", "--with-deps", *targets]
    assert "up to date" in _run(dvc_status, checkout)

    def sst_dependent(p: Path) -> bool:  # SST is the sentiment appendix's fairness set
        rel = p.relative_to(checkout / "results").parts
        return ("sst" in rel or "summary" in p.name or rel[:2] == ("predictions", "sentiment")
                or rel[:2] == ("sentiment", "fairness")
                or rel[:2] in (("sentiment", "leakage.json"), ("sentiment", "leakage.md")))

    untouched = {p: p.stat().st_mtime_ns for p in (checkout / "results").rglob("*")
                 if p.is_file() and not sst_dependent(p)}
    assert any("civil_comments" in p.parts for p in untouched)
    small["world"]["sst"]["n"] += 10
    (checkout / "config/config.yaml").write_text(yaml.safe_dump(small, sort_keys=False))

    status = json.loads(_run([*dvc_status, "--json"], checkout).splitlines()[-1])
    assert set(status) == {"world_sst"}
    assert "world.sst" in json.dumps(status)

    second = _run([str(BIN / "dvc"), "repro", *targets], checkout)
    assert _ran(second) == {"world_sst", "prepare_sst", "data_summary"}
    assert _ran(second) == _closure(stages, ["world_sst"], upstream=False) & built
    assert {p: p.stat().st_mtime_ns for p in untouched} == untouched
    summary = json.loads((checkout / "results/data/summary.json").read_text())
    assert summary["sst"]["all"]["n"] == small["world"]["sst"]["n"]


#: stages that train or score models: a dataset swap may reach them only through data they
#: train on or score
EXPENSIVE = re.compile(r"^(pretrain_embedded|finetune_|predict_|biasfinder_predict|"
                       r"representation_score|sentdebias_)")


def _after(jobs: list[dict[str, Any]], start: str) -> set[str]:
    """The stages after ``start`` in the DAG ``jobs``, ``start`` left out."""
    return downstream_stages(jobs, {start}) - {start}


def test_a_swapped_sst_set_reaches_no_model_but_the_scoring_of_its_own_sets(
        dag_jobs: list[dict[str, Any]]) -> None:
    """The SST fairness set is scored, never trained on: after a swap only its two sets'
    scoring reruns (one job per model and set), not BiasFinder's nor the test split's, which
    once waited on a leakage report that held every set (DVC reran them all)."""
    after = _after(dag_jobs, "prepare_sst")
    models = ("albert-tiny", "bert-tiny", "roberta-tiny")
    assert {s for s in after if EXPENSIVE.match(s)} == {
        f"predict_sentiment_{m}_{s}" for m in models
        for s in ("fairness-original", "fairness-balanced")}
    assert not {s for s in after if s.startswith(("biasfinder_", "leakage_gate_toxicity"))}


def test_a_swapped_civil_comments_file_reaches_what_trains_or_scores_on_comments(
        dag_jobs: list[dict[str, Any]]) -> None:
    """Civil Comments is fine-tuned on, scored, and part of the embedded models' pre-training
    corpus, so every model is downstream of it; BiasFinder's corpus, parse, templates and
    mutants and the SST sets are not, nor any verdict on a set that is not about comments."""
    after = _after(dag_jobs, "prepare_civil_comments")
    assert {"pretrain_embedded_bert-tiny", "finetune_toxicity_bert-tiny",
            "finetune_sentiment_bert-tiny", "biasfinder_predict_imdb-test_bert-tiny"} <= after
    assert not {s for s in after if s.startswith(("biasfinder_parse", "biasfinder_templates",
                                                  "biasfinder_mutants", "prepare_", "world_",
                                                  "imdb_gendered"))}
    assert "fairness_sets_sentiment" not in after
    assert not {s for s in after if s.startswith("leakage_gate_sentiment")}


def test_scoring_waits_for_its_own_sets_verdict_only(dag_jobs: list[dict[str, Any]]) -> None:
    """No stage that trains or scores reads a file gathered over data it does not use: the
    leakage verdict each scoring job reads is its own set's, and no such job reads the
    task-wide leakage report, the data summary, a settings dump or the run record."""
    gathered = re.compile(r"(leakage\.(json|md)|summary\.(json|md)|REPRODUCTION\.md|"
                          r"settings[^/]*\.json)$")
    for job in dag_jobs:
        name = dvc._stage_name(job)
        if not EXPENSIVE.match(name):
            continue
        assert not [i for i in job["input"] if gathered.search(i)], name
        verdicts = [i for i in job["input"] if "/leakage/" in i]
        if name.startswith("predict_"):
            scored = {Path(o).stem for o in job["output"]}
            assert [Path(v).stem for v in verdicts] == sorted(scored), name
