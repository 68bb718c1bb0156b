"""``biasrepro pretrain|finetune|predict|evaluate|metrics-table``: models (embedded models,
fine-tuning, scoring, classification metrics)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasrepro import config as cfg
from biasrepro.cli.settings import OutputFile, OutputFolder, settings_option
from biasrepro.errors import ConfigError

# -- handlers: each imports its module lazily so `biasrepro --help` stays fast ----------


def _pretrain(args: argparse.Namespace) -> None:
    from biasrepro.models import embedded

    s = args.settings
    entry = cfg.need(s, "models.registry")[args.model]
    embedded.build(
        args.model,
        architecture=entry["architecture"],
        settings=cfg.need(s, "models.embedded"),
        seed=cfg.need(s, "seed"),
        corpus=[Path(p) for p in args.corpus],
        out_dir=args.out_dir,
    )


def _finetune(args: argparse.Namespace) -> None:
    from biasrepro.models import finetune
    from biasrepro.models.load import resolve

    s = args.settings
    sentdebias = args.sentdebias or ["none"] * len(args.train)
    # --validation: one split shared by every run, or one per run ("none": held out)
    validation = args.validation or ["none"]
    shared = validation[0] if len(validation) == 1 else None
    per_run = ["none"] * len(args.train) if len(validation) == 1 else validation
    methods = args.methods or [None] * len(args.train)
    given = {"--train": args.train, "--out-dir": args.out_dir,
             "--checkpoint-dir": args.checkpoint_dir, "--sentdebias": sentdebias,
             "--validation": per_run, "--methods": methods}
    if len({len(values) for values in given.values()}) != 1:
        raise ConfigError("give one value per fine-tuning to each of " + ", ".join(
            f"{name} (got {len(values)})" for name, values in given.items()))
    spec = resolve(args.model, cfg.need(s, "models.registry"))
    common = finetune.training_settings(s, args.model, args.task)
    own = [None if method is None else finetune.training_settings(s, args.model, args.task,
                                                                  method)
           for method in methods]
    finetune.finetune_runs(
        spec,
        task=args.task,
        runs=[finetune.Run(train, out_dir, checkpoint_dir,
                           None if subspace == "none" else Path(subspace),
                           None if valid == "none" else Path(valid),
                           None if mine is None or mine == common
                           else _with_seed(mine, args.seed))
              for train, out_dir, checkpoint_dir, subspace, valid, mine in zip(
                  args.train, args.out_dir, args.checkpoint_dir, sentdebias, per_run, own,
                  strict=True)],
        validation=None if shared in (None, "none") else Path(shared),
        settings=_with_seed(common, args.seed),
    )


def _with_seed(settings: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """A replicate's fine-tuning seed (config ``seeds``) in place of every configured one."""
    return settings if seed is None else {**settings, "seed": seed}


def _predict(args: argparse.Namespace) -> None:
    from biasrepro.models import predict
    from biasrepro.models.load import resolve

    registry = cfg.need(args.settings, "models.registry") if args.settings else None
    if registry is not None and "__config__" not in args.settings:  # a file is validated
        cfg.validate_key("models.registry", registry)
    predict.predict_models(
        [resolve(model, registry) for model in args.model],
        args.input,
        args.out,
        text_column=args.text_column,
        max_length=args.max_length,
        batch_tokens=args.batch_tokens,
    )


def _evaluate(args: argparse.Namespace) -> None:
    from biasrepro.io import atomic_outputs, labels, probabilities, read_table, write_json
    from biasrepro.metrics.classification import classification_metrics

    path = args.predictions
    df = read_table(path, required=["label", "prob"], what="predictions file")
    label = labels(df["label"], file=path, column="label")
    prob = probabilities(df["prob"], file=path, column="prob")
    with atomic_outputs(args.out) as (tmp,):
        write_json(classification_metrics(label, prob), tmp)


def _metrics_table(args: argparse.Namespace) -> None:
    from biasrepro.metrics import tables

    tables.write_metrics_table(args.inputs, out_json=args.out_json, out_md=args.out_md)


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add this group's commands to the top-level parser's subparsers."""
    settings_arg = settings_option(settings_type)

    pt = sub.add_parser("pretrain", help="build an embedded model: tokenizer + masked-LM",
                        description="Train a tokenizer of the architecture's own kind on the "
                        "corpus and pre-train a small model with masked-LM (safetensors).")
    pt.add_argument("--model", required=True, help="an embedded entry of models.registry")
    pt.add_argument("--corpus", nargs="+", required=True,
                    help="Parquet files with a `text` column")
    settings_arg(pt)
    pt.add_argument("--out-dir", type=OutputFolder, required=True)
    pt.set_defaults(func=_pretrain)

    ft = sub.add_parser("finetune", help="fine-tune a model for sequence classification",
                        description="Fine-tune a model of models.registry (embedded, a local "
                        "directory or a Hub id at a revision) on a Parquet of `text` and "
                        "`label` (0/1); resumes from its last checkpoint when interrupted. "
                        "Several training sets: one fine-tuning each, in turn, in one process "
                        "(the same bytes as one process each); give every per-run option "
                        "once per --train, in the same order.")
    ft.add_argument("--model", required=True, help="a name in models.registry")
    ft.add_argument("--task", required=True, choices=["sentiment", "toxicity"])
    ft.add_argument("--train", type=Path, nargs="+", required=True)
    ft.add_argument("--validation", nargs="+", default=None,
                    help="one validation split shared by every run, or one per run "
                    "('none': hold out eval_fraction of that run's training data)")
    settings_arg(ft)
    ft.add_argument("--out-dir", type=OutputFolder, nargs="+", required=True)
    ft.add_argument("--checkpoint-dir", type=Path, nargs="+", required=True)
    ft.add_argument("--seed", type=int, default=None,
                    help="this replicate's fine-tuning seed (config `seeds`): replaces `seed` "
                         "and any training setting's own seed")
    ft.add_argument("--sentdebias", nargs="+", default=None,
                    help="a SentenceDebias subspace file to attach before training "
                    "(upstream), or `none` (default: none for every run)")
    ft.add_argument("--methods", nargs="+", default=None,
                    help="each run's method (methods.registry): a method whose entry names "
                    "a training setting for the task trains with it (default: every run "
                    "with the model's setting)")
    ft.set_defaults(func=_finetune)

    pd_ = sub.add_parser("predict", help="score a Parquet of texts with a saved model",
                         description="Write the positive-class probability and the label "
                         "for every row (identical texts are scored once). Several models "
                         "are loaded and score the inputs one after another, each as alone.")
    pd_.add_argument("--model", nargs="+", required=True,
                     help="model directory, registry name or Hub id (one or more)")
    pd_.add_argument("--input", type=Path, nargs="+", required=True,
                     help="Parquet file(s); several are scored in one pass")
    pd_.add_argument("--out", type=OutputFile, nargs="+", required=True,
                     help="one output per model and input, model by model, inputs in order")
    pd_.add_argument("--text-column", default="text")
    pd_.add_argument("--max-length", type=int, default=None,
                     help="default: the model's training max_length, else 512")
    pd_.add_argument("--batch-tokens", type=int, default=None,
                     help="padded tokens per batch (default depends on the device)")
    pd_.add_argument("--settings", type=settings_type, default=None,
                     help="config keys (models.registry) to resolve registry names")
    pd_.set_defaults(func=_predict)

    ev = sub.add_parser("evaluate", help="accuracy, ROC-AUC and F1 of a predictions file")
    ev.add_argument("--predictions", type=Path, required=True)
    ev.add_argument("--out", type=OutputFile, required=True)
    ev.set_defaults(func=_evaluate)

    mt = sub.add_parser("metrics-table", help="classification metrics of many runs and "
                        "sets as one table",
                        description="Accuracy, ROC-AUC and F1 of every "
                        "results/predictions/TASK/MODEL/METHOD/SET.parquet (SET: test, "
                        "validation, fairness-original, fairness-balanced; as `evaluate` "
                        "computes them) in one JSON and one Markdown table.")
    mt.add_argument("--inputs", nargs="+", type=Path, required=True,
                    help="predictions (label, prob) from `predict`")
    mt.add_argument("--out-json", type=OutputFile, required=True)
    mt.add_argument("--out-md", type=OutputFile, required=True)
    mt.set_defaults(func=_metrics_table)
