"""Resolve a model name (registry entry, local directory or Hub id) and load it safely.

Weights are read only from safetensors files: a checkpoint that has only a pickled
``pytorch_model.bin`` is refused (docs/architecture.md, "Conventions"), as is a checkpoint whose
architecture differs from the one the registry names.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasrepro import layout
from biasrepro.errors import ModelError

log = logging.getLogger(__name__)

ARCHITECTURES = ("bert", "albert", "roberta")
#: files of which a saved tokenizer has at least one
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json",
                   "spiece.model", "sentencepiece.bpe.model")


@dataclass(frozen=True)
class ModelSpec:
    """Where a model comes from: a local directory, or a Hub id at a revision."""

    name: str
    location: str
    architecture: str | None = None
    revision: str | None = None

    @property
    def is_local(self) -> bool:
        return self.revision is None


def resolve(name: str, registry: Mapping[str, Mapping[str, Any]] | None = None) -> ModelSpec:
    """A registry name, a local model directory, or (outside the registry) a Hub id.

    With a registry, a bare name must be registered; a Hub id outside it is written
    ``owner/name`` and loaded at revision ``main``.
    """
    if registry and name in registry:
        entry = registry[name]
        arch = entry["architecture"]
        if entry["source"] == "embedded":
            return ModelSpec(name, layout.embedded_model_dir(name), arch)
        if entry["source"] == "local":
            return ModelSpec(name, entry["path"], arch)
        return ModelSpec(name, entry["id"], arch, entry["revision"])
    path = Path(name)
    if path.is_dir():
        return ModelSpec(path.resolve().name, str(path))
    if path.exists():
        raise ModelError(f"model {name!r}: {name} is a file, not a model directory")
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelError(f"model {name!r}: no such model directory")
    if registry is not None and "/" not in name:
        known = f"registered: {', '.join(sorted(registry))}" if registry else "none registered"
        raise ModelError(f"unknown model name {name!r} ({known}); a model directory or a "
                         "Hub id written owner/name is also accepted")
    return ModelSpec(name, name, None, "main")


def check_checkpoint(spec: ModelSpec) -> dict[str, Any]:
    """For a local directory: its config.json, checked for architecture and safetensors."""
    path = Path(spec.location)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelError(f"model {spec.name!r}: {path} has no config.json (not a saved model)")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"model {spec.name!r}: {config_file} is not valid JSON ({e})") from None
    if not isinstance(config, dict):
        raise ModelError(f"model {spec.name!r}: {config_file} is not a JSON object")
    model_type = config.get("model_type")
    if spec.architecture and model_type != spec.architecture:
        found = f"a {model_type} model" if model_type else "a model without a model_type"
        raise ModelError(
            f"model {spec.name!r}: the checkpoint at {path} is {found}, "
            f"but {spec.architecture} was expected"
        )
    if not any(path.glob("*.safetensors")):
        pickled = sorted(p.name for p in path.glob("*.bin"))
        detail = (f" (found only {', '.join(pickled)}: pickled weights are not loaded)"
                  if pickled else "")
        raise ModelError(f"model {spec.name!r}: no .safetensors weights in {path}{detail}")
    return config


def _revision(spec: ModelSpec) -> dict[str, str]:
    return {"revision": spec.revision} if spec.revision else {}


def _cannot_load(spec: ModelSpec, what: str, e: Exception) -> ModelError:
    where = (spec.location if spec.is_local
             else f"{spec.location} (not a local directory; Hub id at revision {spec.revision})")
    return ModelError(f"model {spec.name!r}: cannot load {what} from {where}: {e}")


def load_tokenizer(spec: ModelSpec) -> Any:
    from transformers import AutoTokenizer

    path = Path(spec.location)
    if spec.is_local and not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise ModelError(f"model {spec.name!r}: {path} has no tokenizer files "
                         f"(one of {', '.join(TOKENIZER_FILES)})")
    try:
        return AutoTokenizer.from_pretrained(spec.location, **_revision(spec))
    except (OSError, ValueError, ImportError) as e:
        raise _cannot_load(spec, "its tokenizer", e) from None


def load_masked_lm(model_dir: str | os.PathLike[str]) -> tuple[Any, Any]:
    """(masked LM, tokenizer) from a local directory, safetensors weights only; a saved
    SentenceDebias projection is re-attached, as :func:`load_classifier` does."""
    from transformers import AutoModelForMaskedLM

    spec = resolve(str(model_dir), None)
    if not spec.is_local:
        raise ModelError(f"model {str(model_dir)!r}: not a local model directory")
    check_checkpoint(spec)
    tokenizer = load_tokenizer(spec)
    try:
        model = AutoModelForMaskedLM.from_pretrained(spec.location, use_safetensors=True)
    except (OSError, ValueError) as e:
        raise ModelError(f"model {spec.name!r}: cannot load a masked LM from "
                         f"{spec.location}: {e}") from None
    reattach_sentdebias(model, spec)
    return model, tokenizer


def reattach_sentdebias(model: Any, spec: ModelSpec) -> None:
    """A SentenceDebias model's projection is part of it: put the saved hook back."""
    from biasrepro.debias import sentdebias

    saved = sentdebias.load(spec.location)
    if saved is not None:
        sentdebias.attach(model, *saved)
        log.info("model %r: SentenceDebias projection re-attached (%s)", spec.name,
                 saved[1] or "no metadata")


def load_classifier(spec: ModelSpec, num_labels: int = 2, *,
                    trained_head: bool = False) -> tuple[Any, Any]:
    """(model, tokenizer) for sequence classification with ``num_labels`` labels.

    For fine-tuning (the default) a base or masked-LM checkpoint gains a new, randomly
    initialised head, and a classifier with another number of labels has its head
    replaced. With ``trained_head=True`` (prediction) the checkpoint must be a classifier
    with exactly ``num_labels`` labels whose weights are all present: a random head
    scores nothing, so anything else is refused.
    """
    from transformers import AutoConfig, AutoModelForSequenceClassification

    if spec.is_local:
        check_checkpoint(spec)
    try:
        config = AutoConfig.from_pretrained(spec.location, **_revision(spec))
    except (OSError, ValueError) as e:
        raise _cannot_load(spec, "its config", e) from None
    if spec.architecture and config.model_type != spec.architecture:
        raise ModelError(f"model {spec.name!r}: {spec.location} is a {config.model_type} "
                         f"model, but {spec.architecture} was expected")
    is_classifier = any(a.endswith("ForSequenceClassification")
                        for a in (config.architectures or []))
    if is_classifier and config.num_labels != num_labels:
        if trained_head:
            raise ModelError(f"model {spec.name!r}: {spec.location} is a classifier with "
                             f"{config.num_labels} labels; {num_labels} are needed")
        log.warning("model %r: its %d-label head is replaced by a new %d-label head",
                    spec.name, config.num_labels, num_labels)
    config.num_labels = num_labels
    try:
        model, info = AutoModelForSequenceClassification.from_pretrained(
            spec.location, config=config, use_safetensors=True, output_loading_info=True,
            ignore_mismatched_sizes=not trained_head, **_revision(spec))
    except (OSError, ValueError, RuntimeError) as e:  # RuntimeError: weight shape mismatch
        raise _cannot_load(spec, "its weights", e) from None
    if trained_head and info["missing_keys"]:
        raise ModelError(
            f"model {spec.name!r}: {spec.location} is not a trained sequence classifier "
            f"(architectures {config.architectures}); these weights are not in the "
            f"checkpoint: {', '.join(sorted(info['missing_keys']))}")
    if spec.is_local:
        reattach_sentdebias(model, spec)
    return model, load_tokenizer(spec)
