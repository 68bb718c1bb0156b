"""Shared helpers: config validation, the command that runs biasrepro, raw-input lookup."""

import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir).parent / "src"))
from biasrepro import config as brconfig  # noqa: E402  (light: stdlib, yaml, jsonschema)
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

WORLD_FILES = {
    "imdb": {
        "train": "resources/world/imdb/train.parquet",
        "test": "resources/world/imdb/test.parquet",
    },
    "civil_comments": {"file": "resources/world/civil_comments/all_data.csv"},
    "sst": {"file": "resources/world/sst/SST_fairness_dataset.csv"},
}
WORLD_FORMAT = {"imdb": "hf_parquet", "civil_comments": "csv", "sst": "csv"}


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
            f.get("split", "file"): f"resources/downloads/{dataset}/{f['name']}"
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
TASK_DATA = {
    "sentiment": {
        "train": "results/data/imdb/train.parquet",
        "test": "results/data/imdb/test.parquet",
    },
    "toxicity": {
        "train": "results/data/civil_comments/train.parquet",
        "validation": "results/data/civil_comments/validation.parquet",
        "test": "results/data/civil_comments/test.parquet",
    },
}
#: debiasing methods whose models this workflow trains (the toxicity study adds more)
METHODS = ["baseline"]


def alternation(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


def task_jobs(pattern):
    """``pattern`` expanded over every configured (task, model) pair and method."""
    return [
        pattern.format(task=task, model=model, method=method)
        for task, models in config["models"]["tasks"].items()
        for model in models
        for method in METHODS
    ]


def finetune_inputs(wildcards):
    """The task's training (and validation) data, and the embedded base model if any."""
    data = TASK_DATA[wildcards.task]
    inputs = {k: v for k, v in data.items() if k in ("train", "validation")}
    if MODELS[wildcards.model]["source"] == "embedded":
        inputs["base"] = f"resources/models/embedded/{wildcards.model}"
    return inputs


def test_data(wildcards):
    return TASK_DATA[wildcards.task]["test"]


def finetune_settings(wildcards):
    return settings(
        "seed", f"models.registry.{wildcards.model}", f"models.training.{wildcards.task}"
    )


def validation_arg(wildcards, input):
    return f"--validation {shlex.quote(input.validation)}" if "validation" in input.keys() else ""


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
    args = ["--url", f["url"], "--sha256", f["sha256"]]
    if "size" in f:
        args += ["--size", str(f["size"])]
    return shlex.join(args)


# -- BiasFinder ------------------------------------------------------------------------

BIASFINDER = config["biasfinder"]
BF_CORPUS = f"{BIASFINDER['dataset']}-{BIASFINDER['split']}"
BF_CHARACTERISTICS = BIASFINDER["characteristics"]
#: the hand-written word lists the parse, template and mutant steps read
BF_WORDLISTS = [
    f"{BIASFINDER['wordlists']}/{name}.csv"
    for name in ("pronouns", "gender_nouns", "occupations")
]


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
        for method in METHODS
        for char in BF_CHARACTERISTICS
    ]


def biasfinder_annotation_jobs(pattern):
    return [
        pattern.format(corpus=BF_CORPUS, model=model, method=method)
        for model in config["models"]["tasks"].get("sentiment", [])
        for method in METHODS
    ]
