"""The ``biasrepro`` command line. Snakemake rules call these subcommands; so can users.

Settings that come from the workflow configuration are passed as ``--settings``: a JSON
object whose keys are dotted config keys (``{"world.reviews": {...}, "seed": 1}``), or
the path of a YAML/JSON config file from which those keys are read.
Expected failures (bad data, bad config, failed download) print one line ``error: ...``
and exit with status 2; nothing is left at the output paths.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biasrepro import __version__, gpu
from biasrepro import config as cfg
from biasrepro.errors import BiasreproError, ConfigError

log = logging.getLogger("biasrepro")

Handler = Callable[[argparse.Namespace], None]


def _settings(value: str) -> dict[str, Any]:
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


def _split_inputs(values: Sequence[str]) -> Path | dict[str, Path]:
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


# -- handlers: each imports its module lazily so `biasrepro --help` stays fast ------------


def _world(args: argparse.Namespace) -> None:
    from biasrepro.data.world import benchmarks, comments, reviews, sst_like, stereotypes

    s = args.settings
    seed = cfg.need(s, "seed")
    if args.corpus == "benchmarks":
        benchmarks.generate(cfg.need(s, "models.embedded.stereotypes.associations"),
                            attributes=cfg.need(s, "attributes"), seed=seed,
                            out_dir=args.out_dir)
        return
    if args.corpus == "stereotypes":
        stereotypes.generate(cfg.need(s, "models.embedded.stereotypes"), seed=seed,
                             out_dir=args.out_dir)
    elif args.corpus == "reviews":
        reviews.generate(cfg.need(s, "world.reviews"), seed=seed, out_dir=args.out_dir)
    elif args.corpus == "comments":
        comments.generate(
            cfg.need(s, "world.comments"),
            seed=seed,
            identities=cfg.need(s, "identities"),
            attributes=cfg.need(s, "attributes"),
            preprocess=cfg.need(s, "preprocess.civil_comments"),
            out_dir=args.out_dir,
        )
    else:
        sst_like.generate(cfg.need(s, "world.sst"), seed=seed, out_dir=args.out_dir)


def _download(args: argparse.Namespace) -> None:
    from biasrepro.data.download import EXPECT_BY_FORMAT, fetch

    if args.sha256 is None and args.git_blob is None:
        raise ConfigError("download: give --sha256 (or 'unpinned') and/or --git-blob")
    fetch(args.url, sha256=args.sha256, git_blob=args.git_blob, out=args.out, size=args.size,
          min_size=args.min_size, expect=EXPECT_BY_FORMAT.get(args.format or ""),
          allow_unpinned=args.allow_unpinned, **({"lock": args.lock} if args.lock else {}))


def _prepare(args: argparse.Namespace) -> None:
    if args.dataset == "imdb":
        from biasrepro.data import imdb

        imdb.prepare(_split_inputs(args.input), fmt=args.format, out_dir=args.out_dir)
    elif args.dataset == "civil-comments":
        from biasrepro.data import civil_comments

        s = args.settings
        civil_comments.prepare(
            Path(args.input[0]),
            fmt=args.format,
            member=args.member,
            identities=cfg.need(s, "identities"),
            settings=cfg.need(s, "preprocess.civil_comments"),
            seed=cfg.need(s, "seed"),
            out_dir=args.out_dir,
        )
    else:
        from biasrepro.data import sst

        sst.prepare(Path(args.input[0]), out_dir=args.out_dir)


def _summary(args: argparse.Namespace) -> None:
    from biasrepro.data import summary

    s = args.settings
    summary.write(
        args.data_dir,
        attributes=cfg.need(s, "attributes"),
        identities=cfg.need(s, "identities"),
        identity_threshold=cfg.need(s, "preprocess.civil_comments")["identity_threshold"],
        out_json=args.out_json,
        out_md=args.out_md,
    )


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


def training_settings(settings: dict[str, Any], model: str, task: str) -> dict[str, Any]:
    """The settings ``model`` fine-tunes with for ``task``: the task's, or the named setting
    it picks, with the registry entry's overrides and the seed (models/training.py)."""
    from biasrepro.models import training

    registry = cfg.need(settings, "models.registry")
    if model not in registry:
        raise ConfigError(f"model {model!r} is not in models.registry "
                          f"(registered: {', '.join(sorted(registry))})")
    task_training = cfg.need(settings, f"models.training.{task}")
    own = registry[model].get("training", {}).get(task)
    named = {name: cfg.need(settings, f"models.training.named.{name}")
             for name in training.used_names(task_training, own)}
    return training.resolve(task_training, own, named, seed=cfg.need(settings, "seed"),
                            task=task, model=model)


def _finetune(args: argparse.Namespace) -> None:
    from biasrepro.models import finetune
    from biasrepro.models.load import resolve

    s = args.settings
    sentdebias = args.sentdebias or ["none"] * len(args.train)
    # --validation: one split shared by every run, or one per run ("none": held out)
    validation = args.validation or ["none"]
    shared = validation[0] if len(validation) == 1 else None
    per_run = ["none"] * len(args.train) if len(validation) == 1 else validation
    given = {"--train": args.train, "--out-dir": args.out_dir,
             "--checkpoint-dir": args.checkpoint_dir, "--sentdebias": sentdebias,
             "--validation": per_run}
    if len({len(values) for values in given.values()}) != 1:
        raise ConfigError("give one value per fine-tuning to each of " + ", ".join(
            f"{name} (got {len(values)})" for name, values in given.items()))
    spec = resolve(args.model, cfg.need(s, "models.registry"))
    finetune.finetune_runs(
        spec,
        task=args.task,
        runs=[finetune.Run(train, out_dir, checkpoint_dir,
                           None if subspace == "none" else Path(subspace),
                           None if valid == "none" else Path(valid))
              for train, out_dir, checkpoint_dir, subspace, valid in zip(
                  args.train, args.out_dir, args.checkpoint_dir, sentdebias, per_run,
                  strict=True)],
        validation=None if shared in (None, "none") else Path(shared),
        settings=_with_seed(training_settings(s, args.model, args.task), args.seed),
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


def _config_validate(args: argparse.Namespace) -> None:
    cfg.load(*args.files)
    print(f"ok: {' + '.join(map(str, args.files))} is a valid configuration")


def _dvc_yaml(args: argparse.Namespace) -> None:
    from biasrepro import dvc

    repo = dvc.checkout_root()
    if args.check:
        dvc.check(args.configfile, args.output, repo)
        print(f"ok: {args.output} matches the Snakemake DAG")
    else:
        dvc.write(args.configfile, args.output, repo)
        print(f"wrote {repo / args.output}")


def _dvc_record(args: argparse.Namespace) -> None:
    from biasrepro import dvc

    print(dvc.record(dvc.checkout_root(), args.run_configfiles, args.run_overrides))


def _plan(args: argparse.Namespace) -> None:
    from biasrepro import dvc, plan

    text = plan.run(args.configfile, gpu=args.gpu, fmt=args.format, out=args.out,
                    costs=args.costs, repo=dvc.checkout_root())
    if args.out is None:
        print(text, end="")
    else:
        print(f"wrote {args.out}")


# -- parser -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="biasrepro",
        description="Reproduce BiasFinder and the toxicity bias/fairness study; "
        "each subcommand is one workflow step (see README.md).",
    )
    p.add_argument("--version", action="version", version=f"biasrepro {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument(
        "--gpus", type=int, metavar="N",
        help="claim N GPUs and set CUDA_VISIBLE_DEVICES to them (0: hide every GPU); "
        "the workflow passes each job's gpu resource (biasrepro.gpu)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def settings_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--settings",
            type=_settings,
            required=True,
            help="JSON object of dotted config keys, or a config YAML file",
        )

    w = sub.add_parser("world", help="generate the planted-bias world (embedded default data)",
                       description="Generate one corpus of the seeded planted-bias world "
                       "(docs/architecture.md) with its ground truth.")
    w.add_argument("corpus", choices=["reviews", "comments", "sst", "stereotypes", "benchmarks"])
    settings_arg(w)
    w.add_argument("--out-dir", type=Path, required=True)
    w.set_defaults(func=_world)

    d = sub.add_parser("download", help="download a file and verify it",
                       description="Download URL to OUT; refuse (and delete) anything "
                       "truncated, an HTML page, or not matching the pinned sha256 or git "
                       "blob id. A file pinned by neither is pinned by the lock file, where "
                       "its first download (only with --allow-unpinned) records it.")
    d.add_argument("--url", required=True)
    d.add_argument("--sha256", default=None, help="64 hex digits, or 'unpinned'")
    d.add_argument("--git-blob", default=None,
                   help="the file's git object id (40 hex digits: sha1 of 'blob SIZE\\0' + "
                   "bytes), as a repository's tree lists it")
    d.add_argument("--size", type=int, default=None, help="expected size in bytes")
    d.add_argument("--min-size", type=int, default=None,
                   help="smallest plausible size in bytes (catches error pages)")
    d.add_argument("--format", default=None,
                   help="the dataset format (txt, csv, json, zip, ...): what the bytes must "
                   "look like")
    d.add_argument("--lock", type=Path, default=None,
                   help="the downloads lock file (default: config/downloads.lock)")
    d.add_argument("--allow-unpinned", action="store_true",
                   help="download a file nothing pins and record it in the lock")
    d.add_argument("--out", type=Path, required=True)
    d.set_defaults(func=_download)

    pr = sub.add_parser("prepare", help="clean and split a raw dataset into Parquet",
                        description="Clean and split a raw dataset as the papers do "
                        "(README.md, 'Data stage').")
    pr.add_argument("dataset", choices=["imdb", "civil-comments", "sst"])
    pr.add_argument("--input", nargs="+", required=True,
                    help="raw file, or train=PATH test=PATH for split formats")
    pr.add_argument("--format", default=None,
                    help="imdb: aclimdb_tar|hf_parquet|tsv; civil-comments: "
                    "tfds|kaggle|wilds|csv|zip; sst: csv")
    pr.add_argument("--member", default=None, help="CSV member name inside a zip archive")
    pr.add_argument("--settings", type=_settings, default={},
                    help="civil-comments: keys seed, identities, preprocess.civil_comments")
    pr.add_argument("--out-dir", type=Path, required=True)
    pr.set_defaults(func=_prepare)

    s = sub.add_parser("summary", help="summarize the prepared datasets (JSON + Markdown)")
    s.add_argument("--data-dir", type=Path, required=True)
    settings_arg(s)
    s.add_argument("--out-json", type=Path, required=True)
    s.add_argument("--out-md", type=Path, required=True)
    s.set_defaults(func=_summary)

    pt = sub.add_parser("pretrain", help="build an embedded model: tokenizer + masked-LM",
                        description="Train a tokenizer of the architecture's own kind on the "
                        "corpus and pre-train a small model with masked-LM (safetensors).")
    pt.add_argument("--model", required=True, help="an embedded entry of models.registry")
    pt.add_argument("--corpus", nargs="+", required=True,
                    help="Parquet files with a `text` column")
    settings_arg(pt)
    pt.add_argument("--out-dir", type=Path, required=True)
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
    ft.add_argument("--out-dir", type=Path, nargs="+", required=True)
    ft.add_argument("--checkpoint-dir", type=Path, nargs="+", required=True)
    ft.add_argument("--seed", type=int, default=None,
                    help="this replicate's fine-tuning seed (config `seeds`): replaces `seed` "
                         "and any training setting's own seed")
    ft.add_argument("--sentdebias", nargs="+", default=None,
                    help="a SentenceDebias subspace file to attach before training "
                    "(upstream), or `none` (default: none for every run)")
    ft.set_defaults(func=_finetune)

    pd_ = sub.add_parser("predict", help="score a Parquet of texts with a saved model",
                         description="Write the positive-class probability and the label "
                         "for every row (identical texts are scored once). Several models "
                         "are loaded and score the inputs one after another, each as alone.")
    pd_.add_argument("--model", nargs="+", required=True,
                     help="model directory, registry name or Hub id (one or more)")
    pd_.add_argument("--input", type=Path, nargs="+", required=True,
                     help="Parquet file(s); several are scored in one pass")
    pd_.add_argument("--out", type=Path, nargs="+", required=True,
                     help="one output per model and input, model by model, inputs in order")
    pd_.add_argument("--text-column", default="text")
    pd_.add_argument("--max-length", type=int, default=None,
                     help="default: the model's training max_length, else 512")
    pd_.add_argument("--batch-tokens", type=int, default=None,
                     help="padded tokens per batch (default depends on the device)")
    pd_.add_argument("--settings", type=_settings, default=None,
                     help="config keys (models.registry) to resolve registry names")
    pd_.set_defaults(func=_predict)

    ev = sub.add_parser("evaluate", help="accuracy, ROC-AUC and F1 of a predictions file")
    ev.add_argument("--predictions", type=Path, required=True)
    ev.add_argument("--out", type=Path, required=True)
    ev.set_defaults(func=_evaluate)

    mt = sub.add_parser("metrics-table", help="classification metrics of many runs and "
                        "sets as one table",
                        description="Accuracy, ROC-AUC and F1 of every "
                        "results/predictions/TASK/MODEL/METHOD/SET.parquet (SET: test, "
                        "validation, fairness-original, fairness-balanced; as `evaluate` "
                        "computes them) in one JSON and one Markdown table.")
    mt.add_argument("--inputs", nargs="+", type=Path, required=True,
                    help="predictions (label, prob) from `predict`")
    mt.add_argument("--out-json", type=Path, required=True)
    mt.add_argument("--out-md", type=Path, required=True)
    mt.set_defaults(func=_metrics_table)

    c = sub.add_parser("config", help="validate configuration files")
    c.add_argument("action", choices=["validate"])
    c.add_argument("files", nargs="+", type=Path, help="merged left to right, as Snakemake does")
    c.set_defaults(func=_config_validate)

    dv = sub.add_parser("dvc-yaml", help="derive dvc.yaml from the Snakemake DAG",
                        description="Write (or --check) dvc.yaml: one DVC stage per "
                        "Snakemake job, with the config keys each rule reads as params. "
                        "Run it in the checkout (its config and workflow are used).")
    dv.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    dv.add_argument("--output", type=Path, default=Path("dvc.yaml"))
    dv.add_argument("--check", action="store_true", help="fail if the file is stale")
    dv.set_defaults(func=_dvc_yaml)

    dr = sub.add_parser("dvc-record", help="record a finished Snakemake run in DVC",
                        description="Write the outputs of a finished Snakemake run into "
                        "dvc.lock and the DVC cache (regenerating a stale dvc.yaml first), so "
                        "`dvc status` is clean; stages with missing outputs are left out. "
                        "The workflow runs it when a run succeeds (docs/dvc.md). Records "
                        "nothing, and says why, outside a DVC project in a git work tree, "
                        "without DVC, or for a run of another configuration than dvc.yaml's.")
    dr.add_argument("--run-configfiles", type=Path, nargs="*", default=[],
                    help="the --configfile values the run was given (none: the default)")
    dr.add_argument("--run-overrides", action="store_true",
                    help="the run was given --config values")
    dr.set_defaults(func=_dvc_record)

    pl = sub.add_parser("plan", help="the job matrix, its estimated GPU-hours and memory",
                        description="Print every job of the configuration's workflow (as "
                        "`snakemake -n --forceall` lists them, with one GPU per GPU job) per "
                        "rule: jobs, GPU jobs, GPU-hours estimated for one GPU of a class "
                        "(low: early stopping at its earliest; high: every configured "
                        "epoch), the rule's family and its largest job's estimated peak "
                        "memory against the family's mem_mb, from the cost model in "
                        "workflow/profiles/slurm/costs.yaml (src/biasrepro/plan.py). A job "
                        "whose estimate exceeds its mem_mb is named in a warning (stderr and "
                        "the Markdown table). Offline; nothing is downloaded or run.")
    pl.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    pl.add_argument("--gpu", default="h200",
                    help="GPU class of the estimate, a name under `gpus` in the cost model")
    pl.add_argument("--format", choices=["md", "csv"], default="md")
    pl.add_argument("--out", type=Path, default=None, help="write here (default: stdout)")
    pl.add_argument("--costs", type=Path, default=None,
                    help="cost model YAML (default: workflow/profiles/slurm/costs.yaml)")
    pl.set_defaults(func=_plan)

    from biasrepro.biasfinder import commands as biasfinder_commands

    biasfinder_commands.register(sub, _settings)
    from biasrepro.fairness import commands as fairness_commands
    from biasrepro.perturb import commands as perturb_commands

    perturb_commands.register(sub, _settings)
    fairness_commands.register(sub, _settings)
    from biasrepro.representation import commands as representation_commands

    representation_commands.register(sub, _settings)
    from biasrepro.analysis import commands as analysis_commands

    analysis_commands.register(sub, _settings)
    from biasrepro.data import leakage

    leakage.register(sub, _settings)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    start = time.perf_counter()
    try:
        if args.gpus is not None:
            gpu.place(args.gpus)
            gpu.warn_if_cpu_only(args.gpus)
        args.func(args)
    except BiasreproError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    log.info("%s finished in %.1f s", args.command, time.perf_counter() - start)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
