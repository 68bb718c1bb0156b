"""What every command's arguments share: ``--settings`` (inline JSON of dotted config keys,
or a configuration file), ``--input`` of split files, and ``NAME=PATH`` values."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biasrepro import config as cfg
from biasrepro.errors import ConfigError


class OutputFile(type(Path())):  # type: ignore[misc]
    """A command's output file: before the command runs, :func:`check_outputs` checks that it
    can be written and locks it against a second run writing it (an argparse ``type``)."""


class OutputFolder(type(Path())):  # type: ignore[misc]
    """A command's output folder, checked the same way (an argparse ``type``)."""


def check_outputs(args: argparse.Namespace) -> None:
    """Every :class:`OutputFile` and :class:`OutputFolder` among the parsed arguments is
    checked (and each file locked) before any work: a directory given as a file, a file
    given as a folder, a folder below a file or one this user cannot write is one clear
    error naming it, and nothing is computed (:func:`biasrepro.io.check_output`)."""
    from biasrepro.io import check_output

    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (OutputFile, OutputFolder)):
                check_output(item, folder=isinstance(item, OutputFolder))


def parse_settings(value: str) -> dict[str, Any]:
    """Parse ``--settings``: inline JSON, or a config file path (whole config, validated)."""
    text = value.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise argparse.ArgumentTypeError(f"--settings is not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise argparse.ArgumentTypeError("--settings must be a JSON object")
        return data
    try:
        return {"__config__": cfg.load(value)}
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def settings_option(settings_type: Callable[[str], dict[str, Any]]
                    ) -> Callable[[argparse.ArgumentParser], None]:
    """A function adding the required ``--settings`` option to a subparser."""

    def settings_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--settings", type=settings_type, required=True,
                        help="JSON object of dotted config keys, or a config YAML file")

    return settings_arg


def split_inputs(values: Sequence[str]) -> Path | dict[str, Path]:
    """``--input PATH`` or ``--input train=PATH --input test=PATH``."""
    if len(values) == 1 and "=" not in values[0]:
        return Path(values[0])
    out: dict[str, Path] = {}
    for v in values:
        split, sep, path = v.partition("=")
        if not sep or split not in ("train", "test"):
            raise ConfigError(f"--input {v!r}: expected PATH or train=PATH / test=PATH")
        out[split] = Path(path)
    return out


def name_path(value: str, option: str, *, what: str = "NAME", optional: bool = False
              ) -> tuple[str, Path | None]:
    """``NAME=PATH`` (or ``NAME`` alone where ``optional``) as (name, path or None); a
    ConfigError naming ``option`` otherwise."""
    name, sep, path = value.partition("=")
    if not name or "/" in name or (sep and not path) or (not sep and not optional):
        form = f"{what} or {what}=PATH" if optional else f"{what}=PATH"
        raise ConfigError(f"{option}: expected {form}, not {value!r}")
    return name, Path(path) if sep else None
