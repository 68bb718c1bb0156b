"""Shared helpers: config validation, the command that runs biasrepro, raw-input lookup."""

import os
import re
import shlex
import sys
from functools import partial
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir).parent / "src"))
from biasrepro import config as brconfig  # noqa: E402  (light: stdlib, yaml, jsonschema)
from biasrepro import gpu as brgpu  # noqa: E402
from biasrepro import layout  # noqa: E402  (stdlib only: every path and the study matrix)
from biasrepro.layout import (  # noqa: E402
    FAIRNESS_IDENTITY,
    FAIRNESS_SETS,
    FAIRNESS_SOURCE,
    PERTURB_SOURCE,
    TASK_DATA,
    TRAINING_DATA,
    VALIDATION_DATA,
    WORLD_BENCHMARKS,
    WORLD_FILES,
    WORLD_FORMAT,
    subspace_file,
)
from biasrepro.data import download as brdownload  # noqa: E402
from biasrepro.models import training as brtraining  # noqa: E402  (stdlib only)
from biasrepro.errors import ConfigError  # noqa: E402

try:
    brconfig.validate(config, workflow.source_path("../schemas/config.schema.yaml"))
except ConfigError as e:
    raise WorkflowError(str(e)) from None

# Jobs run this checkout's CLI as `python workflow/scripts/biasrepro.py`. Under
# --sdm conda/apptainer, `python` is the job environment's; otherwise put the interpreter
# that runs Snakemake (the project environment) first on PATH, as activating it would.
if not workflow.deployment_settings.deployment_method:
    os.environ.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.getenv("PATH", "")]))

CONDA_ENV = "../../envs/biasrepro.yaml"

# `downloads.allow_unpinned` reaches the download jobs through the environment, not a rule
# parameter, so switching it off after a first download does not rerun finished downloads
brdownload.opt_in_from_config(config)


COMPUTE = config["compute"]
#: GPUs a training or scoring job asks for (config `compute.gpus`): `auto` is 1 where a GPU
#: is visible here (nvidia-smi, or CUDA_VISIBLE_DEVICES where set), else 0 (CPU-only jobs
#: then run side by side like any other job)
if COMPUTE["gpus"] == "auto":
    GPUS = 1 if brgpu.visible_devices() else 0
else:
    GPUS = int(COMPUTE["gpus"])


def compute(family, gpu=True):
    """A job's resources: its family's memory and runtime (config `compute.families`), one
    `gpu` where the family uses one, and the SLURM partition, account and GPU model
    (`compute.slurm`) that workflow/profiles/slurm turns into sbatch options. Locally only
    `gpu` is limited (workflow/profiles/default), so one GPU job runs at a time per GPU."""
    fam = COMPUTE["families"][family]
    gpus = GPUS if fam["gpu"] and gpu else 0
    slurm = COMPUTE["slurm"]
    out = {"mem_mb": fam["mem_mb"], "runtime": fam["runtime"], "gpu": gpus}
    partition = (slurm["gpu_partition"] if gpus else None) or slurm["partition"]
    optional = {"slurm_partition": partition, "slurm_account": slurm["account"],
                "gpu_model": slurm["gpu_model"] if gpus else None}
    out.update({k: v for k, v in optional.items() if v})
    return out


def settings(*keys):
    """The config values a rule reads, as JSON for its command line (and DVC params)."""
    return brconfig.settings_json(config, *keys)


def raw_files(dataset):
    """The raw input files of a dataset: {split or 'file': path}."""
    ds = config["datasets"][dataset]
    if ds["source"] == "world":
        return WORLD_FILES[dataset]
    if ds["source"] == "download":
        return {
            f.get("split", "file"): f"{layout.DOWNLOADS}/{dataset}/{f['name']}"
            for f in ds["files"]
        }
    path = ds["path"]
    return dict(path) if isinstance(path, dict) else {"file": path}


def raw_format(dataset):
    ds = config["datasets"][dataset]
    return WORLD_FORMAT[dataset] if ds["source"] == "world" else ds["format"]


def cli_inputs(wildcards, input):
    """``--input`` values: PATH, or train=PATH test=PATH for split formats."""
    if "file" in input.keys():
        return shlex.quote(input.file)
    return " ".join(shlex.quote(f"{split}={input[split]}") for split in ("train", "test"))


def member_arg(dataset):
    """``--member NAME`` for zip archives, else nothing."""
    member = config["datasets"][dataset].get("member")
    return shlex.join(["--member", member]) if member else ""


# -- models -----------------------------------------------------------------------------

MODELS = config["models"]["registry"]
EMBEDDED_MODELS = sorted(n for n, m in MODELS.items() if m["source"] == "embedded")
#: debiasing methods: name -> {data: training data}; which ones each task trains
METHOD_REGISTRY = config["methods"]["registry"]
TASK_METHODS = config["methods"]["tasks"]
METHODS = sorted({m for names in TASK_METHODS.values() for m in names})
#: IMDB-gendered's test split and its counterfactually perturbed version (appendix), scored
#: by every sentiment model where a sentiment method trains on IMDB-gendered data
IMDB_GENDERED_SETS = dict(layout.IMDB_GENDERED_SETS) if any(METHOD_REGISTRY[m]["data"] in VALIDATION_DATA["sentiment"]
         for m in TASK_METHODS.get("sentiment", [])) else {}


#: fine-tuning seeds (config `seeds`; null: one run with `seed` and any training setting's
#: own seed): the training-to-metrics matrix (fine-tuning, scoring, BTCs, fairness reports)
#: runs once per seed. The first seed's results are the run's, at the usual paths; each
#: further seed's sit under SEED_ROOT in the same layout, and rule seed_tables gathers them.
SEEDS = brconfig.fine_tuning_seeds(config)
SEED_ROOT = "results/seeds/{seed}"
#: where each replicate's results live: the first seed's, then (a wildcard) the others'
RUN_ROOTS = ["results"] + ([SEED_ROOT] if len(SEEDS) > 1 else [])


def seed_roots():
    """Every seed with the folder its results live in, the first seed's being ``results``."""
    return {seed: "results" if i == 0 else SEED_ROOT.format(seed=seed)
            for i, seed in enumerate(SEEDS)}


def root_of(wildcards):
    """The results folder of a job's replicate (``results`` unless it has a seed wildcard)."""
    return SEED_ROOT.format(seed=wildcards.seed) if "seed" in wildcards.keys() else "results"


def rule_suffix(root):
    """A per-seed rule's name suffix: none for the first seed's rule."""
    return "" if root == "results" else brconfig.SEED_RULE_SUFFIX


def seed_arg(wildcards, task):
    """``--seed N`` for a fine-tuning replicate whose seed is not the one the model's training
    setting resolves to anyway (`seed`, or the setting's own), else nothing."""
    seed = int(wildcards.seed) if "seed" in wildcards.keys() else SEEDS[0]
    training = config["models"]["training"]
    own = MODELS[wildcards.model].get("training", {}).get(task)
    named = {n: training["named"][n] for n in brtraining.used_names(training[task], own)}
    resolved = brtraining.resolve(training[task], own, named, seed=config["seed"], task=task,
                                  model=wildcards.model)["seed"]
    return "" if seed == resolved else f"--seed {seed}"


def braced(root):
    """``root`` for a pattern that is str.format()ted later: its ``{seed}`` kept a wildcard."""
    return root.replace("{seed}", "{{seed}}")


def under(root, path):
    """``path`` under a replicate's results folder, for a pattern str.format()ted later."""
    return f"{braced(root)}/{path}"


def checkpoint_root(wildcards):
    return (layout.CHECKPOINTS if "seed" not in wildcards.keys()
            else f"{layout.CHECKPOINTS}/seeds/{wildcards.seed}")


def alternation(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


def task_jobs(pattern, tasks=None):
    """``pattern`` expanded over every configured task, model and method of the task."""
    return [
        pattern.format(task=task, model=model, method=method)
        for task, models in config["models"]["tasks"].items()
        if tasks is None or task in tasks
        for model in models
        for method in TASK_METHODS[task]
    ]


def training_data_of(task, method):
    """The training data of the method's kind (``methods.registry.METHOD.data``)."""
    return TRAINING_DATA[task][METHOD_REGISTRY[method]["data"]]


def validation_data_of(task, method):
    """The validation split the method's fine-tuning selects on, or None (held out)."""
    own = VALIDATION_DATA.get(task, {}).get(METHOD_REGISTRY[method]["data"])
    return own or TASK_DATA[task].get("validation")


def finetune_methods(task):
    """The task's fine-tuned methods and those its downstream-SentDebias methods start from."""
    return layout.finetune_methods(METHOD_REGISTRY, TASK_METHODS[task])


def upstream_subspace(model, method):
    """The pretrained model's subspace an upstream-SentDebias method trains with, or None."""
    sd = METHOD_REGISTRY[method].get("sentdebias")
    return subspace_file(model, sd["attribute"]) if sd and sd["stage"] == "upstream" else None


def finetune_inputs(wildcards, task):
    """Each method's training data, the task's validation split, the embedded base model and
    the subspaces the upstream-SentDebias methods train with."""
    methods = finetune_methods(task)
    inputs = {"train": sorted({training_data_of(task, m) for m in methods})}
    validation = sorted({v for m in methods if (v := validation_data_of(task, m))})
    if validation:
        inputs["validation"] = validation
    inputs.update(base_model_input(wildcards.model))
    subspaces = sorted({s for m in methods if (s := upstream_subspace(wildcards.model, m))})
    if subspaces:
        inputs["subspaces"] = subspaces
    return inputs


def finetune_args(wildcards, task):
    """`biasrepro finetune`'s per-run options: one value per method, in finetune_methods'
    order (the rule's outputs'), and the shared validation split."""
    methods = finetune_methods(task)
    args = ["--train", *(training_data_of(task, m) for m in methods), "--checkpoint-dir",
            *(f"{checkpoint_root(wildcards)}/{task}/{wildcards.model}/{m}" for m in methods)]
    subspaces = [upstream_subspace(wildcards.model, m) or "none" for m in methods]
    if set(subspaces) != {"none"}:
        args += ["--sentdebias", *subspaces]
    validation = [validation_data_of(task, m) or "none" for m in methods]
    if set(validation) != {"none"}:
        args += ["--validation", *validation]
    return shlex.join(args)


def test_data(wildcards):
    return TASK_DATA[wildcards.task]["test"]


def finetune_settings(wildcards, task):
    """The seed, the model's registry entry, the task's settings and the named setting the
    model trains with, if any (biasrepro.models.training)."""
    own = MODELS[wildcards.model].get("training", {}).get(task)
    named = brtraining.used_names(config["models"]["training"][task], own)
    return settings("seed", f"models.registry.{wildcards.model}", f"models.training.{task}",
                    *(f"models.training.named.{name}" for name in named))


def pretrain_settings(wildcards):
    return settings("seed", "models.embedded", f"models.registry.{wildcards.model}")


def registry_settings(wildcards):
    return settings(f"models.registry.{wildcards.model}")


def download_spec(wildcards):
    """The pinned URL, sha256 and size of one download, as a config subset."""
    for f in config["datasets"][wildcards.dataset].get("files", []):
        if f["name"] == wildcards.name:
            return f
    raise WorkflowError(
        f"no file named {wildcards.name!r} under datasets.{wildcards.dataset}.files"
    )


def download_settings(wildcards):
    return settings(f"datasets.{wildcards.dataset}")


def download_command(wildcards):
    f = download_spec(wildcards)
    args = ["--url", f["url"]]
    for key in ("sha256", "git_blob", "size", "min_size"):
        if key in f:
            args += [f"--{key.replace('_', '-')}", str(f[key])]
    if "format" in config["datasets"][wildcards.dataset]:
        args += ["--format", config["datasets"][wildcards.dataset]["format"]]
    return shlex.join(args)


# -- BiasFinder ------------------------------------------------------------------------

BIASFINDER = config["biasfinder"]
BF_CORPUS = f"{BIASFINDER['dataset']}-{BIASFINDER['split']}"
BF_CHARACTERISTICS = BIASFINDER["characteristics"]
#: the sentiment methods whose models BiasFinder tests
BF_METHODS = BIASFINDER.get("methods") or TASK_METHODS["sentiment"]
#: whose word lists fill the placeholders: `project` (the hand-written lists in
#: `biasfinder.wordlists`, names generated from gender-guesser) or `original` (BiasFinder's
#: own files, `datasets.biasfinder_lists`, converted by rule biasfinder_wordlists)
BF_LISTS = BIASFINDER.get("lists", "project")
BF_LISTS_DIR = "resources/wordlists/original" if BF_LISTS == "original" else BIASFINDER["wordlists"]
#: the pronoun, gender-noun and occupation lists the parse, template and mutant steps read
BF_WORDLISTS = [
    f"{BF_LISTS_DIR}/{name}.csv"
    for name in ("pronouns", "gender_nouns", "occupations")
]


def biasfinder_lexicons():
    """The person-noun and job-title lexicons the parse and template steps read: the word-list
    folder's own, else the project's (BiasFinder's original lists have none)."""
    from biasrepro.biasfinder import wordlists  # the file names and the fallback live there

    return [os.path.relpath(wordlists.own_or_project(Path(BF_LISTS_DIR), name))
            for name in (wordlists.PERSON_NOUNS, wordlists.JOB_TITLES)]


BF_LEXICONS = biasfinder_lexicons()


def biasfinder_original_files(wildcards):
    """BiasFinder's six word-list files: downloaded, or under `datasets.biasfinder_lists.path`
    (a folder holding them, flat or laid out as the repository's asset/)."""
    ds = config["datasets"]["biasfinder_lists"]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/biasfinder_lists/{f['name']}" for f in ds["files"]]
    if ds["source"] != "local" or not isinstance(ds["path"], str):
        raise WorkflowError("config key 'datasets.biasfinder_lists': source must be download, "
                            "or local with a folder as path")
    from biasrepro.biasfinder import original_lists  # stdlib only at import
    from biasrepro.errors import DataError

    try:
        return [str(p) for p in original_lists.locate(ds["path"]).values()]
    except DataError as e:
        raise WorkflowError(f"config key 'datasets.biasfinder_lists.path': {e}") from None


def wordlists_dir(wildcards, input):
    """The directory of the rule's hand-written word lists (its ``lists`` input)."""
    return os.path.dirname(input.lists[0])


def biasfinder_corpus(wildcards):
    dataset, split = BIASFINDER["dataset"], BIASFINDER["split"]
    return f"results/data/{dataset}/{split}.parquet"


def biasfinder_jobs(pattern):
    """``pattern`` over every sentiment model × method × characteristic."""
    return [
        pattern.format(corpus=BF_CORPUS, model=model, method=method, characteristic=char)
        for model in config["models"]["tasks"].get("sentiment", [])
        for method in BF_METHODS
        for char in BF_CHARACTERISTICS
    ]


def biasfinder_annotation_jobs(pattern):
    return [
        pattern.format(corpus=BF_CORPUS, model=model, method=method)
        for model in config["models"]["tasks"].get("sentiment", [])
        for method in BF_METHODS
    ]


# -- the toxicity study and the sentiment appendix --------------------------

PERTURBATION = config["perturbation"]


def perturb_inputs(wildcards):
    """The training set a perturbed set is made from, and the identity lexicon."""
    source = PERTURB_SOURCE[wildcards.task][wildcards.kind]
    return {"train": TRAINING_DATA[wildcards.task][source], "lexicon": PERTURBATION["lexicon"]}


def perturb_settings(wildcards):
    return settings("identities", "attributes", "preprocess.civil_comments.identity_threshold",
                    "perturbation.spacy_model", "perturbation.select",
                    f"fairness.attributes.{wildcards.task}")


def restratify_inputs(wildcards):
    """The original training split; the masked LM when it is an embedded model."""
    inputs = {"train": TRAINING_DATA["toxicity"]["original"],
              "lexicon": PERTURBATION["lexicon"]}
    model = PERTURBATION["restratify"].get("model")
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        if MODELS[model]["source"] == "embedded":
            inputs["model"] = layout.embedded_model_dir(model)
    return inputs


def restratify_settings(wildcards):
    model = PERTURBATION["restratify"].get("model")
    keys = ["seed", "identities", "attributes", "perturbation.restratify",
            "preprocess.civil_comments.identity_threshold"]
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        keys.append(f"models.registry.{model}")
    return settings(*keys)


def restratify_model_arg(wildcards, input):
    if "model" in input.keys():
        return f"--model-dir {shlex.quote(input.model)}"
    if PERTURBATION["restratify"]["augmenter"] == "contextual":
        return f"--model {shlex.quote(PERTURBATION['restratify']['model'])}"
    return ""


def fairness_set_settings(wildcards):
    return settings("attributes", "perturbation.spacy_model",
                    f"fairness.attributes.{wildcards.task}")


def fairness_report_inputs(wildcards):
    """Both fairness sets, every model x method's predictions on them (the job's replicate's),
    the training data."""
    task, root = wildcards.task, root_of(wildcards)
    inputs = {f"set_{name}": f"results/{task}/fairness/{name}.parquet" for name in FAIRNESS_SETS}
    inputs["predictions"] = [
        p
        for name in FAIRNESS_SETS
        for p in task_jobs(
            f"{root}/predictions/{{task}}/{{model}}/{{method}}/fairness-{name}.parquet", [task]
        )
    ]
    inputs["training"] = [training_data_of(task, m) for m in TASK_METHODS[task]]
    if task == "toxicity" and REPRESENTATION["models"]:  # Table 9's representation rows
        inputs["representation"] = "results/representation/table4.csv"
    return inputs


def representation_arg(wildcards, input):
    if "representation" not in input.keys():
        return ""
    return f"--representation {shlex.quote(input.representation)}"


def fairness_training_args(wildcards, input):
    """``--training METHOD=PATH`` for every method of the task."""
    task = wildcards.task
    return " ".join(
        shlex.quote(f"{m}={training_data_of(task, m)}") for m in TASK_METHODS[task]
    )


def fairness_report_settings(wildcards):
    return settings("seed", "attributes", "identities", "fairness",
                    "preprocess.civil_comments.identity_threshold", "methods.registry")


def fairness_report_jobs():
    """The study's tables for every task that trains a model."""
    return [
        f"results/{task}/fairness/report.json"
        for task, models in config["models"]["tasks"].items()
        if models
    ]


# -- representation bias and SentenceDebias ---------------------------------

REPRESENTATION = config["representation"]
REPRESENTATION_VARIANTS = layout.representation_variants(REPRESENTATION["attributes"])
DOWNSTREAM_METHODS = layout.downstream_methods(METHOD_REGISTRY, METHODS)
TRAINED_METHODS = layout.trained_methods(METHOD_REGISTRY, METHODS)
#: the upstream subspaces each model's `sentdebias_subspace` job computes
SUBSPACE_ATTRIBUTES = layout.subspace_attributes(METHOD_REGISTRY, METHODS,
                                                 REPRESENTATION["attributes"])


def _world_seat_tests():
    from biasrepro.data.world.benchmarks import seat_tests

    stereotypes = config["models"].get("embedded", {}).get("stereotypes", {})
    return sorted(seat_tests(stereotypes.get("associations", {}), config["attributes"]))


def representation_files(dataset):
    """The files of a representation-bias dataset (datasets.DATASET), by its source."""
    ds = config["datasets"][dataset]
    if ds["source"] == "download":
        return [f"{layout.DOWNLOADS}/{dataset}/{f['name']}" for f in ds["files"]]
    if ds["source"] == "local":
        path = ds["path"]
        if dataset == "seat":  # a directory of bias-bench's 17 tests
            from biasrepro.representation.seat import TESTS

            return [f"{path}/{t}.jsonl" for tests in TESTS.values() for t in tests]
        return [path]
    if dataset == "sentdebias_corpus":  # the world's pre-training text
        return [TASK_DATA["sentiment"]["train"], TASK_DATA["toxicity"]["train"]]
    world = {
        "crows_pairs": ["crows_pairs.csv"],
        "stereoset": ["stereoset.json"],
        "attribute_words": ["attribute_words.json"],
        "seat": [f"seat/{t}.jsonl" for t in _world_seat_tests()],
    }
    return [f"{WORLD_BENCHMARKS}/{name}" for name in world[dataset]]


def base_model_input(model):
    """The directory of a pretrained embedded model (nothing to build for Hub/local ones)."""
    if MODELS[model]["source"] == "embedded":
        return {"base": layout.embedded_model_dir(model)}
    return {}


def subspace_inputs(wildcards):
    return {
        **base_model_input(wildcards.model),
        "words": representation_files("attribute_words"),
        "corpus": representation_files("sentdebias_corpus"),
    }


def representation_score_inputs(wildcards):
    return {
        **base_model_input(wildcards.model),
        "crows": representation_files("crows_pairs"),
        "stereoset": representation_files("stereoset"),
        "seat": representation_files("seat"),
        "subspaces": [subspace_file(wildcards.model, a) for a in REPRESENTATION["attributes"]],
    }


def representation_score_files(name):
    """The file ``name`` of every variant of one model's scores (an output pattern)."""
    return [f"results/representation/scores/{{model}}/{variant}/{name}"
            for variant in REPRESENTATION_VARIANTS]


def variant_args(wildcards, input):
    """``--variant`` values: the pretrained model, then each attribute's subspace attached."""
    subspaces = [f"{layout.subspace_variant(a)}={path}"
                 for a, path in zip(REPRESENTATION["attributes"], input.subspaces, strict=True)]
    return shlex.join([layout.PRETRAINED, *subspaces])


def representation_jobs():
    return [
        f"results/representation/scores/{model}/{variant}/scores.json"
        for model in REPRESENTATION["models"]
        for variant in REPRESENTATION_VARIANTS
    ]


def sentdebias_of(method):
    return METHOD_REGISTRY[method].get("sentdebias")


def downstream_inputs(wildcards):
    """The fine-tuned `base` method's model, the attribute words and the corpus."""
    base = sentdebias_of(wildcards.method)["base"]
    return {
        "model": f"{root_of(wildcards)}/models/{wildcards.task}/{wildcards.model}/{base}",
        "words": representation_files("attribute_words"),
        "corpus": representation_files("sentdebias_corpus"),
    }


# -- analysis and report ----------------------------------------------------------

ANALYSIS = "results/analysis"
TASKS_RUN = [task for task, models in config["models"]["tasks"].items() if models]
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
            out["stereotypes_truth"] = "resources/world/stereotypes/ground_truth.json"
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


def cli_options(input, names):
    """``--name PATH...`` for each of ``names`` among the job's named inputs."""
    def paths(value):
        return [value] if isinstance(value, str) else list(value)

    return " ".join(
        f"--{name.replace('_', '-')} {shlex.join(str(p) for p in paths(input[name]))}"
        for name in names
        if name in input.keys()
    )


def in_root(path, root):
    """A first-seed result file (under ``results/``) in replicate folder ``root``."""
    assert path.startswith("results/"), path
    return root + path[len("results"):]


def per_seed(path):
    """A first-seed result file and each other seed's, in SEEDS order."""
    return [in_root(path, root) for root in seed_roots().values()]


def seeds_arg():
    """``--seeds ...`` where several seeds ran (the inputs are then one file per seed)."""
    return shlex.join(["--seeds", *map(str, SEEDS)]) if len(SEEDS) > 1 else ""


def controls_args(wildcards, input):
    return cli_options(input, ["data_summary", "comments_truth", "reviews_truth",
                               "stereotypes_truth", "biasfinder", "toxicity", "stratified",
                               "representation"])


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


from biasrepro.analysis import paper_tables as brpaper  # noqa: E402  (stdlib only)

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


from biasrepro.analysis import seeds as brseeds  # noqa: E402  (pandas not imported)


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


from biasrepro.analysis import figures as brfigures  # noqa: E402  (matplotlib not imported)

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


# -- the leakage check (rules/leakage.smk) -------------------------------------------

def leakage_plan(task):
    """Per method: the files its models fit on (training data, validation split) and the
    files they are scored on (SCORED_SETS, BiasFinder's corpus and mutants); a scored file
    that is also fitted on (the validation split, scored for its own metrics) is left out."""
    methods = []
    for method in TASK_METHODS[task]:
        fitted = {"train": training_data_of(task, method)}
        if validation := validation_data_of(task, method):
            fitted["validation"] = validation
        scored = dict(SCORED_SETS[task])
        if task == "sentiment" and method in BF_METHODS:
            scored["biasfinder-corpus"] = biasfinder_corpus(None)
            scored.update({
                f"biasfinder-mutants-{c}": f"results/biasfinder/{BF_CORPUS}/mutants/{c}.parquet"
                for c in BF_CHARACTERISTICS})
        scored = {n: p for n, p in scored.items() if p not in fitted.values()}
        methods.append({"method": method, "models": config["models"]["tasks"][task],
                        "fitted": fitted, "scored": scored})
    return {"task": task, "methods": methods}


def leakage_inputs(wildcards):
    plan = leakage_plan(wildcards.task)
    return sorted({p for m in plan["methods"] for sets in (m["fitted"], m["scored"])
                   for p in sets.values()})
