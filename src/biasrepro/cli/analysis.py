"""``biasrepro analysis ...``: turn the studies' results into what readers read.

Each step imports its module lazily so ``biasrepro --help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from biasrepro.cli.settings import OutputFile, OutputFolder


def _cross_study(args: argparse.Namespace) -> None:
    from biasrepro.analysis.cross_study import write_cross_study
    from biasrepro.config import need

    s = args.settings
    settings = {"threshold": need(s, "fairness.threshold"),
                "confidence": need(s, "fairness.bootstrap.confidence"),
                "attributes": need(s, "fairness.attributes")}
    write_cross_study(settings=settings, out_dir=args.out_dir, biasfinder=args.biasfinder,
                      sentiment_gaps=args.sentiment_gaps,
                      toxicity_balanced=args.toxicity_balanced,
                      toxicity_predictions=args.toxicity_predictions or (),
                      toxicity_gaps=args.toxicity_gaps)


def _add_cross_study(asub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    from pathlib import Path

    c = asub.add_parser("cross-study", help="BTC rates against group-fairness gaps",
                        description="BiasFinder BTC rates of every sentiment model x method, "
                        "BiasFinder-style BTCs of every toxicity model x method on the "
                        "balanced fairness set, and Pearson correlations (n, p, interval, "
                        "permutation p-values) of the BTC rate with the FPR/TPR/AUC gaps. "
                        "Give the sentiment inputs, the toxicity inputs, or both.")
    c.add_argument("--biasfinder", type=Path, help="BiasFinder's table4.csv (sentiment)")
    c.add_argument("--sentiment-gaps", type=Path, help="the sentiment fairness gaps.csv")
    c.add_argument("--toxicity-balanced", type=Path, help="the toxicity balanced fairness set")
    c.add_argument("--toxicity-predictions", type=Path, nargs="+",
                   help=".../MODEL/METHOD/fairness-balanced.parquet files (toxicity)")
    c.add_argument("--toxicity-gaps", type=Path, help="the toxicity fairness gaps.csv")
    c.add_argument("--settings", type=settings_type, required=True,
                   help="JSON object of dotted config keys, or a config YAML file "
                   "(fairness.threshold, fairness.bootstrap.confidence, fairness.attributes)")
    c.add_argument("--out-dir", type=OutputFolder, required=True)
    c.set_defaults(func=_cross_study)


def _controls(args: argparse.Namespace) -> None:
    from biasrepro.analysis.controls import Inputs, write_controls
    from biasrepro.config import need
    from biasrepro.errors import ConfigError

    restratify = {}
    if args.stratified is not None:
        if args.settings is None:
            raise ConfigError("--stratified needs --settings (identities, "
                              "preprocess.civil_comments.identity_threshold, "
                              "perturbation.restratify.target_ratio)")
        s = args.settings
        restratify = {
            "identities": tuple(need(s, "identities")),
            "identity_threshold": need(s, "preprocess.civil_comments.identity_threshold"),
            "target_ratio": need(s, "perturbation.restratify.target_ratio")}
    write_controls(Inputs(data_summary=args.data_summary, comments_truth=args.comments_truth,
                          reviews_truth=args.reviews_truth,
                          stereotypes_truth=args.stereotypes_truth,
                          biasfinder=args.biasfinder, toxicity=args.toxicity,
                          stratified=args.stratified, representation=args.representation,
                          sentiment=args.sentiment, toxicity_balanced=args.toxicity_balanced,
                          toxicity_predictions=tuple(args.toxicity_predictions or ()),
                          biasfinder_mutants=args.biasfinder_mutants,
                          biasfinder_predictions=tuple(args.biasfinder_predictions or ()),
                          occupation_mutants=args.occupation_mutants,
                          occupation_predictions=tuple(args.occupation_predictions or ()),
                          pretraining_truth=args.pretraining_truth,
                          **restratify),
                   args.out_dir)


def _add_controls(asub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    from pathlib import Path

    c = asub.add_parser("controls", help="the planted-bias controls: planted truth vs measured",
                        description="Compare what the embedded world plants (its ground-truth "
                        "files) with what the run measured; pass/fail per control. Controls "
                        "whose inputs are not given are listed as not run, with the reason.")
    for name, what in (("data-summary", "results/data/summary.json"),
                       ("comments-truth", "the world's civil_comments ground_truth.json"),
                       ("reviews-truth", "the world's imdb ground_truth.json"),
                       ("stereotypes-truth", "the world's stereotypes ground_truth.json"),
                       ("biasfinder", "BiasFinder's table4.csv"),
                       ("toxicity", "the toxicity fairness report.json (tables beside it)"),
                       ("stratified", "the re-stratified training set (Parquet)"),
                       ("representation", "Table 4's long table (representation table4.csv)"),
                       ("sentiment", "the sentiment fairness report.json (its gaps.csv says "
                        "which models the BiasFinder controls may read)"),
                       ("toxicity-balanced", "the toxicity balanced fairness set (Parquet)"),
                       ("biasfinder-mutants", "BiasFinder's gender mutants (Parquet)"),
                       ("occupation-mutants", "BiasFinder's occupation mutants (Parquet)"),
                       ("pretraining-truth", "the world's stereotypes ground_truth.json, the "
                        "embedded models' pre-training corpus (its attribute words are left "
                        "out of the held occupations)")):
        c.add_argument(f"--{name}", type=Path, default=None, help=what)
    c.add_argument("--toxicity-predictions", type=Path, nargs="+", default=None,
                   help=".../MODEL/METHOD/fairness-balanced.parquet files (toxicity)")
    c.add_argument("--biasfinder-predictions", type=Path, nargs="+", default=None,
                   help=".../predictions/MODEL/baseline/gender.parquet: the baseline sentiment "
                   "models' scores of BiasFinder's gender mutants")
    c.add_argument("--occupation-predictions", type=Path, nargs="+", default=None,
                   help=".../predictions/MODEL/baseline/occupation.parquet: the baseline "
                   "sentiment models' scores of BiasFinder's occupation mutants")
    c.add_argument("--settings", type=settings_type, default=None,
                   help="JSON object of dotted config keys, or a config YAML file (identities, "
                   "preprocess.civil_comments.identity_threshold, "
                   "perturbation.restratify.target_ratio; needed with --stratified)")
    c.add_argument("--out-dir", type=OutputFolder, required=True)
    c.set_defaults(func=_controls)


def _metrics(args: argparse.Namespace) -> None:
    from biasrepro.analysis.headline import Inputs, write_headline

    write_headline(Inputs(classification=args.classification, fairness=tuple(args.fairness),
                          biasfinder=args.biasfinder, representation=args.representation,
                          cross_study=args.cross_study, controls=args.controls), args.out)


def _add_metrics(asub: Any) -> None:
    from pathlib import Path

    m = asub.add_parser("metrics", help="headline numbers as one JSON for dvc metrics",
                        description="Collect the run's headline numbers (classification, "
                        "fairness gaps and SenseScore, BTC rates, representation bias, "
                        "cross-study, controls) into one nested JSON for `dvc metrics diff`.")
    m.add_argument("--classification", type=Path, help="results/metrics/classification.json")
    m.add_argument("--fairness", type=Path, nargs="*", default=[],
                   help="each task's fairness report.json")
    m.add_argument("--biasfinder", type=Path, help="BiasFinder's table4.csv")
    m.add_argument("--representation", type=Path, help="representation table4.csv")
    m.add_argument("--cross-study", type=Path, help="the cross-study's summary.json")
    m.add_argument("--controls", type=Path, help="controls.json")
    m.add_argument("--out", type=OutputFile, required=True)
    m.set_defaults(func=_metrics)


def _embedded_figures(args: argparse.Namespace) -> None:
    from biasrepro import config
    from biasrepro.analysis.embedded_figures import write_page

    files = [str(c) for c in args.config]
    figs = write_page(args.results, args.out,
                      config_sha256=config.config_sha256(config.load(*files)),
                      config_files=files)
    print(f"{len(figs)} figures written to {args.out}")


def _add_embedded_figures(asub: Any) -> None:
    from pathlib import Path

    e = asub.add_parser("embedded-figures", help="the docs' page of embedded-default figures",
                        description="Read the figures the documentation quotes from a run's "
                        "results and write them as one Markdown page "
                        "(docs/embedded-default.md), with the configuration's sha256.")
    e.add_argument("--results", type=Path, default=Path("results"),
                   help="the run's results folder (default: results)")
    e.add_argument("--config", type=Path, nargs="+", default=[Path("config/config.yaml")],
                   help="the configuration files the run used (default: config/config.yaml)")
    e.add_argument("--out", type=OutputFile, required=True)
    e.set_defaults(func=_embedded_figures)


def _record(args: argparse.Namespace) -> None:
    from biasrepro.analysis.record import write_record
    from biasrepro.config import need, optional

    write_record(out=args.out, config_sha256=args.config_sha256, configfiles=args.configfiles,
                 data=args.data, tables=args.tables, seed=need(args.settings, "seed"),
                 coreference=optional(args.settings, "biasfinder.coref", None))


def _add_record(asub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    from pathlib import Path

    r = asub.add_parser("record", help="the run record (REPRODUCTION.md)",
                        description="Write the run record: package versions, device, the "
                        "configuration's sha256, every data file's md5 (as DVC records it) "
                        "and sha256, and the run's comparison tables.")
    r.add_argument("--config-sha256", required=True,
                   help="sha256 of the resolved configuration (canonical JSON)")
    r.add_argument("--configfiles", nargs="+", required=True,
                   help="the configuration files the run merged")
    r.add_argument("--data", type=Path, nargs="+", required=True, help="the data files")
    r.add_argument("--tables", type=Path, nargs="*", default=[],
                   help="Markdown tables to include, in order")
    r.add_argument("--settings", type=settings_type, required=True,
                   help="JSON object of dotted config keys (seed), or a config YAML file")
    r.add_argument("--out", type=OutputFile, required=True)
    r.set_defaults(func=_record)


def _figures(args: argparse.Namespace) -> None:
    from biasrepro.analysis.figures import write_figures
    from biasrepro.errors import ConfigError

    reports = {task: path for task in ("toxicity", "sentiment")
               if (path := getattr(args, task)) is not None}
    if not reports and args.biasfinder is None:
        raise ConfigError("analysis figures: give --toxicity, --sentiment or --biasfinder")
    write_figures(reports=reports, biasfinder=args.biasfinder, out_dir=args.out_dir)


def _add_figures(asub: Any) -> None:
    from pathlib import Path

    f = asub.add_parser("figures", help="the studies' figures as PNG and SVG",
                        description="Per-identity training rows and positive ratios of each "
                        "data method, fairness gaps with bootstrap intervals, Pearson heatmaps "
                        "(per task), and BiasFinder BTC rates; each figure as PNG and SVG. "
                        "File names: biasrepro.analysis.figures.figure_names.")
    for task in ("toxicity", "sentiment"):
        f.add_argument(f"--{task}", type=Path, default=None,
                       help=f"the {task} fairness report.json (gaps.csv, training_groups.csv "
                       "and correlations.csv are read beside it)")
    f.add_argument("--biasfinder", type=Path, default=None, help="BiasFinder's table4.csv")
    f.add_argument("--out-dir", type=OutputFolder, required=True)
    f.set_defaults(func=_figures)


def _paper_tables(args: argparse.Namespace) -> None:
    from biasrepro.analysis.paper_tables import write_paper_tables
    from biasrepro.config import need

    keys = ["models.registry", "models.tasks", "methods.tasks"]
    keys += ["representation.models"] if args.representation is not None else []
    keys += ["biasfinder.methods"] if args.biasfinder is not None else []
    # the required keys, and every other key given (how the compared models were trained,
    # which rows the debiased training sets used): the tables' notes read them
    settings = {**args.settings, **{k: need(args.settings, k) for k in keys}}
    write_paper_tables(published=args.published, settings=settings,
                       out_dir=args.out_dir, biasfinder=args.biasfinder,
                       toxicity=args.toxicity, sentiment=args.sentiment,
                       representation=args.representation, classification=args.classification,
                       seeds=args.seeds)


def _add_paper_tables(asub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    from pathlib import Path

    p = asub.add_parser("paper-tables", help="the papers' tables, published values beside ours",
                        description="BiasFinder Table 4 and the toxicity paper's Tables 3-10 "
                        "and 12 (and the numbers of its text and appendix) rebuilt from our "
                        "results: per table a CSV (ours, published, difference, reason) and a "
                        "Markdown table in the paper's shape, plus index.md. Result inputs "
                        "are optional; cells they would fill then give the reason.")
    p.add_argument("--published", type=Path, required=True,
                   help="folder of biasfinder.csv and toxicity_fairness.csv (published/)")
    each = " (one per --seeds seed, in that order)"
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help="the fine-tuning seeds whose results are given: ours becomes their "
                   "mean ± sd, with the range")
    p.add_argument("--biasfinder", type=Path, nargs="+", default=None,
                   help="BiasFinder's table4.csv" + each)
    for task in ("toxicity", "sentiment"):
        p.add_argument(f"--{task}", type=Path, nargs="+", default=None,
                       help=f"the {task} fairness report.json (correlations.csv, "
                       "training_groups.csv and group_metrics.csv are read beside it)" + each)
    p.add_argument("--representation", type=Path, default=None,
                   help="representation table4.csv (Table 4's long table; pretrained "
                   "models, one for all seeds)")
    p.add_argument("--classification", type=Path, nargs="+", default=None,
                   help="results/metrics/classification.json (the AUC columns)" + each)
    p.add_argument("--settings", type=settings_type, required=True,
                   help="JSON object of dotted config keys, or a config YAML file "
                   "(models.registry, models.tasks, methods.tasks; representation.models "
                   "with --representation; biasfinder.methods with --biasfinder)")
    p.add_argument("--out-dir", type=OutputFolder, required=True)
    p.set_defaults(func=_paper_tables)


def _seeds(args: argparse.Namespace) -> None:
    from biasrepro.analysis.seeds import Replicate, per_seed, write_seed_tables
    from biasrepro.errors import ConfigError

    kinds = ("toxicity", "sentiment", "biasfinder", "classification", "cross_study")
    if all(getattr(args, k) is None for k in kinds):
        raise ConfigError("give at least one of --toxicity, --sentiment, --biasfinder, "
                          "--classification, --cross-study")
    given = {k: per_seed(getattr(args, k), len(args.seeds), k) for k in kinds}
    write_seed_tables([Replicate(seed, **{k: files[i] for k, files in given.items()})
                       for i, seed in enumerate(args.seeds)], args.out_dir)


def _add_seeds(asub: Any) -> None:
    from pathlib import Path

    p = asub.add_parser("seeds", help="every table across fine-tuning seeds, and the claims",
                        description="Mean, sample sd, range and each seed's value of every "
                        "cell of the fairness reports' tables, the classification metrics and "
                        "BiasFinder's Table 4, and the papers' qualitative claims with the "
                        "share of seeds in which each holds (claims.csv, seeds.md).")
    each = " (one per --seeds seed, in that order)"
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    for task in ("toxicity", "sentiment"):
        p.add_argument(f"--{task}", type=Path, nargs="+", default=None,
                       help=f"the {task} fairness report.json (its CSV tables are read "
                       "beside it)" + each)
    p.add_argument("--biasfinder", type=Path, nargs="+", default=None,
                   help="BiasFinder's table4.csv" + each)
    p.add_argument("--classification", type=Path, nargs="+", default=None,
                   help="metrics/classification.json" + each)
    p.add_argument("--cross-study", type=Path, nargs="+", default=None,
                   help="the cross-study's correlations.csv (toxicity_btc.csv is read beside "
                   "it)" + each)
    p.add_argument("--out-dir", type=OutputFolder, required=True)
    p.set_defaults(func=_seeds)


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``analysis STEP`` to the top-level parser's subparsers."""
    a = sub.add_parser("analysis", help="paper tables, figures, cross-study, controls, record",
                       description="Turn the studies' results into the papers' tables with "
                       "the published numbers beside ours, figures, the cross-study, the "
                       "planted-bias controls, headline metrics and the run record.")
    asub = a.add_subparsers(dest="step", required=True, metavar="STEP")
    _add_paper_tables(asub, settings_type)
    _add_figures(asub)
    _add_cross_study(asub, settings_type)
    _add_controls(asub, settings_type)
    _add_metrics(asub)
    _add_embedded_figures(asub)
    _add_record(asub, settings_type)
    _add_seeds(asub)
