"""The Snakemake spine: lint, both profiles' DAGs, and end-to-end runs of the small profile.

The end-to-end tests prove the README's first command on the small profile: a run
finishes, a second identical run gives byte-identical files, and a run killed with
SIGKILL part-way finishes on rerun with exactly the same bytes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import BIN, REPO, SMALL_CONFIG, env_with_venv, snakemake, tree_hashes


def test_lint_is_clean() -> None:
    proc = snakemake(["--lint"], cwd=REPO)
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


def test_every_rule_has_log_benchmark_conda_and_resources() -> None:
    text = "\n".join(p.read_text() for p in (REPO / "workflow/rules").glob("*.smk"))
    # named rules, and rules made in a loop (`rule:` with a `name:` directive)
    blocks = re.split(r"^ *rule(?: (\w+))?:", text, flags=re.M)[1:]
    assert blocks
    for name, body in zip(blocks[::2], blocks[1::2], strict=True):
        name = name or re.search(r"name:\s*(\S+)", body).group(1)
        for directive in ("log:", "benchmark:", "conda:"):
            assert f"    {directive}" in body, f"rule {name} has no {directive}"
        # its resource family (config `compute`): what it asks a scheduler for
        family = re.search(r"resources:\s+\*\*compute\(\"(\w+)\"", body)
        assert family, f"rule {name} declares no resource family"
        # a job of a GPU family is placed on its devices (biasrepro.gpu); others need none
        placed = 'biasrepro("--gpus {resources.gpu} ' in body
        assert placed == (family.group(1) != "light"), f"rule {name}: GPU placement"


def test_default_profile_limits_gpu_jobs_to_one() -> None:
    profile = yaml.safe_load((REPO / "profiles/default/profile.yaml").read_text())
    assert profile["resources"]["gpu"] == 1
    assert profile["default-resources"]["gpu"] == 0
    assert profile["rerun-incomplete"] is True


def test_families_map_to_slurm_requests() -> None:
    """compute.slurm and the families become each job's SLURM resources (the plugin's names)."""
    from biasrepro import snakedag

    cluster = {"gpus": 1, "slurm": {"partition": "cpu", "gpu_partition": "gpu",
                                    "account": "lab", "gpu_model": "h200"}}
    jobs, config = snakedag.dag_jobs(
        REPO / "config/config.yaml", REPO,
        lambda j, _: (j.rule.name, dict(j.resources)), config={"compute": cluster})
    families = config["compute"]["families"]
    by_rule = dict(jobs)
    expect = {"finetune_toxicity": ("train", "gpu"), "predict_sentiment": ("score", "gpu"),
              "biasfinder_parse": ("parse", "cpu"), "figures": ("light", "cpu")}
    for rule, (family, partition) in expect.items():
        res = by_rule[rule]
        assert (res["mem_mb"], res["runtime"]) == (families[family]["mem_mb"],
                                                   families[family]["runtime"]), rule
        assert res["slurm_partition"] == partition and res["slurm_account"] == "lab", rule
        assert res["gpu"] == (partition == "gpu"), rule
        assert res.get("gpu_model") == ("h200" if partition == "gpu" else None), rule


def test_paper_profile_plans_downloads_offline() -> None:
    proc = snakemake(["-n", "-p", "--configfile", "config/paper.yaml"], cwd=REPO)
    out = proc.stdout + proc.stderr
    for name in ("aclImdb_v1.tar.gz", "civil_comments_v1.2.zip", "SST_fairness_dataset.csv"):
        assert "resources/downloads/" in out and name in out
    assert "world_reviews" not in out
    # the fine-tunings: no --seed replaces a named setting's own seed (bert4doc's 42) in the
    # run's first replicate; the sentiment jobs name each run's method, whose setting the
    # appendix's methods choose
    commands = [line for line in out.splitlines() if " finetune --model " in line]
    assert len(commands) == 6 and not any(" --seed " in c for c in commands)
    sentiment = [c for c in commands if "--task sentiment" in c]
    assert all("--methods baseline downstream-perturbed-data imdb-gendered" in c
               for c in sentiment)


@pytest.mark.slow
def test_small_profile_runs_and_reruns_byte_identically(small_run: Path, tmp_path: Path) -> None:
    checkout = small_run
    summary = json.loads((checkout / "results/data/summary.json").read_text())
    assert summary["imdb"]["train"]["n"] == 200
    assert set(summary["civil_comments"]["splits"]) == {"train", "validation", "test"}
    assert (checkout / "results/data/summary.md").read_text().startswith("# Prepared data")
    # The data stage measures exactly the dataset bias the world planted (Eq. 4 and 5).
    truth = json.loads((checkout / "resources/world/civil_comments/ground_truth.json").read_text())
    measured = summary["civil_comments"]["train_dataset_bias"]
    assert measured["selection"] == pytest.approx(truth["selection_bias"], abs=1e-12)
    assert measured["overamplification"] == truth["overamplification_bias"]
    # The toxicity study: the baseline's training data has the planted bias, the balanced
    # fairness set equal positive ratios per attribute, and every table was written.
    bias = pd.read_csv(checkout / "results/toxicity/fairness/dataset_bias.csv")
    base = bias[bias["method"] == "baseline"].set_index("attribute")
    for attr, value in truth["selection_bias"].items():
        assert base.loc[attr, "selection"] == pytest.approx(value, abs=1e-12)
        assert base.loc[attr, "overamplification"] == pytest.approx(
            truth["overamplification_bias"][attr]["normalized"], abs=1e-12)
    stats = json.loads((checkout / "results/toxicity/fairness/stats.json").read_text())
    ratios = {g: v["positive_ratio"] for g, v in stats["balanced"]["groups"].items()}
    assert ratios["male"] == ratios["female"] and ratios["black"] == ratios["white"]
    gaps = pd.read_csv(checkout / "results/toxicity/fairness/gaps.csv")
    assert set(gaps["method"]) == {"baseline", "downstream-perturbed-stratified-data",
                                   "upstream-sentDebias-gender", "downstream-sentDebias-gender"}
    assert set(gaps["fairness_set"]) == {"original", "balanced"}
    # Table 4: the pretrained model with and without its gender subspace, and its
    # representation bias in the Pearson tables
    table4 = pd.read_csv(checkout / "results/representation/table4.csv")
    assert set(zip(table4["model"], table4["variant"], strict=True)) == {
        ("roberta-tiny", "pretrained"), ("roberta-tiny", "sentdebias-gender")}
    assert set(table4["source"]) == {"crows", "stereoset", "seat"}
    corr = pd.read_csv(checkout / "results/toxicity/fairness/correlations.csv")
    assert {"representation_crows", "representation_stereoset", "representation_seat"} <= set(
        corr["x"])
    assert (checkout / "results/models/toxicity/roberta-tiny/downstream-sentDebias-gender"
            / "sentdebias.safetensors").exists()
    sense = pd.read_csv(checkout / "results/sentiment/fairness/sensescore.csv")
    assert set(sense["method"]) == {"baseline", "downstream-perturbed-data"}
    # The controls pass on the world, every paper table and figure is written, the
    # headline metrics and the run record exist, and the HTML report opens with the controls.
    # (the small profile trains too briefly for the models' controls: they may fail or,
    # lacking a method, not run; the default passes all of them)
    controls = json.loads((checkout / "results/analysis/controls.json").read_text())
    results = {c["id"]: c["result"] for c in controls["controls"]}
    assert all(results[k] == "pass" for k in ("data-counts", "data-selection",
                                              "data-overamplification", "restratify-ratio"))
    assert results["tox-fpr-gap"] == "not run"  # no downstream-perturbed-data model here
    from biasrepro.analysis import figures, paper_tables

    for out in paper_tables.output_files(checkout / "results/analysis/paper_tables"):
        assert out.stat().st_size > 0, out
    for name in figures.figure_files(figures.figure_names(["sentiment", "toxicity"], True)):
        assert (checkout / "results/analysis/figures" / name).stat().st_size > 0, name
    metrics = json.loads((checkout / "results/metrics.json").read_text())
    assert {"classification", "fairness", "biasfinder", "representation", "cross_study",
            "controls"} <= set(metrics)
    record = (checkout / "results/REPRODUCTION.md").read_text()
    assert "## Planted-bias controls" in record and "| torch |" in record
    started = time.perf_counter()
    snakemake(["--configfile", SMALL_CONFIG, "--report", "report.html"], cwd=checkout)
    print(f"report: {time.perf_counter() - started:.1f} s")
    html = (checkout / "report.html").read_text()
    assert "Planted-bias controls of this run" in html and "restratify-ratio" in html
    # ... laid out by a real browser: at 1280 and 1920 px the landing page starts with the
    # controls table, which does not overlap the rule graph (screenshots in tmp_path)
    from test_report_browser import CHROMIUM, check_report_layout

    if CHROMIUM is not None:
        started = time.perf_counter()
        check_report_layout(checkout / "report.html", tmp_path / "report-screenshots")
        print(f"report layout in Chromium: {time.perf_counter() - started:.1f} s")
    (checkout / "report.html").unlink()
    for rule in ("world_reviews", "prepare_civil_comments", "data_summary"):
        assert (checkout / f"logs/{rule}.log").exists()
        assert (checkout / f"logs/benchmarks/{rule}.tsv").exists()
    proc = snakemake(["--cores", "all", "--configfile", SMALL_CONFIG], cwd=checkout)
    assert "Nothing to be done" in proc.stdout + proc.stderr

    # A second, SIGKILLed-then-resumed run in another copy gives the same bytes.
    from conftest import copy_checkout

    other = copy_checkout(tmp_path / "killed")
    cmd = [str(BIN / "snakemake"), "--cores", "1", "--configfile", SMALL_CONFIG]
    proc = subprocess.Popen(cmd, cwd=other, env=env_with_venv(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = other / "logs" / "prepare_civil_comments.log"
    deadline = time.monotonic() + 300
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (other / "results/data/summary.json").exists()
    partial = {p.name for p in (other / "results/data/civil_comments").glob("*")} \
        if (other / "results/data/civil_comments").exists() else set()
    assert not {"train.parquet", "identity_stats.json"} <= partial, "killed job left outputs"
    snakemake(["--unlock"], cwd=other)  # a SIGKILL leaves Snakemake's directory lock behind
    snakemake(["--cores", "all", "--configfile", SMALL_CONFIG], cwd=other)
    assert tree_hashes(other, "results", "resources") == tree_hashes(
        checkout, "results", "resources")
