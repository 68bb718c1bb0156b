"""Fine-tuning settings: their keys, named settings, and what one task x model trains with.

BiasFinder's published counts (Table 4, §6) come from one BERT fine-tuned with Sun et al.'s
BERT4doc code; its journal version fine-tunes every model with the Hugging Face Trainer and
early stopping. Neither study's setting fits every model, so a configuration may hold
*named settings* (``models.training.named.NAME``, every key) and choose one per task
(``models.training.TASK: NAME``), per model (``models.registry.MODEL.training.TASK: NAME``)
or per method (``methods.registry.METHOD.training.TASK: NAME``: every model fine-tunes that
method with it, as the toxicity paper's sentiment appendix trains its three architectures
alike).
A mapping in either place is what it has always been: the task's own values, or the
model's overrides of its task's setting.

A choice is a plain name, never a mapping holding one, because configuration files are
merged key by key (``--configfile``): a name replaces the mapping beneath it whole, where a
``{setting: NAME}`` mapping would inherit every value the file underneath sets.

Standard library only: the Snakefile, ``biasrepro plan`` and the paper tables import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biasrepro.errors import ConfigError

#: keys every resolved setting holds (besides ``seed``)
REQUIRED = ("epochs", "batch_size", "learning_rate", "max_length", "warmup_steps",
            "weight_decay", "early_stopping_patience", "eval_fraction", "truncation_side")
#: keys a setting may leave out, with their meaning when absent: ``eval_steps`` null
#: evaluates once per epoch, ``warmup_ratio`` null warms up for ``warmup_steps``,
#: ``precision`` null is :data:`AUTO_PRECISION`. A model records them only when set, so a
#: configuration without them trains and records as before.
OPTIONAL: dict[str, Any] = {"eval_steps": None, "warmup_ratio": None, "precision": None}
#: ``precision`` values: ``auto`` (bf16 mixed precision on a GPU that has it, fp16 on an
#: older one, fp32 on a CPU), ``fp32`` (full precision everywhere) or ``bf16`` (bf16 mixed
#: precision on GPU and CPU: the held-back comparison of fp32 and bf16 fine-tunes)
PRECISIONS = ("auto", "fp32", "bf16")
AUTO_PRECISION = "auto"
#: the key under which a resolved setting (and the model trained with it) records its name
NAME = "setting"

Choice = str | Mapping[str, Any]


def used_names(task_training: Choice, own: Choice | None,
               method: str | None = None) -> list[str]:
    """The named setting a task x model (x method) reads, if any: the method's choice, else
    the model's, else the task's."""
    for choice in (method, own, task_training):
        if isinstance(choice, str):
            return [choice]
    return []


def _named(name: str, named: Mapping[str, Mapping[str, Any]], where: str) -> dict[str, Any]:
    if name not in named:
        raise ConfigError(f"config key '{where}': '{name}' is not in 'models.training.named' "
                          f"(named: {', '.join(sorted(named)) or 'none'})")
    return {**named[name], NAME: name}


def resolve(task_training: Choice, own: Choice | None,
            named: Mapping[str, Mapping[str, Any]], *, seed: int, task: str = "TASK",
            model: str = "MODEL", method_choice: str | None = None,
            method: str = "METHOD") -> dict[str, Any]:
    """The settings one model fine-tunes with for one task.

    ``task_training`` is ``models.training.TASK``, ``own`` the model's
    ``models.registry.MODEL.training.TASK`` (or None) and ``named``
    ``models.training.named``. A name stands for that named setting; the model's mapping
    overrides single keys of its task's setting. The result holds ``seed`` (the
    configuration's, unless the setting has its own) and, when a named setting was used,
    ``setting``: its name. ``method_choice``, the method's ``methods.registry.METHOD.training.
    TASK`` (a name), takes the place of both.
    """
    where = f"models.registry.{model}.training.{task}"
    if method_choice is not None:
        merged = _named(method_choice, named, f"methods.registry.{method}.training.{task}")
    elif isinstance(own, str):
        merged = _named(own, named, where)
    else:
        base = (_named(task_training, named, f"models.training.{task}")
                if isinstance(task_training, str) else dict(task_training))
        merged = {**base, **(own or {})}
    missing = [k for k in REQUIRED if k not in merged]
    if missing:
        raise ConfigError(f"training settings of {model} for {task} lack {', '.join(missing)}")
    return {"seed": seed, **merged}


def method_choice(methods: Mapping[str, Any], method: str, task: str) -> str | None:
    """The named setting ``methods.registry.METHOD.training.TASK`` chooses, if any."""
    return (methods.get(method) or {}).get("training", {}).get(task)


def describe(settings: Mapping[str, Any]) -> str:
    """A one-line summary of a resolved setting, for tables and logs."""
    patience = settings.get("early_stopping_patience")
    every = settings.get("eval_steps")
    stopping = ("no early stopping" if patience is None else
                f"early stopping (patience {patience}, evaluated every "
                f"{f'{every} steps' if every else 'epoch'})")
    kept = "the tail" if settings.get("truncation_side") == "left" else "the head"
    name = settings.get(NAME)
    return (f"{f'setting {name!r}' if name else 'unnamed setting'}: "
            f"lr {settings.get('learning_rate'):g}, batch {settings.get('batch_size')}, "
            f"{settings.get('epochs')} epochs, max_length {settings.get('max_length')} keeping "
            f"{kept}, {stopping}")
