"""``biasrepro plan``: Snakemake's job matrix, GPU jobs, the cost model and memory estimates."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import BIN, REPO, snakemake

from biasrepro import config as cfg
from biasrepro import plan

PAPER = Path("config/paper.yaml")
DEFAULT = Path("config/config.yaml")
COSTS = yaml.safe_load((REPO / plan.COSTS).read_text(encoding="utf-8"))
#: the rules of the GPU families (workflow/rules/*.smk `compute("train"|"score")`)
TRAIN_SCORE = {"pretrain_embedded", "finetune_sentiment", "finetune_toxicity",
               "predict_sentiment", "predict_toxicity", "biasfinder_predict",
               "restratify_training", "sentdebias_subspace", "representation_score",
               "sentdebias_downstream"}


@pytest.fixture(scope="module")
def planned() -> dict[Path, tuple[list[plan.Job], plan.CostModel]]:
    """Each configuration's jobs and its cost model for one H200."""
    out = {}
    for configfile in (PAPER, DEFAULT):
        jobs, config = plan.dag_jobs(REPO / configfile, REPO)
        out[configfile] = jobs, plan.CostModel(config, COSTS, "h200")
    return out


def job_stats(configfile: Path) -> dict[str, int]:
    """The "Job stats" table of ``snakemake -n --forceall``: jobs per rule and the total."""
    out = snakemake(["-n", "--forceall", "--configfile", str(configfile)], cwd=REPO).stdout
    block = out.split("Job stats:")[1].split("\n\n")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.MULTILINE)}


def rows_by_rule(jobs: list[plan.Job], model: plan.CostModel) -> dict[str, dict[str, Any]]:
    return {r["rule"]: r for r in plan.table(jobs, model)}


@pytest.mark.parametrize("configfile", [PAPER, DEFAULT])
def test_jobs_per_rule_are_snakemakes(planned, configfile: Path) -> None:
    rows = rows_by_rule(*planned[configfile])
    assert {rule: r["jobs"] for rule, r in rows.items()} == job_stats(configfile)


@pytest.mark.parametrize("configfile", [PAPER, DEFAULT])
def test_gpu_jobs_are_the_train_and_score_families(planned, configfile: Path) -> None:
    config = cfg.load(REPO / DEFAULT, REPO / configfile)
    gpu_rules = set(TRAIN_SCORE)
    if (config["compute"]["families"]["parse"]["gpu"]
            and config["biasfinder"]["coref"]["backend"] == "fastcoref"):
        gpu_rules.add("biasfinder_parse")
    rows = rows_by_rule(*planned[configfile])
    for rule, row in rows.items():
        if rule != "total":
            assert row["gpu_jobs"] == (row["jobs"] if rule in gpu_rules else 0), rule
            assert (row["gpu_hours_high"] > 0) == (rule in gpu_rules), rule
            assert 0 < row["gpu_hours_low"] <= row["gpu_hours_high"] or rule not in gpu_rules
    assert rows["total"]["gpu_jobs"] == sum(
        r["jobs"] for rule, r in rows.items() if rule in gpu_rules)


def seconds(train: bool, tokens: float, batches: int, params: float = 84.93e6) -> float:
    """One work of the cost model, by hand: max(k N T / (peak mfu), batches x floor)."""
    gpu, over = COSTS["gpus"]["h200"], COSTS["overheads"]
    k, floor = (6, over["train_step_s"]) if train else (2, over["infer_batch_s"])
    return max(k * params * tokens / (gpu["peak_flops"] * gpu["mfu"]), batches * floor)


def _paper_sentiment_setting(config: dict, model: str) -> dict:
    """The paper profile's named sentiment setting of ``model``: its own, else the task's."""
    training = config["models"]["training"]
    own = config["models"]["registry"][model].get("training", {}).get("sentiment")
    return training["named"][own or training["sentiment"]]


def _gendered_rows(config: dict, split: str) -> float:
    """An IMDB-gendered split by hand: train and validation from IMDB train's gendered
    reviews, test from IMDB test's, the proportions kept (the scarcer half limits)."""
    imdb = COSTS["datasets"]["imdb"]["download"]
    f = config["preprocess"]["imdb_gendered"]["split"]
    total = min(imdb["train"] * imdb["gendered_share"] / (f["train"] + f["validation"]),
                imdb["test"] * imdb["gendered_share"] / f["test"])
    return total * f[split]


def test_a_scoring_job_costs_what_costs_yaml_says(planned) -> None:
    """predict_sentiment: each sentiment method's model scores IMDB test, both SST sets and
    IMDB-gendered's test split with and without counterfactuals, one job per model and set,
    as long as the model was trained (bert4doc: 128 tokens; tse: 512)."""
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    data, over = COSTS["datasets"], COSTS["overheads"]
    imdb, sst = data["imdb"]["download"], data["sst"]["download"]
    methods = len(config["methods"]["tasks"]["sentiment"])
    gendered = _gendered_rows(config, "test")
    total = 0.0
    for model in config["models"]["tasks"]["sentiment"]:  # one job per model and set
        length = _paper_sentiment_setting(config, model)["max_length"]
        imdb_tokens, sst_tokens = min(imdb["tokens"], length), min(sst["tokens"], length)
        for tokens in (imdb["test"] * imdb_tokens, gendered * imdb_tokens,
                       gendered * imdb["perturbed_ratio"] * imdb_tokens, sst["rows"] * sst_tokens,
                       sst["rows"] * sst["balanced_ratio"] * sst_tokens):
            total += over["job_s"] + methods * (over["run_s"] + seconds(
                False, tokens, math.ceil(tokens / COSTS["batching"]["predict_tokens"])))
    row = rows_by_rule(*planned[PAPER])["predict_sentiment"]
    assert row["gpu_hours_high"] == pytest.approx(total / 3600, rel=1e-9)
    assert row["gpu_hours_low"] == row["gpu_hours_high"]  # no training: no early stopping


@pytest.mark.parametrize(("model", "setting"), [("bert-base-uncased", "bert4doc"),
                                                ("albert-base-v2", "tse")])
def test_sentiment_finetuning_costs_its_named_setting(planned, model: str,
                                                      setting: str) -> None:
    """The baseline run of finetune_sentiment in the paper profile: bert4doc trains 5 epochs
    of batch 32 on every training review at 128 tokens, unvalidated; tse 20 epochs of batch
    8 at 512 tokens on 60 % of them, validated on the other 40 % every 500 steps."""
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    s = config["models"]["training"]["named"][setting]
    assert _paper_sentiment_setting(config, model) == s
    imdb = COSTS["datasets"]["imdb"]["download"]
    length = min(imdb["batch_tokens"], s["max_length"])
    held = imdb["train"] * s["eval_fraction"]
    train = imdb["train"] - held
    steps = math.ceil(train / s["batch_size"]) * s["epochs"]
    expected = [plan.Work(True, 84.93e6, train * length * s["epochs"], steps)]
    if held:
        evals = steps // s["eval_steps"]
        expected.append(plan.Work(False, 84.93e6, held * length * evals,
                                  math.ceil(held / s["batch_size"]) * evals))
    _, cost = planned[PAPER]
    job = plan.Job(rule="finetune_sentiment", wildcards={"model": model},
                   output=[f"results/models/sentiment/{model}/baseline"],
                   inputs=frozenset({"train"}), gpus=1, level=0)
    assert cost.works(job) == (1, expected)


def test_imdb_gendered_runs_validate_on_its_validation_split(planned) -> None:
    """The appendix's runs select on IMDB-gendered's validation split (read from the job's
    own command line), the baseline on a hold-out of its training reviews."""
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    jobs, cost = planned[PAPER]
    job = next(j for j in jobs if j.rule == "finetune_sentiment"
               and j.wildcards["model"] == "albert-base-v2")
    by_method = dict(zip((Path(o).name for o in job.output), job.validation, strict=True))
    assert by_method["imdb-gendered"] == "results/sentiment/imdb_gendered/validation.parquet"
    assert by_method["downstream-perturbed-data"] == by_method["imdb-gendered"]
    assert by_method["baseline"] == "none"
    # the appendix's models train with the main study's recipe (evaluated once per epoch)
    s = config["models"]["training"]["named"]["main-study"]
    assert config["methods"]["registry"]["imdb-gendered"]["training"] == {
        "sentiment": "main-study"}
    length = min(COSTS["datasets"]["imdb"]["download"]["batch_tokens"], s["max_length"])
    train, held = _gendered_rows(config, "train"), _gendered_rows(config, "validation")
    steps = math.ceil(train / s["batch_size"]) * s["epochs"]
    evals = s["epochs"]
    one = plan.Job(rule="finetune_sentiment", wildcards={"model": "albert-base-v2"},
                   output=["results/models/sentiment/albert-base-v2/imdb-gendered"],
                   inputs=frozenset({"train", "validation"}), gpus=1, level=0,
                   validation=(by_method["imdb-gendered"],))
    assert cost.works(one) == (1, [
        plan.Work(True, 84.93e6, train * length * s["epochs"], steps),
        plan.Work(False, 84.93e6, held * length * evals,
                  math.ceil(held / s["batch_size"]) * evals)])


def test_a_finetuning_job_costs_what_costs_yaml_says(planned) -> None:
    """finetune_toxicity: every trained toxicity method, 3 epochs each, validation per epoch,
    on the Civil Comments rows of the kept source splits."""
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    cc, over = COSTS["datasets"]["civil_comments"]["download"], COSTS["overheads"]
    s = config["models"]["training"]["named"][config["models"]["training"]["toxicity"]]
    split = config["preprocess"]["civil_comments"]["split"]
    assert config["preprocess"]["civil_comments"]["splits"] == ["train"]
    source_rows = cc["source_rows"]["train"]
    registry = config["methods"]["registry"]
    trained = [m for m in config["methods"]["tasks"]["toxicity"]
               if registry[m].get("sentdebias", {}).get("stage") != "downstream"]
    length, epochs, batch = min(cc["batch_tokens"], s["max_length"]), s["epochs"], s["batch_size"]
    held = source_rows * split["validation"]
    job = over["job_s"] + len(trained) * over["run_s"]
    # the harness perturbs the re-stratified set: its ratio is the product (costs.yaml)
    ratio = {"original": 1, "perturbed": cc["perturbed_ratio"],
             "stratified": cc["stratified_ratio"],
             "perturbed_stratified": cc["stratified_ratio"] * cc["perturbed_ratio"]}
    assert "perturbed_stratified_ratio" not in cc  # the paper's 5.261 is not what it builds
    for method in trained:
        rows = source_rows * split["train"] * ratio[registry[method]["data"]]
        job += seconds(True, rows * length * epochs, math.ceil(rows / batch) * epochs)
        job += seconds(False, held * length * epochs, math.ceil(held / batch) * epochs)
    jobs, model = planned[PAPER]
    one = next(j for j in jobs if j.rule == "finetune_toxicity")
    assert model.seconds(one) == pytest.approx(job, rel=1e-9)


def test_csv_output_parses_and_its_total_is_the_sum_of_its_rows(tmp_path: Path) -> None:
    out = tmp_path / "plan.csv"
    proc = subprocess.run(
        [str(BIN / "biasrepro"), "plan", "--configfile", str(PAPER), "--gpu", "H100",
         "--format", "csv", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list(rows[0]) == list(plan.COLUMNS)
    *rules, total = rows
    assert total["rule"] == "total" and len(rules) == len({r["rule"] for r in rules})
    for column in ("jobs", "gpu_jobs"):
        assert int(total[column]) == sum(int(r[column]) for r in rules)
    for column in ("gpu_hours_low", "gpu_hours_high"):
        assert float(total[column]) == pytest.approx(
            sum(float(r[column]) for r in rules), abs=1e-4 * len(rules))
    assert 0 < float(total["gpu_hours_low"]) < float(total["gpu_hours_high"])
    assert float(total["mem_est_mb"]) == max(float(r["mem_est_mb"] or 0) for r in rules)
    assert all(r["family"] and float(r["mem_est_mb"]) > 0 and int(r["mem_mb"]) > 0
               for r in rules if r["rule"] != "all")
    assert not list(tmp_path.glob(".tmp-*.plan.csv"))


def test_markdown_table_ends_with_the_total_and_what_it_assumes(planned) -> None:
    text = plan.render(plan.table(*planned[PAPER]), "md", gpu="h200", configfile=PAPER)
    lines = text.splitlines()
    assert lines[0] == ("| rule | jobs | gpu_jobs | gpu_hours_low | gpu_hours_high | family "
                        "| mem_est_mb | mem_mb |")
    assert re.fullmatch(r"\| total \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d \|  \| \d+ \|  \|",
                        lines[lines.index("") - 1])
    assert "one h200" in lines[-1] and str(plan.COSTS) in lines[-1]
    assert not [line for line in lines if line.startswith("warning:")]


def test_unknown_gpu_class_names_the_known_ones() -> None:
    proc = subprocess.run([str(BIN / "biasrepro"), "plan", "--gpu", "tpu9"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: unknown GPU class 'tpu9' (known in {REPO / plan.COSTS}: "
        f"{', '.join(sorted(COSTS['gpus']))})")


def test_a_bad_config_gives_the_workflows_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: many\n", encoding="utf-8")
    proc = subprocess.run([str(BIN / "biasrepro"), "plan", "--configfile", str(bad)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and not proc.stdout
    # the Snakefile validates with biasrepro.config (workflow/rules/common.smk)
    with pytest.raises(cfg.ConfigError) as workflow_error:
        cfg.load(REPO / DEFAULT, bad)
    assert proc.stderr.endswith(f"error: {workflow_error.value}\n")
    assert "config key 'seed': 'many' is not of type 'integer'" in proc.stderr


def _leaves(node: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(node, dict):
        return [leaf for k, v in node.items() for leaf in _leaves(v, f"{path}.{k}")]
    return [(path, node)]


def test_cost_model_holds_numbers_and_the_codes_batch_sizes() -> None:
    # YAML 1.1 reads 4.0e6 (no exponent sign) as a string
    assert [p for p, v in _leaves(COSTS) if isinstance(v, bool) or
            not isinstance(v, int | float)] == []
    from biasrepro.debias import sentdebias
    from biasrepro.models import predict
    from biasrepro.nlp.coref import FastCoref
    from biasrepro.perturb import restratify
    from biasrepro.representation import seat, stereoset

    def default(fn: Any, name: str) -> Any:
        return inspect.signature(fn).parameters[name].default

    assert predict.CHUNK_ROWS == 65536  # CostModel._predict_memory's chunk
    assert COSTS["batching"] == {
        "predict_tokens": predict.CUDA_BATCH_TOKENS,
        "sentdebias_rows": default(sentdebias.embed, "batch_size"),
        "nlpaug_rows": restratify.CONTEXTUAL_BATCH,
        "nlpaug_max_tokens": 512,
        "coref_tokens": default(FastCoref.__init__, "batch_size") * 512,
        "stereoset_tokens": stereoset.CUDA_BATCH_TOKENS,
        "seat_rows": default(seat.encode, "batch_size"),
    }


def test_readme_states_the_paper_profiles_plan_on_one_h200(planned) -> None:
    total = rows_by_rule(*planned[PAPER])["total"]
    readme = " ".join((REPO / "README.md").read_text().split())
    stated = re.search(r"For `config/paper\.yaml` on one H200: (\d+) jobs, (\d+) of them GPU "
                       r"jobs, about (\d+)[–-](\d+) GPU-hours", readme)
    assert stated, "README.md no longer states the paper profile's plan (low–high GPU-hours)"
    assert (int(stated[1]), int(stated[2])) == (total["jobs"], total["gpu_jobs"])
    assert (int(stated[3]), int(stated[4])) == (round(total["gpu_hours_low"]),
                                                round(total["gpu_hours_high"]))


# -- memory, early stopping, mutants ---------------------------------------------------------

MEMORY = COSTS["memory"]


@pytest.mark.parametrize("configfile", [PAPER, DEFAULT])
def test_every_job_knows_its_family_and_asks_for_its_memory(planned, configfile: Path) -> None:
    """The family read from the rule's compute("FAMILY") is the one its resources came
    from: the job's mem_mb is that family's."""
    jobs, model = planned[configfile]
    families = model.config["compute"]["families"]
    for job in jobs:
        if job.rule == "all":
            assert (job.family, job.mem_mb) == ("", 0)
            continue
        assert job.family in families, job.rule
        assert job.mem_mb == families[job.family]["mem_mb"], job.rule
        assert (job.gpus > 0) == bool(families[job.family]["gpu"]
                                      and (job.rule != "biasfinder_parse"
                                           or model.config["biasfinder"]["coref"]["backend"]
                                           == "fastcoref")), job.rule
        assert model.memory(job) > 0, job.rule


def test_paper_families_are_sized_from_their_estimates(planned) -> None:
    """compute.families mem_mb of the paper profile: margin x the family's largest estimate,
    rounded up to round_mb, so every job fits with the margin and none asks for much more."""
    jobs, model = planned[PAPER]
    estimates = plan.family_estimates(plan.table(jobs, model))
    families = model.config["compute"]["families"]
    assert set(estimates) == set(families)
    for family, est in estimates.items():
        sized = math.ceil(MEMORY["margin"] * est / MEMORY["round_mb"]) * MEMORY["round_mb"]
        assert families[family]["mem_mb"] == sized, (family, est)
    assert plan.memory_warnings(jobs, model) == []


def test_a_shrunk_family_warns_naming_rule_estimate_and_limit(planned) -> None:
    jobs, model = planned[PAPER]
    shrunk = [dataclasses.replace(j, mem_mb=1000) if j.family == "train" else j for j in jobs]
    warnings = plan.memory_warnings(shrunk, model)
    worst = max(model.memory(j) for j in jobs if j.rule == "finetune_toxicity")
    assert (f"warning: rule finetune_toxicity needs about {worst:,.0f} MB, more than the "
            f"1,000 MB of its family 'train' (compute.families.train.mem_mb)") in warnings
    assert {w.split()[2] for w in warnings} == {j.rule for j in jobs if j.family == "train"}
    text = plan.render(plan.table(shrunk, model), "md", gpu="h200", configfile=PAPER,
                       warnings=warnings)
    assert text.rstrip().splitlines()[-len(warnings):] == warnings


def test_the_command_warns_when_a_config_shrinks_a_family(tmp_path: Path) -> None:
    small = tmp_path / "small.yaml"
    small.write_text("compute:\n  families:\n    score: {mem_mb: 1000, runtime: 30, gpu: true}\n",
                     encoding="utf-8")
    proc = subprocess.run([str(BIN / "biasrepro"), "plan", "--configfile", str(small)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"rule biasfinder_predict needs about [\d,]+ MB, more than the 1,000 MB "
                     r"of its family 'score'", proc.stderr)
    row = next(line for line in proc.stdout.splitlines()
               if line.startswith("| biasfinder_predict |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5:] == ["score", cells[6], "1000"] and float(cells[6]) > 1000
    assert "warning: rule biasfinder_predict needs about" in proc.stdout


def test_early_stopping_makes_finetuning_a_range(planned) -> None:
    """tse (patience 7, every 500 steps): low stops after 8 evaluations, 4,000 steps, far
    before 20 epochs; bert4doc (no early stopping) costs the same both ways."""
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    s = config["models"]["training"]["named"]["tse"]
    jobs, model = planned[PAPER]
    albert = next(j for j in jobs if j.rule == "finetune_sentiment"
                  and j.wildcards["model"] == "albert-base-v2")
    _, high = model.works(albert)
    _, low = model.works(albert, low=True)
    earliest = (s["early_stopping_patience"] + 1) * s["eval_steps"]
    # the appendix's runs (IMDB-gendered, its perturbed copy) train with the main study's
    # recipe, without early stopping; the others with tse
    appendix = {"imdb-gendered", "downstream-perturbed-data"}
    tse_runs = sum(Path(o).name not in appendix for o in albert.output)
    low_tse = [w.batches for w, o in zip([w for w in low if w.train], albert.output,
                                         strict=True) if Path(o).name not in appendix]
    high_tse = [w.batches for w, o in zip([w for w in high if w.train], albert.output,
                                          strict=True) if Path(o).name not in appendix]
    assert low_tse == [earliest] * tse_runs and tse_runs == 2
    assert all(b > earliest for b in high_tse)
    assert model.seconds(albert, low=True) < model.seconds(albert)
    bert = next(j for j in jobs if j.rule == "finetune_sentiment"
                and j.wildcards["model"] == "bert-base-uncased")
    assert model.works(bert, low=True) == model.works(bert)
    toxicity = next(j for j in jobs if j.rule == "finetune_toxicity")
    assert model.seconds(toxicity, low=True) == model.seconds(toxicity)  # no patience
    row = rows_by_rule(jobs, model)["finetune_sentiment"]
    assert row["gpu_hours_low"] < row["gpu_hours_high"]


def test_mutants_follow_the_configured_word_lists(planned) -> None:
    """The embedded default: the formula gives the mutants the workflow built (costs.yaml
    world, measured); the paper profile: BiasFinder's lists, 30 names x 11 noun pairs."""
    _, world = planned[DEFAULT]
    measured = COSTS["datasets"]["imdb"]["world"]["biasfinder"]
    for characteristic, sizes in measured.items():
        assert world.mutants(characteristic) == pytest.approx(sizes["mutants"], rel=0.02)
    _, paper = planned[PAPER]
    assert paper.wordlist_sizes() == COSTS["biasfinder_lists"]["original"]
    kinds = COSTS["datasets"]["imdb"]["download"]["biasfinder"]["gender"]["gender_kinds"]
    per_template = 2 * (kinds["name"] * 30 + kinds["name_noun"] * 30 * 11 + kinds["noun"] * 11
                        + kinds["pronoun"]) / sum(kinds.values())
    assert paper.mutants_per_template("gender") == pytest.approx(per_template)
    assert paper.mutants("occupation") == 79 * 14319  # the notebooks' 1,131,201
    assert paper.mutants("country") == 25 * 2828  # the notebooks' 70,700


def test_memory_estimates_are_near_the_measured_points(planned) -> None:
    """Within 25 % of the peaks measured on two cores (README; costs.yaml memory)."""
    _, model = planned[DEFAULT]
    # prepare civil-comments on 2,000,000 Kaggle rows, 449,145 kept: 1,348 MB
    config = cfg.load(REPO / DEFAULT, REPO / PAPER)
    config["preprocess"]["civil_comments"]["splits"] = "all"
    costs = yaml.safe_load(yaml.safe_dump(COSTS))
    costs["datasets"]["civil_comments"]["download"]["rows"] = 449145
    cc = plan.CostModel(config, costs, "h200")
    job = plan.Job(rule="prepare_civil_comments", wildcards={}, output=[], inputs=frozenset(),
                   gpus=0, level=0, family="light", mem_mb=16000)
    assert cc.memory(job) == pytest.approx(1348, rel=0.25)
    # predict of 1,500,000 (300,000) mutants with a random tiny BERT on the CPU: 1,621 MB
    # (556 + 821 MB), benchmarks/predict_scale.py
    config = cfg.load(REPO / DEFAULT)
    config["models"]["embedded"] |= {"vocab_size": 4000, "hidden_size": 16,
                                     "num_hidden_layers": 1, "num_attention_heads": 2,
                                     "intermediate_size": 64, "max_length": 64}
    tiny = plan.CostModel(config, COSTS, "h200")
    job = plan.Job(rule="predict_sentiment", wildcards={"model": "bert-tiny"}, output=[],
                   inputs=frozenset(), gpus=0, level=0)
    for rows, peak in ((1.5e6, 1621), (3e5, 556 + 821)):
        est = tiny._predict_memory(job, "bert-tiny", [(rows, 200)], 64,
                                   MEMORY["predict_base_mb"])
        assert est == pytest.approx(peak, rel=0.25), rows
    # biasfinder btc of 1,500,000 occupation mutants, 37 M pairs: 978 MB; the annotation
    # sample of 400 of them: 641 MB (benchmarks/btc_scale.py)
    config = cfg.load(REPO / DEFAULT)
    config["biasfinder"]["characteristics"] = ["occupation"]
    costs = yaml.safe_load(yaml.safe_dump(COSTS))
    world = costs["datasets"]["imdb"]["world"]["biasfinder"]["occupation"]
    world |= {"templates": 15000, "mutants": 1_500_000 * world["templates"] / 15000}
    config["biasfinder"]["max_templates"] = None
    bf = plan.CostModel(config, costs, "h200")
    for rule, peak in (("biasfinder_btc", 978), ("biasfinder_annotation", 641)):
        job = plan.Job(rule=rule, wildcards={}, output=[], inputs=frozenset(), gpus=0,
                       level=0, family="light", mem_mb=16000)
        assert bf.memory(job) == pytest.approx(peak, rel=0.25), rule
    # the embedded default's own jobs, run on the CPU (logs/benchmarks, costs.yaml)
    jobs, _ = planned[DEFAULT]
    measured = MEMORY["world_rss_mb"]
    for job in jobs:
        rule = ("finetune" if job.rule.startswith("finetune_")
                else "predict" if job.rule.startswith("predict_") else job.rule)
        if rule in measured:
            est = model.memory(dataclasses.replace(job, gpus=0))
            assert est == pytest.approx(measured[rule], rel=0.25), job.rule


def test_a_gpu_job_adds_the_cuda_runtime_and_a_cpu_job_activations(planned) -> None:
    """The same fine-tuning job on the CPU: no CUDA runtime, but every layer's activations
    of a batch (s*b*h*(34 + 5*a*s/h) bytes per layer at 16 bits, doubled for fp32)."""
    jobs, model = planned[PAPER]
    m = COSTS["models"]["FacebookAI/roberta-base"]
    s = model.training("toxicity", "roberta-base")
    length = min(COSTS["datasets"]["civil_comments"]["download"]["batch_tokens"],
                 s["max_length"])
    activations = m["layers"] * 2 * length * s["batch_size"] * m["hidden"] * (
        34 + 5 * m["heads"] * length / m["hidden"]) / 2**20
    gpu_job = next(j for j in jobs if j.rule == "finetune_toxicity"
                   and j.wildcards["model"] == "roberta-base")
    assert model.memory(dataclasses.replace(gpu_job, gpus=0)) == pytest.approx(
        model.memory(gpu_job) - MEMORY["cuda_host_mb"] + activations)


#: the paper-scale dry run's review swaps (docs/paper-scale.md): (rule, its rows) -> peak MB
DRY_RUN_PEAKS = {"perturb_training": 1654, "imdb_gendered_perturbed_test": 1617}


def test_review_swap_estimates_are_within_25_percent_of_the_dry_run(monkeypatch) -> None:
    """With the dry run's row counts (12,228 IMDB-gendered training reviews, 24,455 after
    the swap; 9,171 test reviews), the estimates land within 25 % of the measured peaks."""
    config = cfg.load(REPO / "config/paper.yaml")
    model = plan.CostModel(config, COSTS, "h200")
    rows = {("sentiment", "gendered"): 12228, ("sentiment", "perturbed"): 24455}
    monkeypatch.setattr(plan.CostModel, "training_rows", lambda self, t, k: rows[(t, k)])
    monkeypatch.setattr(plan.CostModel, "gendered_rows", lambda self, split: 9171)

    class FakeJob:
        def __init__(self, rule: str, wildcards: dict[str, str]) -> None:
            self.rule, self.wildcards, self.gpus, self.output = rule, wildcards, 0, []

    got = {
        "perturb_training": model.memory(FakeJob("perturb_training",
                                                 {"task": "sentiment", "kind": "perturbed"})),
        "imdb_gendered_perturbed_test": model.memory(FakeJob("imdb_gendered_perturbed_test",
                                                             {})),
    }
    for rule, measured in DRY_RUN_PEAKS.items():
        assert abs(got[rule] / measured - 1) <= 0.25, (rule, got[rule], measured)


#: the paper-scale dry run's data-path peaks (docs/paper-scale.md), MB: IMDB reviews of 191
#: words (about 248 tokens at the cost model's 1.3 per word), 24,750 distinct test reviews
DRY_RUN_DATA_PEAKS = {"prepare_imdb": 450, "biasfinder_templates": 1534,
                      "biasfinder_parse": 7650, "fairness_sets": 496}


def test_data_path_estimates_are_within_25_percent_of_the_dry_run(monkeypatch) -> None:
    """At the dry run's review length and fairness-set rows (toxicity: 19,917 original,
    34,447 balanced) the IMDB, parse, template and fairness-set estimates land within 25 % of
    its peaks. Its parse ran a tiny hand-set F-coref: the comparison takes the parse without
    a coreference model's weights, plus torch, which the tiny model loaded."""
    costs = yaml.safe_load(yaml.safe_dump(COSTS))
    costs["datasets"]["imdb"]["download"]["tokens"] = 248
    config = cfg.load(REPO / "config/paper.yaml")
    config["biasfinder"]["coref"]["backend"] = "rules"
    model = plan.CostModel(config, costs, "h200")
    monkeypatch.setattr(plan.CostModel, "fairness_texts",
                        lambda self, task: [(19917, 70), (34447, 70)])
    got = {}
    for rule in DRY_RUN_DATA_PEAKS:
        job = plan.Job(rule=rule, wildcards={"task": "toxicity"} if rule == "fairness_sets"
                       else {}, output=[], inputs=frozenset(), gpus=0, level=0,
                       family="light", mem_mb=16000)
        got[rule] = model.memory(job)
    got["biasfinder_parse"] += MEMORY["torch_mb"]
    for rule, measured in DRY_RUN_DATA_PEAKS.items():
        assert abs(got[rule] / measured - 1) <= 0.25, (rule, got[rule], measured)
