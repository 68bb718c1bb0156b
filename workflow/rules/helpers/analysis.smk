"""Helpers of the analysis rules (rules/analysis.smk): what each analysis step reads and writes,
and where its outputs appear in the report."""


from biasrepro.analysis import figures as brfigures  # matplotlib not imported
from biasrepro.analysis import paper_tables as brpaper  # stdlib only
from biasrepro.analysis import seeds as brseeds  # pandas not imported

ANALYSIS = "results/analysis"

#: sha256 of the resolved configuration (canonical JSON), for the run record
CONFIG_SHA256 = brconfig.config_sha256(config)


def from_world(*datasets):
    return all(config["datasets"][d]["source"] == "world" for d in datasets)


def analysis_inputs(wildcards=None):
    """The result files the analysis steps read, by name; absent where a study did not run."""
    out = {"data_summary": "results/data/summary.json"}
    if "sentiment" in TASKS_RUN:
        out["biasfinder"] = f"results/biasfinder/{BF_CORPUS}/table4.csv"
        out["sentiment"] = "results/sentiment/fairness/report.json"
        out["sentiment_gaps"] = "results/sentiment/fairness/gaps.csv"
        if from_world("imdb"):
            out["reviews_truth"] = "resources/world/imdb/ground_truth.json"
    if "toxicity" in TASKS_RUN:
        out["toxicity"] = "results/toxicity/fairness/report.json"
        out["toxicity_gaps"] = "results/toxicity/fairness/gaps.csv"
        out["toxicity_balanced"] = "results/toxicity/fairness/balanced.parquet"
        if any(METHOD_REGISTRY[m]["data"] in ("stratified", "perturbed_stratified")
               for m in TASK_METHODS["toxicity"]):
            out["stratified"] = TRAINING_DATA["toxicity"]["stratified"]
    if from_world("civil_comments"):
        out["comments_truth"] = "resources/world/civil_comments/ground_truth.json"
    if REPRESENTATION["models"]:
        out["representation"] = "results/representation/table4.csv"
        if from_world("crows_pairs", "stereoset", "seat") and all(
            MODELS[m]["source"] == "embedded" for m in REPRESENTATION["models"]
        ):
            out["stereotypes_truth"] = rules.world_stereotypes.output.truth
    return out


def toxicity_balanced_predictions(wildcards=None):
    if "toxicity" not in TASKS_RUN:
        return []
    root = "results" if wildcards is None else root_of(wildcards)
    return task_jobs(f"{root}/predictions/{{task}}/{{model}}/{{method}}/fairness-balanced.parquet",
                     tasks=["toxicity"])


def cross_study_inputs(wildcards):
    """BiasFinder's Table 4, both tasks' gaps and the toxicity models' balanced-set
    predictions of the job's replicate; the balanced set itself (shared)."""
    root = root_of(wildcards)
    given = analysis_inputs()
    out = {k: (in_root(v, root) if k != "toxicity_balanced" else v)
           for k, v in given.items()
           if k in ("biasfinder", "sentiment_gaps", "toxicity_balanced", "toxicity_gaps")}
    out["predictions"] = toxicity_balanced_predictions(wildcards)
    return out


def cross_study_outputs(root):
    """The cross-study's files under a replicate's folder; the first seed's in the report."""
    folder = f"{root}/analysis/cross_study"
    out = {"btc": f"{folder}/toxicity_btc.csv", "points": f"{folder}/points.csv",
           "correlations": f"{folder}/correlations.csv", "md": f"{folder}/correlations.md",
           "summary": f"{folder}/summary.json"}
    if root == "results":
        out["btc"] = report(out["btc"], caption="../report/cross_study_btc.rst",
                            category="4. Cross-study")
        out["correlations"] = report(out["correlations"], caption="../report/cross_study.rst",
                                     category="4. Cross-study")
    return out


def seeds_arg():
    """``--seeds ...`` where several seeds ran (the inputs are then one file per seed)."""
    return shlex.join(["--seeds", *map(str, SEEDS)]) if len(SEEDS) > 1 else ""


def controls_inputs(wildcards=None):
    """What the controls read: the analysis inputs and the toxicity models' balanced-set
    predictions (the alike-groups control)."""
    out = dict(analysis_inputs())
    predictions = toxicity_balanced_predictions()
    if predictions:
        out["toxicity_predictions"] = predictions
    if "biasfinder" in out and "gender" in BF_CHARACTERISTICS and "baseline" in BF_METHODS:
        # the gender-direction control: the baseline models' scores of the gender mutants
        out["biasfinder_mutants"] = f"results/biasfinder/{BF_CORPUS}/mutants/gender.parquet"
        out["biasfinder_predictions"] = [
            f"results/biasfinder/{BF_CORPUS}/predictions/{model}/baseline/gender.parquet"
            for model in config["models"]["tasks"].get("sentiment", [])]
    if "biasfinder" in out and "occupation" in BF_CHARACTERISTICS and "baseline" in BF_METHODS:
        # the held-occupations control: the baseline models' scores of the occupation mutants
        out["occupation_mutants"] = f"results/biasfinder/{BF_CORPUS}/mutants/occupation.parquet"
        out["occupation_predictions"] = [
            f"results/biasfinder/{BF_CORPUS}/predictions/{model}/baseline/occupation.parquet"
            for model in config["models"]["tasks"].get("sentiment", [])]
        if any(MODELS[m]["source"] == "embedded"
               for m in config["models"]["tasks"].get("sentiment", [])):
            out["pretraining_truth"] = rules.world_stereotypes.output.truth
    return out


def controls_args(wildcards, input):
    return cli_options(input, ["data_summary", "comments_truth", "reviews_truth",
                               "stereotypes_truth", "biasfinder", "toxicity", "stratified",
                               "representation", "sentiment", "toxicity_balanced",
                               "toxicity_predictions", "biasfinder_mutants",
                               "biasfinder_predictions", "occupation_mutants",
                               "occupation_predictions", "pretraining_truth"])


def cross_study_args(wildcards, input):
    args = cli_options(input, ["biasfinder", "sentiment_gaps", "toxicity_balanced",
                               "toxicity_gaps"])
    if len(input.get("predictions", [])):
        args += " --toxicity-predictions " + " ".join(shlex.quote(p) for p in input.predictions)
    return args


def data_files():
    """Every raw and prepared data file of the run, for the run record's hashes."""
    raw = [f for d in ("imdb", "civil_comments", "sst") for f in raw_files(d).values()]
    return sorted(set(raw) | {
        *TASK_DATA["sentiment"].values(), *TASK_DATA["toxicity"].values(),
        *FAIRNESS_SOURCE.values(),
    })


def run_environment():
    """Package versions and device in one line (the run record reruns when they change)."""
    from biasrepro.analysis.record import environment

    return environment()


PAPER_TABLE_CATEGORY = {"biasfinder": "1. BiasFinder", "toxicity": "2. Toxicity fairness"}


def paper_table_inputs(wildcards=None):
    """The results each paper table reads: study tables beside each fairness report."""
    given = analysis_inputs()
    out = {"published": sorted(str(p) for p in Path("published").glob("*.csv"))}
    if "representation" in given:  # the pretrained models': one for every seed
        out["representation"] = given["representation"]
    if "biasfinder" in given:
        out["biasfinder"] = per_seed(given["biasfinder"])
    for task in TASKS_RUN:
        out[task] = per_seed(f"results/{task}/fairness/report.json")
    out["classification"] = per_seed("results/metrics/classification.json")
    return out


def seed_table_inputs(wildcards=None):
    """Each seed's fairness reports, classification metrics and BiasFinder Table 4."""
    given = analysis_inputs()
    out = {task: per_seed(f"results/{task}/fairness/report.json") for task in TASKS_RUN}
    out["classification"] = per_seed("results/metrics/classification.json")
    if "biasfinder" in given:
        out["biasfinder"] = per_seed(given["biasfinder"])
    out["cross_study"] = per_seed(f"{ANALYSIS}/cross_study/correlations.csv")
    return out


def seed_table_outputs():
    """The gathered tables (in the report under their study), claims.csv and seeds.md."""
    example = brseeds.Replicate(0, **{k: "x" for k in seed_table_inputs()})
    out = {}
    for name in brseeds.output_names(example):
        stem, ext = name.rsplit(".", 1)
        path = f"{ANALYSIS}/seeds/{name}"
        out[f"{stem}_{ext}"] = report(path, caption="../report/seeds.rst",
                                      category="6. Seed variance") if ext == "csv" else path
    return out


def paper_table_settings():
    keys = ["models.registry", "models.tasks", "methods.tasks", "perturbation.select",
            "perturbation.restratify.select"]
    keys += ["representation.models"] if REPRESENTATION["models"] else []
    keys += ["biasfinder.methods"] if "sentiment" in TASKS_RUN else []
    if "sentiment" in TASKS_RUN:  # how the model BiasFinder's Table 4 compares was trained
        task = config["models"]["training"]["sentiment"]
        own = {m: MODELS[m].get("training", {}).get("sentiment")
               for m in config["models"]["tasks"]["sentiment"]}
        named = sorted({n for m in own for n in brtraining.used_names(task, own[m])})
        keys += ["models.training.sentiment", *(f"models.training.named.{n}" for n in named)]
    return settings(*keys)


def paper_table_markdown():
    return [f"{ANALYSIS}/paper_tables/{table}.md" for table in brpaper.TABLE_IDS]


def paper_table_outputs():
    """Each table's CSV in the report under its study's category; Markdown beside it."""
    out = {}
    for table in brpaper.TABLE_IDS:
        key = table.replace("-", "_")
        out[key] = report(
            f"{ANALYSIS}/paper_tables/{table}.csv",
            caption="../report/paper_table.rst",
            category=PAPER_TABLE_CATEGORY[table.split("-")[0]],
            subcategory="Paper tables",
            labels={"table": table},
        )
        out[f"{key}_md"] = f"{ANALYSIS}/paper_tables/{table}.md"
    out["index"] = f"{ANALYSIS}/paper_tables/index.md"
    return out


STUDY_CATEGORY = {
    "biasfinder": "1. BiasFinder",
    "toxicity": "2. Toxicity fairness",
    "sentiment": "3. Sentiment appendix",
}


def figure_caption(name):
    """A task's figures share captions (``toxicity_gaps_original`` -> ``gaps_original``)."""
    task, _, rest = name.partition("_")
    return f"../report/figures/{rest if task in TASKS_RUN else name}.rst"


def figure_outputs():
    """Every figure as PNG (in the report, under its study) and SVG."""
    names = brfigures.figure_names(TASKS_RUN, "sentiment" in TASKS_RUN)
    out = {}
    for name in names:
        out[name] = report(
            f"{ANALYSIS}/figures/{name}.png",
            caption=figure_caption(name),
            category=STUDY_CATEGORY[name.split("_")[0]],
            subcategory="Figures",
        )
        out[f"{name}_svg"] = f"{ANALYSIS}/figures/{name}.svg"
    return out


def figure_inputs(wildcards=None):
    """Each task's fairness report with the tables beside it, and BiasFinder's Table 4."""
    out = {}
    for task in TASKS_RUN:
        for name in ("report.json", "gaps.csv", "training_groups.csv", "correlations.csv"):
            out[f"{task}_{name.split('.')[0]}"] = f"results/{task}/fairness/{name}"
    if "sentiment" in TASKS_RUN:
        out["biasfinder"] = f"results/biasfinder/{BF_CORPUS}/table4.csv"
    return out


def figure_args(wildcards, input):
    args = [f"--{task} {shlex.quote(input[f'{task}_report'])}" for task in TASKS_RUN]
    if "biasfinder" in input.keys():
        args.append(f"--biasfinder {shlex.quote(input.biasfinder)}")
    return " ".join(args)
