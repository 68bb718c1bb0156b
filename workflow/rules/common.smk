"""The glue all rule files share, in dependency order. First the package and the validated
configuration, then how a job runs (its command, log, benchmark file, resources, settings),
the study matrix the configuration selects, and the seeds' replicate folders. The helpers
only one rule file uses are in helpers/ under its name (Snakemake's linter keeps functions
out of rule files); paths and the study's semantics live in the package (`biasrepro.layout`)."""

import os
import re
import shlex
import sys
from functools import partial
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # the Snakefile is at the root
from biasrepro import config as brconfig  # noqa: E402  (light: stdlib, yaml, jsonschema)
from biasrepro import gpu as brgpu  # noqa: E402
from biasrepro import layout  # noqa: E402  (stdlib only: every path and the study matrix)
from biasrepro.data import download as brdownload  # noqa: E402
from biasrepro.errors import ConfigError  # noqa: E402
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
from biasrepro.models import training as brtraining  # noqa: E402  (stdlib only)


# -- the configuration ------------------------------------------------------------------

try:
    brconfig.validate(config, workflow.source_path("../schemas/config.schema.yaml"))
except ConfigError as e:
    raise WorkflowError(str(e)) from None

# `downloads.allow_unpinned` reaches the download jobs through the environment, not a rule
# parameter, so switching it off after a first download does not rerun finished downloads
brdownload.opt_in_from_config(config)


def settings(*keys):
    """The config values a rule reads, as JSON for its command line (and DVC params)."""
    return brconfig.settings_json(config, *keys)


# -- how a job runs -----------------------------------------------------------------------

# Jobs run this checkout's CLI as `python workflow/scripts/biasrepro.py`. Under
# --sdm conda/apptainer, `python` is the job environment's; otherwise put the interpreter
# that runs Snakemake (the project environment) first on PATH, as activating it would.
if not workflow.deployment_settings.deployment_method:
    os.environ.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.getenv("PATH", "")]))

CONDA_ENV = "../../envs/biasrepro.yaml"
BIASREPRO = "python workflow/scripts/biasrepro.py"


#: how a GPU-family rule's command begins: the job's GPUs (its `gpu` resource)
GPUS_OPTION = "--gpus {resources.gpu}"


def biasrepro(command):
    """A rule's shell command: the biasrepro command line with ``command``, its output and
    errors into the job's log. Where jobs share a device (config `compute.jobs_per_gpu` above
    1), a command that begins with ``GPUS_OPTION`` also says so, with the device memory the
    job waits for (its family's `gpu_free_mb`, the `gpu_free_mb` resource)."""
    if JOBS_PER_GPU > 1 and command.startswith(f"{GPUS_OPTION} "):
        sharing = f"--jobs-per-gpu {JOBS_PER_GPU} --gpu-free-mb {{resources.gpu_free_mb}}"
        command = f"{GPUS_OPTION} {sharing} {command[len(GPUS_OPTION) + 1:]}"
    return f"{BIASREPRO} {command} > {{log:q}} 2>&1"


def job_log(name, root="results"):
    """A job's log, ``logs/NAME.log``; a further seed's under ``logs/seeds/{seed}/``."""
    return f"{layout.LOGS}/{seed_folder(root)}{name}.log"


def job_benchmark(name, root="results"):
    """A job's Snakemake benchmark file (wall and CPU time, peak memory), beside its log."""
    return f"{layout.JOB_BENCHMARKS}/{seed_folder(root)}{name}.tsv"


COMPUTE = config["compute"]
#: GPUs a training or scoring job asks for (config `compute.gpus`): `auto` is 1 where a GPU
#: is visible here (nvidia-smi, or CUDA_VISIBLE_DEVICES where set), else 0 (CPU-only jobs
#: then run side by side like any other job)
GPUS = (1 if brgpu.visible_devices() else 0) if COMPUTE["gpus"] == "auto" else int(COMPUTE["gpus"])
#: GPU jobs sharing one device (config `compute.jobs_per_gpu`; biasrepro.gpu): locally the
#: `gpu` resource then counts shares, so `--resources gpu=GPUS×jobs_per_gpu` runs them
JOBS_PER_GPU = int(COMPUTE["jobs_per_gpu"])


def compute(family, gpu=True):
    """A job's resources: its family's memory and runtime (config `compute.families`), one
    `gpu` where the family uses one, and the SLURM partition, account and GPU model
    (`compute.slurm`) that profiles/slurm turns into sbatch options. Locally only
    `gpu` is limited (profiles/default), so one GPU job runs at a time per GPU."""
    fam = COMPUTE["families"][family]
    gpus = GPUS if fam["gpu"] and gpu else 0
    slurm = COMPUTE["slurm"]
    out = {"mem_mb": fam["mem_mb"], "runtime": fam["runtime"], "gpu": gpus,
           "gpu_free_mb": fam.get("gpu_free_mb", 0) if gpus else 0}
    partition = (slurm["gpu_partition"] if gpus else None) or slurm["partition"]
    optional = {"slurm_partition": partition, "slurm_account": slurm["account"],
                "gpu_model": slurm["gpu_model"] if gpus else None}
    out.update({k: v for k, v in optional.items() if v})
    return out


def alternation(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


def cli_options(input, names):
    """``--name PATH...`` for each of ``names`` among the job's named inputs."""
    def paths(value):
        return [value] if isinstance(value, str) else list(value)

    return " ".join(
        f"--{name.replace('_', '-')} {shlex.join(str(p) for p in paths(input[name]))}"
        for name in names
        if name in input.keys()
    )


# -- the study matrix ---------------------------------------------------------------------

MODELS = config["models"]["registry"]
#: debiasing methods: name -> {data: training data}; which ones each task trains
METHOD_REGISTRY = config["methods"]["registry"]
TASK_METHODS = config["methods"]["tasks"]
METHODS = sorted({m for names in TASK_METHODS.values() for m in names})
#: the tasks with a model to fine-tune
TASKS_RUN = [task for task, models in config["models"]["tasks"].items() if models]
REPRESENTATION = config["representation"]
#: IMDB-gendered's test split and its counterfactually perturbed version (appendix), scored
#: by every sentiment model where a sentiment method trains on IMDB-gendered data
IMDB_GENDERED_SETS = (
    dict(layout.IMDB_GENDERED_SETS)
    if any(METHOD_REGISTRY[m]["data"] in VALIDATION_DATA["sentiment"]
           for m in TASK_METHODS.get("sentiment", []))
    else {}
)


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


def base_model_input(model):
    """The directory of a pretrained embedded model (nothing to build for Hub/local ones)."""
    if MODELS[model]["source"] == "embedded":
        return {"base": layout.embedded_model_dir(model)}
    return {}


# -- seeds: one replicate folder per fine-tuning seed -------------------------------------

#: fine-tuning seeds (config `seeds`; null: one run with `seed` and any training setting's
#: own seed): the training-to-metrics matrix (fine-tuning, scoring, BTCs, fairness reports)
#: runs once per seed. The first seed's results are the run's, at the usual paths; each
#: further seed's sit under SEED_ROOT in the same layout, and rule seed_tables gathers them.
SEEDS = brconfig.fine_tuning_seeds(config)
SEED_ROOT = f"{layout.RESULTS}/seeds/{{seed}}"
#: where each replicate's results live: the first seed's, then (a wildcard) the others'.
#: Each rule that reads a fine-tuned model exists once per entry (rule_suffix names it).
RUN_ROOTS = [layout.RESULTS] + ([SEED_ROOT] if len(SEEDS) > 1 else [])


def seed_roots():
    """Every seed with the folder its results live in, the first seed's being ``results``."""
    return {seed: layout.RESULTS if i == 0 else SEED_ROOT.format(seed=seed)
            for i, seed in enumerate(SEEDS)}


def root_of(wildcards):
    """The results folder of a job's replicate (``results`` unless it has a seed wildcard)."""
    return SEED_ROOT.format(seed=wildcards.seed) if "seed" in wildcards.keys() else layout.RESULTS


def rule_suffix(root):
    """A per-seed rule's name suffix: none for the first seed's rule."""
    return "" if root == layout.RESULTS else brconfig.SEED_RULE_SUFFIX


def seed_folder(root):
    """The seed's part of a log or checkpoint path: none for the first seed's jobs."""
    return "" if root == layout.RESULTS else "seeds/{seed}/"


def braced(root):
    """``root`` for a pattern that is str.format()ted later: its ``{seed}`` kept a wildcard."""
    return root.replace("{seed}", "{{seed}}")


def under(root, path):
    """``path`` under a replicate's results folder, for a pattern str.format()ted later."""
    return f"{braced(root)}/{path}"


def in_root(path, root):
    """A first-seed result file (under ``results/``) in replicate folder ``root``."""
    assert path.startswith(f"{layout.RESULTS}/"), path
    return root + path[len(layout.RESULTS):]


def per_seed(path):
    """A first-seed result file and each other seed's, in SEEDS order."""
    return [in_root(path, root) for root in seed_roots().values()]
