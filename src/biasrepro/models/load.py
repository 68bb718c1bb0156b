"""Resolve a model name (registry entry, local directory or Hub id) and load it safely.

Weights are read only from safetensors files: a checkpoint that has only a pickled
``pytorch_model.bin`` is refused (DESIGN.md, "Conventions"), as is a checkpoint whose
architecture differs from the one the registry names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasrepro.errors import ModelError

ARCHITECTURES = ("bert", "albert", "roberta")
#: where the workflow builds the embedded models (one directory per registry name)
EMBEDDED_DIR = Path("resources/models/embedded")


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
    """A registry name, a local model directory, or (outside the registry) a Hub id."""
    if registry and name in registry:
        entry = registry[name]
        arch = entry["architecture"]
        if entry["source"] == "embedded":
            return ModelSpec(name, str(EMBEDDED_DIR / name), arch)
        if entry["source"] == "local":
            return ModelSpec(name, entry["path"], arch)
        return ModelSpec(name, entry["id"], arch, entry["revision"])
    path = Path(name)
    if path.is_dir():
        return ModelSpec(path.name, str(path))
    if path.exists() or name.startswith((".", "/")) or name.count("/") > 1:
        raise ModelError(f"model {name!r}: not a model directory")
    known = f" (registered: {', '.join(sorted(registry))})" if registry else ""
    if registry is not None and "/" not in name:
        raise ModelError(f"unknown model name {name!r}{known}")
    return ModelSpec(name, name, None, "main")


def check_checkpoint(spec: ModelSpec) -> dict[str, Any]:
    """For a local directory: its config.json, checked for architecture and safetensors."""
    path = Path(spec.location)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelError(f"model {spec.name!r}: {path} has no config.json (not a saved model)")
    config = json.loads(config_file.read_text(encoding="utf-8"))
    model_type = config.get("model_type")
    if spec.architecture and model_type != spec.architecture:
        raise ModelError(
            f"model {spec.name!r}: the checkpoint at {path} is a {model_type} model, "
            f"but {spec.architecture} was expected"
        )
    if not any(path.glob("*.safetensors")):
        pickled = [p.name for p in path.glob("*.bin")]
        detail = (f" (found only {', '.join(pickled)}: pickled weights are not loaded)"
                  if pickled else "")
        raise ModelError(f"model {spec.name!r}: no .safetensors weights in {path}{detail}")
    return config


def _kwargs(spec: ModelSpec) -> dict[str, Any]:
    return {"use_safetensors": True} | ({"revision": spec.revision} if spec.revision else {})


def load_tokenizer(spec: ModelSpec) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            spec.location, **({"revision": spec.revision} if spec.revision else {})
        )
    except (OSError, ValueError) as e:
        raise ModelError(f"model {spec.name!r}: cannot load its tokenizer ({e})") from None


def load_classifier(spec: ModelSpec, num_labels: int = 2) -> tuple[Any, Any]:
    """(model, tokenizer) for sequence classification; a base/MLM checkpoint gains a new head."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    if spec.is_local:
        check_checkpoint(spec)
    try:
        revision = {"revision": spec.revision} if spec.revision else {}
        config = AutoConfig.from_pretrained(spec.location, num_labels=num_labels, **revision)
        if spec.architecture and config.model_type != spec.architecture:
            raise ModelError(f"model {spec.name!r}: {spec.location} is a {config.model_type} "
                             f"model, but {spec.architecture} was expected")
        model = AutoModelForSequenceClassification.from_pretrained(
            spec.location, config=config, **_kwargs(spec))
    except OSError as e:
        raise ModelError(f"model {spec.name!r}: cannot load {spec.location} ({e})") from None
    return model, load_tokenizer(spec)
