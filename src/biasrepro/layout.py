"""Where every artifact lives, and which runs the study is made of: one home for both.

The workflow (``workflow/rules/common.smk``) builds its rules' paths from here and the package
parses paths back with the same functions, so a folder or file name is written once.
Standard library only: Snakemake imports this module while it parses the workflow.

The study matrix (toxicity paper §6.6, BiasFinder §5) is derived from the configuration's
method registry here too: which methods fine-tune, which remove a SentenceDebias subspace
from a fine-tuned model afterwards (downstream), and which subspaces each pretrained model
needs (Table 4's attributes and the upstream methods').
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

#: the workflow's one Snakefile, at the checkout's root (rules in workflow/rules/); Snakemake
#: finds it and profiles/default from there
SNAKEFILE = "Snakefile"
RESULTS = "results"
#: the embedded default's generated inputs (docs/architecture.md, "The embedded default")
WORLD = "resources/world"
WORLD_BENCHMARKS = f"{WORLD}/benchmarks"
#: downloaded raw files: resources/downloads/DATASET/NAME
DOWNLOADS = "resources/downloads"
#: pretrained embedded models: resources/models/embedded/MODEL
EMBEDDED_MODELS = "resources/models/embedded"
CHECKPOINTS = "resources/checkpoints"
#: the learned pronoun resolver the workflow trains (``biasfinder.coref.resolver: trained``)
#: and the coreference backends' GAP scores, one folder per backend
TRAINED_RESOLVER = "trained"
COREF_RESOLVER = "resources/coref/resolver"
#: a resolver folder's model and card (:mod:`biasrepro.nlp.resolver`)
RESOLVER_FILES = ("resolver.pkl", "card.json")
COREF_GAP = f"{RESULTS}/biasfinder/coref/gap"
#: every job's log (LOGS/NAME.log) and Snakemake benchmark file (JOB_BENCHMARKS/NAME.tsv:
#: wall time, CPU time, peak memory); a further seed's jobs' under seeds/SEED/ in each
LOGS = "logs"
JOB_BENCHMARKS = f"{LOGS}/benchmarks"

#: the world's raw files of each dataset, in the dataset's real format (WORLD_FORMAT)
WORLD_FILES = {
    "imdb": {"train": f"{WORLD}/imdb/train.parquet", "test": f"{WORLD}/imdb/test.parquet"},
    "civil_comments": {"file": f"{WORLD}/civil_comments/all_data.csv"},
    "sst": {"file": f"{WORLD}/sst/SST_fairness_dataset.csv"},
}
WORLD_FORMAT = {"imdb": "hf_parquet", "civil_comments": "csv", "sst": "csv"}

#: each task's prepared splits
TASK_DATA = {
    "sentiment": {
        "train": f"{RESULTS}/data/imdb/train.parquet",
        "test": f"{RESULTS}/data/imdb/test.parquet",
    },
    "toxicity": {
        "train": f"{RESULTS}/data/civil_comments/train.parquet",
        "validation": f"{RESULTS}/data/civil_comments/validation.parquet",
        "test": f"{RESULTS}/data/civil_comments/test.parquet",
    },
}
#: the training data of each kind a method may fine-tune on (``methods.registry.*.data``)
TRAINING_DATA = {
    "toxicity": {
        "original": TASK_DATA["toxicity"]["train"],
        "perturbed": f"{RESULTS}/toxicity/training/perturbed.parquet",
        "stratified": f"{RESULTS}/toxicity/training/stratified.parquet",
        "perturbed_stratified": f"{RESULTS}/toxicity/training/perturbed_stratified.parquet",
    },
    "sentiment": {
        "original": TASK_DATA["sentiment"]["train"],
        "gendered": f"{RESULTS}/sentiment/imdb_gendered/train.parquet",
        "perturbed": f"{RESULTS}/sentiment/training/perturbed.parquet",
    },
}
#: the kind each perturbed training set is made from (§6.6 also perturbs the re-stratified set)
PERTURB_SOURCE = {
    "toxicity": {"perturbed": "original", "perturbed_stratified": "stratified"},
    "sentiment": {"perturbed": "gendered"},
}
#: the validation split a kind of training data selects checkpoints on, where it has its own
#: (appendix: IMDB-gendered's, also for its perturbed version); otherwise the task's
#: validation split, else a held-out `eval_fraction` of the training data
VALIDATION_DATA = {
    "sentiment": {
        "gendered": f"{RESULTS}/sentiment/imdb_gendered/validation.parquet",
        "perturbed": f"{RESULTS}/sentiment/imdb_gendered/validation.parquet",
    },
}
#: IMDB-gendered's test split and its counterfactually perturbed version (appendix)
IMDB_GENDERED_SETS = {
    "imdb-gendered-test": f"{RESULTS}/sentiment/imdb_gendered/test.parquet",
    "imdb-gendered-perturbed-test": f"{RESULTS}/sentiment/imdb_gendered/test_perturbed.parquet",
}
#: the set each task's fairness is measured on, before balancing (§5.1; appendix: SST)
FAIRNESS_SOURCE = {
    "toxicity": f"{RESULTS}/data/civil_comments/fairness_original.parquet",
    "sentiment": f"{RESULTS}/data/sst/fairness.parquet",
}
#: the column naming each fairness set's groups
FAIRNESS_IDENTITY = {"toxicity": "identity", "sentiment": "gender"}
#: the fairness sets: the source set and its counterfactually balanced version (§5.1)
FAIRNESS_SETS = ("original", "balanced")
#: the toxicity study's tables, written by ``fairness report`` (results/TASK/fairness/)
FAIRNESS_REPORT_FILES = ("report.json", "gaps.csv", "gaps.md", "group_metrics.csv",
                         "borkan.csv", "sensescore.csv", "dataset_bias.csv",
                         "training_groups.csv", "correlations.csv", "correlations.md",
                         "models.csv")
#: the scored-set name of a model's held-out test split (its predictions: ``test.parquet``)
TEST_SET = "test"
#: one model variant's representation-bias scores (results/representation/scores/MODEL/VARIANT)
REPRESENTATION_SCORE_FILES = ("scores.json", "crows.csv", "stereoset.csv", "seat.csv")
#: Table 4's variant of a pretrained model without a subspace removed
PRETRAINED = "pretrained"

_FAIRNESS_PREFIX = "fairness-"
_SUBSPACE_PREFIX = "sentdebias-"


def embedded_model_dir(model: str) -> str:
    """The folder of a pretrained embedded model."""
    return f"{EMBEDDED_MODELS}/{model}"


def leakage_gate(task: str, scored: str) -> str:
    """One scored set's leakage verdict: scoring that set waits for it, and for nothing
    about the other sets (``results/TASK/leakage.json`` reports them all)."""
    return f"{RESULTS}/{task}/leakage/{scored}.json"


def finetuned_model_dir(task: str, model: str, method: str, root: str = RESULTS) -> str:
    """The folder of a model the workflow fine-tuned for ``task`` with ``method``."""
    return f"{root}/models/{task}/{model}/{method}"


def subspace_file(model: str, attribute: str) -> str:
    """A pretrained model's SentenceDebias subspace of one attribute (§6.6, Table 4)."""
    return f"{RESULTS}/representation/subspaces/{model}/{attribute}.safetensors"


def subspace_variant(attribute: str) -> str:
    """Table 4's name of a model with its ``attribute`` subspace removed."""
    return f"{_SUBSPACE_PREFIX}{attribute}"


def variant_attribute(variant: str) -> str | None:
    """The attribute whose subspace a Table 4 variant removes (None: the pretrained model)."""
    return variant[len(_SUBSPACE_PREFIX):] if variant.startswith(_SUBSPACE_PREFIX) else None


def representation_variants(attributes: Iterable[str]) -> list[str]:
    """Table 4's rows per model: the pretrained model, then one per SentenceDebias attribute."""
    return [PRETRAINED, *(subspace_variant(a) for a in attributes)]


def predictions_file(root: str, task: str, model: str, method: str, scored: str) -> str:
    """One model's predictions on one scored set (``test``, ``fairness-balanced`` ...)."""
    return f"{root}/predictions/{task}/{model}/{method}/{scored}.parquet"


def fairness_predictions_name(fairness_set: str) -> str:
    """The scored-set name of a fairness set's predictions."""
    return f"{_FAIRNESS_PREFIX}{fairness_set}"


def prediction_key(path: str | PurePath) -> tuple[str, str, str]:
    """``(model, method, fairness set)`` of a fairness set's predictions file: the inverse
    of :func:`predictions_file` with :func:`fairness_predictions_name`. Raises ValueError."""
    p = PurePath(path)
    stem = p.name[:-len(".parquet")] if p.name.endswith(".parquet") else ""
    fset = stem[len(_FAIRNESS_PREFIX):] if stem.startswith(_FAIRNESS_PREFIX) else None
    if len(p.parts) < 3 or fset is None:
        raise ValueError("expected a path .../MODEL/METHOD/fairness-SET.parquet")
    if fset not in FAIRNESS_SETS:
        raise ValueError(f"unknown fairness set {fset!r} (one of: {', '.join(FAIRNESS_SETS)})")
    return p.parts[-3], p.parts[-2], fset


# -- the study matrix ------------------------------------------------------------------------

def sentdebias(registry: Mapping[str, Any], method: str) -> Mapping[str, Any] | None:
    """A method's SentenceDebias settings (stage, attribute, base), or None."""
    return registry.get(method, {}).get("sentdebias") or None


def downstream_methods(registry: Mapping[str, Any], methods: Iterable[str]) -> list[str]:
    """Methods whose model is a fine-tuned ``base`` method's with its own subspace removed."""
    return sorted(m for m in set(methods)
                  if (sentdebias(registry, m) or {}).get("stage") == "downstream")


def trained_methods(registry: Mapping[str, Any], methods: Iterable[str]) -> list[str]:
    """Methods that fine-tune a model (every one not downstream)."""
    methods = set(methods)
    return sorted(methods - set(downstream_methods(registry, methods)))


def finetune_methods(registry: Mapping[str, Any], task_methods: Iterable[str]) -> list[str]:
    """A task's fine-tuned methods and those its downstream methods start from, sorted."""
    task_methods = list(task_methods)
    needed = set(task_methods) | {
        sentdebias(registry, m)["base"] for m in downstream_methods(registry, task_methods)}
    return trained_methods(registry, needed)


def subspace_attributes(registry: Mapping[str, Any], methods: Iterable[str],
                        table4_attributes: Iterable[str]) -> list[str]:
    """The upstream subspaces every pretrained model needs: Table 4's attributes and those of
    the upstream-SentDebias methods trained."""
    upstream = {sd["attribute"] for m in methods
                if (sd := sentdebias(registry, m)) and sd.get("stage") == "upstream"}
    return sorted(set(table4_attributes) | upstream)


def method_variant(registry: Mapping[str, Any], method: str) -> str | None:
    """The Table 4 variant whose representation bias a method's model starts from: the
    pretrained model's, an upstream method's subspace-removed one; None for downstream."""
    sd = sentdebias(registry, method)
    if not sd:
        return PRETRAINED
    return subspace_variant(sd["attribute"]) if sd["stage"] == "upstream" else None
