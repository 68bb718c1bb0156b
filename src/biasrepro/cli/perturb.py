"""``biasrepro perturb ...``: the fairness sets and debiased training sets.

* ``fairness-sets``: the original fairness set and its balanced version (§5.1);
* ``training``: a training set plus its counterfactuals (§6.6);
* ``restratify``: a training set plus synthetic positives per identity group (§6.4);
* ``imdb-gendered``: the sentiment appendix's IMDB-gendered split (Table 13).

Each reads Parquet, calls this package and writes its outputs in one atomic block.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from biasrepro.cli.settings import OutputFile, OutputFolder
from biasrepro.config import need, optional
from biasrepro.errors import ConfigError, in_file
from biasrepro.io import atomic_outputs, read_parquet, write_json, write_parquet

log = logging.getLogger(__name__)


def _attributes(settings: dict[str, Any], task: str) -> dict[str, Any]:
    """The task's attributes (``fairness.attributes.TASK``) with their Table 1 groups."""
    names = need(settings, f"fairness.attributes.{task}")
    every = need(settings, "attributes")
    missing = [a for a in names if a not in every]
    if missing:
        raise ConfigError(f"fairness.attributes.{task}: {missing[0]!r} is not in 'attributes'")
    return {a: every[a] for a in names}


def _swapper(settings: dict[str, Any], lexicon_path: Path, attributes: Mapping[str, Any]):
    from biasrepro.perturb.identity_lexicon import IdentityLexicon
    from biasrepro.perturb.identity_swap import Swapper, load_tagger

    lexicon = IdentityLexicon.load(lexicon_path, attributes)
    return Swapper(lexicon, attributes, nlp=load_tagger(need(settings,
                                                              "perturbation.spacy_model")))


def _fairness_sets(args: argparse.Namespace) -> None:
    from biasrepro.perturb.datasets import balanced_fairness_set, original_fairness_set

    attributes = _attributes(args.settings, args.task)
    frame = read_parquet(args.input, what="fairness set")
    original = original_fairness_set(frame, attributes, identity_column=args.identity_column,
                                     file=str(args.input))
    swapper = _swapper(args.settings, args.lexicon, attributes)
    with in_file(args.input):
        balanced, stats = balanced_fairness_set(frame, swapper, attributes,
                                                identity_column=args.identity_column)
    with atomic_outputs(args.out_original, args.out_balanced, args.stats) as tmp:
        write_parquet(original, tmp[0])
        write_parquet(balanced, tmp[1])
        write_json({"task": args.task, "input": str(args.input), **stats}, tmp[2])
    log.info("fairness sets (%s): %d original rows, %d balanced rows", args.task,
             len(original), len(balanced))


def _training(args: argparse.Namespace) -> None:
    from biasrepro.perturb.datasets import perturbed_training_set

    attributes = _attributes(args.settings, args.task)
    train = read_parquet(args.input, what="training data")
    swapper = _swapper(args.settings, args.lexicon, attributes)
    # a table with one group column (IMDB-gendered) has one group per row: nothing to select
    select = (optional(args.settings, "perturbation.select", "single_identity")
              if args.identity_column is None else "single_identity")
    with in_file(args.input):
        out, stats = perturbed_training_set(
            train, swapper, attributes, identities=need(args.settings, "identities"),
            identity_threshold=need(args.settings,
                                     "preprocess.civil_comments.identity_threshold"),
            identity_column=args.identity_column, select=select)
    with atomic_outputs(args.out, args.stats) as tmp:
        write_parquet(out, tmp[0])
        write_json({"task": args.task, "input": str(args.input), **stats}, tmp[1])
    log.info("perturbed training set (%s): %d rows -> %d rows", args.task, len(train), len(out))


def _model_dir(args: argparse.Namespace) -> str | None:
    """The masked LM's local directory: ``--model-dir``, or the registry entry's snapshot."""
    if args.model_dir:
        return str(args.model_dir)
    if not args.model:
        return None
    from biasrepro.data.download import hub_snapshot
    from biasrepro.models.load import resolve

    spec = resolve(args.model, need(args.settings, "models.registry"))
    if spec.is_local:
        return spec.location
    return hub_snapshot(spec.location, spec.revision or "main",
                        key="perturbation.restratify.model")


def _restratify(args: argparse.Namespace) -> None:
    from biasrepro.perturb.identity_lexicon import IdentityLexicon
    from biasrepro.perturb.restratify import make_augmenter, restratify

    s = args.settings
    settings = need(s, "perturbation.restratify")
    identities = need(s, "identities")
    seed = need(s, "seed")
    lexicon = IdentityLexicon.load(args.lexicon, need(s, "attributes"))
    protected = set(identities) | lexicon.words()
    train = read_parquet(args.input, what="training data")
    augment = make_augmenter(settings, model_dir=_model_dir(args), seed=seed,
                             protected=protected)
    select = settings.get("select", "identity_label")  # Eq. 4's membership (§6.3-6.4)
    threshold = (None if select == "single_identity" else
                 need(s, "preprocess.civil_comments.identity_threshold"))
    with in_file(args.input):
        out, stats = restratify(train, identities=identities, augment=augment,
                                target_ratio=settings["target_ratio"], seed=seed,
                                protected_words=protected, select=select,
                                identity_threshold=threshold)
    with atomic_outputs(args.out, args.stats) as tmp:
        write_parquet(out, tmp[0])
        write_json({"input": str(args.input), **stats}, tmp[1])
    log.info("re-stratified training set: %d rows -> %d rows", len(train), len(out))


def _imdb_gendered(args: argparse.Namespace) -> None:
    from biasrepro.data.imdb_gendered import build

    train = read_parquet(args.train, what="prepared IMDB training reviews")
    test = read_parquet(args.test, what="prepared IMDB test reviews")
    with in_file(f"{args.train}, {args.test}"):
        splits, stats = build(train, test, split=need(args.settings,
                                                       "preprocess.imdb_gendered.split"),
                              seed=need(args.settings, "seed"),
                              neutral_keywords=need(args.settings, "preprocess.imdb_gendered."
                                                    "neutral_keywords"))
    out = Path(args.out_dir)
    names = ("train", "validation", "test")
    with atomic_outputs(*(out / f"{n}.parquet" for n in names), out / "stats.json") as tmp:
        for name, path in zip(names, tmp, strict=False):
            write_parquet(splits[name], path)
        write_json({"inputs": [str(args.train), str(args.test)], **stats}, tmp[-1])
    log.info("IMDB-gendered: %s", {n: len(splits[n]) for n in names})


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``perturb`` and its subcommands to the top-level parser's subparsers."""

    def common(sp: argparse.ArgumentParser, *, task: bool = True) -> None:
        sp.add_argument("--input", type=Path, required=True)
        sp.add_argument("--lexicon", type=Path, required=True,
                        help="aligned identity terms (wordlists/identity_terms.csv)")
        sp.add_argument("--settings", type=settings_type, required=True,
                        help="JSON object of dotted config keys, or a config YAML file")
        if task:
            sp.add_argument("--task", required=True, choices=["toxicity", "sentiment"])

    pt = sub.add_parser("perturb", help="fairness sets and debiased training sets",
                        description="Counterfactual perturbation and re-stratification "
                        "(Elsafoury & Katsigiannis, sections 5.1, 6.4, 6.6, appendix).")
    psub = pt.add_subparsers(dest="step", required=True, metavar="STEP")

    f = psub.add_parser("fairness-sets", help="the original and the balanced fairness set",
                        description="Keep the single-identity rows (original) and add every "
                        "row's counterfactual into each other group of its attribute "
                        "(balanced: equal contexts and positive ratios across the groups).")
    common(f)
    f.add_argument("--identity-column", default="identity")
    f.add_argument("--out-original", type=OutputFile, required=True)
    f.add_argument("--out-balanced", type=OutputFile, required=True)
    f.add_argument("--stats", type=Path, required=True)
    f.set_defaults(func=_fairness_sets)

    t = psub.add_parser("training", help="a training set plus its counterfactuals",
                        description="Add a counterfactual of every selected identity row "
                        "(perturbation.select) into each other group of its attribute (the "
                        "perturbed training set).")
    common(t)
    t.add_argument("--identity-column", default=None,
                   help="group column (e.g. gender) instead of identity columns")
    t.add_argument("--out", type=OutputFile, required=True)
    t.add_argument("--stats", type=Path, required=True)
    t.set_defaults(func=_training)

    r = psub.add_parser("restratify", help="a training set plus synthetic positives",
                        description="Add synthetic positives (nlpaug word substitution) until "
                        "every identity group's positive ratio reaches the target.")
    common(r, task=False)
    r.add_argument("--model-dir", type=Path, default=None,
                   help="masked LM directory for the contextual augmenter")
    r.add_argument("--model", default=None,
                   help="registry name of the masked LM (hub models are fetched pinned)")
    r.add_argument("--out", type=OutputFile, required=True)
    r.add_argument("--stats", type=Path, required=True)
    r.set_defaults(func=_restratify)

    g = psub.add_parser("imdb-gendered", help="the appendix's IMDB-gendered split",
                        description="Label prepared IMDB reviews male/female/neutral by the "
                        "Table 13 keywords, keep male and female, split stratified: train and "
                        "validation from IMDB's training reviews, test from its test reviews.")
    g.add_argument("--train", type=Path, required=True, help="prepared IMDB train split")
    g.add_argument("--test", type=Path, required=True, help="prepared IMDB test split")
    g.add_argument("--settings", type=settings_type, required=True)
    g.add_argument("--out-dir", type=OutputFolder, required=True)
    g.set_defaults(func=_imdb_gendered)
