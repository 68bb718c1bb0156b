"""``biasrepro fairness report``: the toxicity study's tables for one task."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasrepro.cli.settings import OutputFolder, name_path
from biasrepro.errors import ConfigError


def _pairs(values: list[str]) -> dict[str, Path]:
    return dict(name_path(v, "--training", what="METHOD") for v in values)


def _report(args: argparse.Namespace) -> None:
    from biasrepro.config import need
    from biasrepro.fairness.report import write_report

    s = args.settings
    settings = {key: need(s, key) for key in ("seed", "attributes", "fairness")}
    if args.representation is not None:
        settings["methods"] = {"registry": need(s, "methods.registry")}
    settings["preprocess"] = {"civil_comments": {"identity_threshold": need(
        s, "preprocess.civil_comments.identity_threshold")}}
    if args.task not in settings["fairness"]["attributes"]:
        raise ConfigError(f"fairness.attributes has no entry for task {args.task!r}")
    write_report(task=args.task, original=args.original, balanced=args.balanced,
                 predictions=args.predictions, training=_pairs(args.training),
                 settings=settings, out_dir=args.out_dir, representation=args.representation,
                 test_predictions=args.test_predictions)


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``fairness report`` to the top-level parser's subparsers."""
    f = sub.add_parser("fairness", help="the toxicity study's fairness tables",
                       description="Group fairness (FPR/TPR/AUC gaps with bootstrap intervals, "
                       "Borkan AUCs), SenseScore, dataset bias and Pearson correlations "
                       "(Elsafoury & Katsigiannis, sections 5-7).")
    fsub = f.add_subparsers(dest="step", required=True, metavar="STEP")
    r = fsub.add_parser("report", help="every table of one task",
                        description="Evaluate every model x method's predictions on the "
                        "original and balanced fairness sets and write the study's tables.")
    r.add_argument("--task", required=True, choices=["toxicity", "sentiment"])
    r.add_argument("--original", type=Path, required=True, help="the original fairness set")
    r.add_argument("--balanced", type=Path, required=True, help="the balanced fairness set")
    r.add_argument("--predictions", type=Path, nargs="+", required=True,
                   help=".../MODEL/METHOD/fairness-{original,balanced}.parquet files")
    r.add_argument("--test-predictions", type=Path, nargs="+", default=(),
                   help=".../MODEL/METHOD/test.parquet: each model x method's predictions on "
                   "its held-out test split, for the model-works gate (fairness.model_floor); "
                   "without them no model is checked")
    r.add_argument("--training", nargs="+", required=True, metavar="METHOD=PATH",
                   help="each method's training data (for its dataset bias)")
    r.add_argument("--settings", type=settings_type, required=True,
                   help="JSON object of dotted config keys, or a config YAML file")
    r.add_argument("--representation", type=Path, default=None,
                   help="Table 4's long table (representation table) for Table 9's rows")
    r.add_argument("--out-dir", type=OutputFolder, required=True)
    r.set_defaults(func=_report)
