"""``biasrepro representation ...``: the command line of :mod:`biasrepro.representation.table4`.

* ``subspace`` — SentenceDebias subspaces of a model, one per attribute;
* ``debias`` — a saved model with a subspace beside it (downstream-SentDebias);
* ``score`` — CrowS-Pairs, StereoSet intrasentence and SEAT of a masked LM, as it is and with
  each subspace attached;
* ``table`` — Table 4 and the long table of representation bias.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro import layout
from biasrepro.cli.settings import OutputFile, OutputFolder, name_path
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    read_json,
    write_json,
    write_text,
)
from biasrepro.representation.table4 import (
    ATTRIBUTES,
    STAGES,
    compute,
    debias_copy,
    long_rows,
    score,
    table4,
    write_subspaces,
)

log = logging.getLogger(__name__)


def _registry(args: argparse.Namespace) -> Mapping[str, Any] | None:
    from biasrepro.config import need

    return need(args.settings, "models.registry") if args.settings else None


def _representation_settings(args: argparse.Namespace) -> dict[str, Any]:
    from biasrepro.config import need

    return need(args.settings, "representation")


def _subspace(args: argparse.Namespace) -> None:
    from biasrepro.config import need

    start = time.perf_counter()
    if args.out_dir is not None and len(args.attribute) != 1:
        raise ConfigError(f"--out-dir takes one --attribute, not {len(args.attribute)}")
    if args.out is not None and len(args.out) != len(args.attribute):
        raise ConfigError(f"give one --out per --attribute: {len(args.attribute)} attributes "
                          f"but {len(args.out)} files")
    settings = _representation_settings(args)["sentdebias"]
    found = [compute(args.model, _registry(args), words=args.words, attribute=attribute,
                     corpus=args.corpus, settings=settings,
                     seed=int(need(args.settings, "seed")))
             for attribute in args.attribute]
    for _, meta in found:
        meta["stage"] = args.stage
    if args.out_dir is not None:
        debias_copy(Path(args.model), *found[0], args.out_dir)
    else:
        write_subspaces(found, args.out)
    log.info("subspaces of %s (%s, %s) written in %.1f s", args.model,
             ", ".join(args.attribute), args.stage, time.perf_counter() - start)


#: the files ``score`` writes per variant: scores.json, then each per-item table
SCORE_FILES = layout.REPRESENTATION_SCORE_FILES


def _variants(values: Sequence[str]) -> list[tuple[str, Path | None]]:
    """``NAME`` or ``NAME=SUBSPACE_FILE`` values as (name, subspace or None), names unique."""
    variants = [name_path(v, "--variant", optional=True) for v in values]
    names = [name for name, _ in variants]
    if len(set(names)) != len(names):
        raise ConfigError(f"--variant names must differ: {', '.join(names)}")
    return variants


def _score(args: argparse.Namespace) -> None:
    variants = _variants(args.variant)
    found = []
    for name, subspace in variants:
        start = time.perf_counter()
        result, frames = score(args.model, _registry(args), subspace=subspace,
                               crows=args.crows, stereoset=args.stereoset, seat=args.seat,
                               settings=_representation_settings(args))
        result["variant"] = name
        found.append((result, frames))
        log.info("%s (%s): CrowS %s, StereoSet ss %s, SEAT %s in %.1f s", args.model, name,
                 {k: v["metric_score"] for k, v in result["crows"]["bias_types"].items()},
                 {k: round(v["ss"], 2) for k, v in result["stereoset"].items()},
                 {k: round(v, 3) for k, v in result["seat"]["average_absolute_effect"].items()},
                 time.perf_counter() - start)
    out = Path(args.out_dir)
    names = [out / name / f for name, _ in variants for f in SCORE_FILES]
    with atomic_outputs(*names) as tmp:
        for i, (result, frames) in enumerate(found):
            paths = tmp[len(SCORE_FILES) * i:len(SCORE_FILES) * (i + 1)]
            write_json(result, paths[0])
            for path, key in zip(paths[1:], ("crows", "stereoset", "seat"), strict=True):
                frames[key].to_csv(path, index=False, lineterminator="\n")


def _table(args: argparse.Namespace) -> None:
    rows = []
    for path in map(Path, args.inputs):
        try:
            result = read_json(path)
            rows += long_rows(result, model=path.parent.parent.name, variant=result["variant"])
        except (ValueError, KeyError, TypeError) as e:
            raise DataError(f"not a representation score file ({e})", file=path) from None
    frame = pd.DataFrame(rows, columns=["model", "variant", "attribute", "source", "value"])
    with atomic_outputs(args.out_csv, args.out_md) as (csv, md):
        frame.to_csv(csv, index=False, lineterminator="\n")
        write_text(table4(frame), md)


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``representation {subspace,score,table}`` to the top-level subparsers."""
    r = sub.add_parser("representation", help="representation bias and SentenceDebias",
                       description="CrowS-Pairs, StereoSet and SEAT of masked LMs, and "
                       "SentenceDebias subspaces (Elsafoury & Katsigiannis §6.1-6.2, 6.6).")
    rsub = r.add_subparsers(dest="step", required=True, metavar="STEP")

    s = rsub.add_parser("subspace", help="SentenceDebias subspaces of a model, per attribute")
    s.add_argument("--model", required=True, help="registry name, model directory or Hub id")
    s.add_argument("--attribute", required=True, nargs="+", choices=list(ATTRIBUTES))
    s.add_argument("--stage", required=True, choices=list(STAGES))
    s.add_argument("--words", type=Path, required=True, help="bias_attribute_words.json")
    s.add_argument("--corpus", type=Path, nargs="+", required=True,
                   help="text files (a sentence per line) or Parquet files with `text`")
    s.add_argument("--settings", type=settings_type, required=True)
    where = s.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=OutputFile, nargs="+",
                       help="write each attribute's subspace file here (same order)")
    where.add_argument("--out-dir", type=OutputFolder,
                       help="write a copy of the model directory with the subspace beside it "
                       "(one attribute)")
    s.set_defaults(func=_subspace)

    c = rsub.add_parser("score", help="CrowS-Pairs, StereoSet and SEAT of one masked LM",
                        description="Score the model once per --variant: as it is (NAME) or "
                        "with a subspace attached (NAME=SUBSPACE_FILE); write OUT_DIR/NAME/"
                        + "{" + ",".join(SCORE_FILES) + "} for each.")
    c.add_argument("--model", required=True, help="registry name, model directory or Hub id")
    c.add_argument("--variant", required=True, nargs="+",
                   help="NAME or NAME=SUBSPACE_FILE; NAME is the row label of Table 4")
    c.add_argument("--crows", type=Path, required=True)
    c.add_argument("--stereoset", type=Path, required=True)
    c.add_argument("--seat", type=Path, nargs="+", required=True)
    c.add_argument("--settings", type=settings_type, required=True)
    c.add_argument("--out-dir", type=OutputFolder, required=True,
                   help="one directory per variant here")
    c.set_defaults(func=_score)

    t = rsub.add_parser("table", help="Table 4 and the long representation-bias table")
    t.add_argument("--inputs", type=Path, nargs="+", required=True,
                   help=".../MODEL/VARIANT/scores.json files")
    t.add_argument("--out-csv", type=OutputFile, required=True)
    t.add_argument("--out-md", type=OutputFile, required=True)
    t.set_defaults(func=_table)
