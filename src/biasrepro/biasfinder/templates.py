"""Template generation driver over the characteristics (BiasFinder §3 Fig. 5).

Runs one characteristic's generator (Algorithm 1, 2 or 3) over parsed documents and builds
the templates table of the contract. Identical template texts are kept once, the first by
input order (duplicate reviews inflated the original's counts; biasfinder-original.md §7.9).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from biasrepro.biasfinder.placeholders import Candidate, keys
from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    check_text,
    ids,
    read_parquet,
    require_columns,
    write_parquet,
)
from biasrepro.nlp.parse import CONFIRM

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from biasrepro.biasfinder.wordlists import Wordlists

log = logging.getLogger(__name__)

CHARACTERISTICS = ("gender", "occupation", "country")
COLUMNS = ("template_id", "characteristic", "doc_id", "label", "original", "template",
           "original_class", "placeholders")


def _generator(characteristic: str) -> Callable[[Doc, Wordlists], list[Candidate]]:
    if characteristic == "gender":
        from biasrepro.biasfinder.gender import gender_templates
        return gender_templates
    if characteristic == "occupation":
        from biasrepro.biasfinder.occupation import occupation_templates
        return occupation_templates
    if characteristic == "country":
        from biasrepro.biasfinder.country import country_templates
        return country_templates
    raise ConfigError(f"unknown BiasFinder characteristic {characteristic!r} "
                      f"(expected one of {', '.join(CHARACTERISTICS)})")


def generate(docs: Sequence[Doc], characteristic: str, wordlists: Wordlists, *,
             max_templates: int | None = None, seed: int = 0,
             occupation_templates: str = "each_distinct",
             film_credits: str = "drop") -> pd.DataFrame:
    """The templates table for ``characteristic`` over parsed ``docs``, sorted by template_id.

    Each doc carries ``user_data["biasrepro"]`` with ``id``, ``label`` and ``coref``; where
    it also carries a confirming backend's clusters (``coref_confirm``,
    ``biasfinder.coref.confirm``), a template is kept only when those clusters give the very
    same template (precision first: two coreference systems must agree). A doc
    yielding several templates gets ids ``{characteristic}-{doc_id}-{k}`` (k from 1). With
    ``max_templates`` a seeded uniform sample of that many templates is kept.
    ``occupation_templates`` (``each_distinct`` or ``first``) is how many occupation
    templates one review gives and ``film_credits`` (``drop`` or ``keep``) whether an
    occupation used as a credit of the film ("the director") forms one
    (:func:`biasrepro.biasfinder.occupation.occupation_templates`).
    """
    make = _generator(characteristic)
    if characteristic == "occupation":
        from biasrepro.biasfinder.occupation import FILM_CREDITS, OCCUPATION_TEMPLATES
        if occupation_templates not in OCCUPATION_TEMPLATES:
            raise ConfigError(f"biasfinder.occupation.templates must be one of "
                              f"{', '.join(OCCUPATION_TEMPLATES)}, not "
                              f"{occupation_templates!r}")
        if film_credits not in FILM_CREDITS:
            raise ConfigError(f"biasfinder.occupation.film_credits must be one of "
                              f"{', '.join(FILM_CREDITS)}, not {film_credits!r}")
        make = functools.partial(make, templates=occupation_templates,
                                 film_credits=film_credits)
    if max_templates is not None and max_templates < 0:
        raise ConfigError(f"max_templates must be >= 0, not {max_templates}")
    rows = []
    for doc in docs:
        meta = doc.user_data["biasrepro"]
        found = make(doc, wordlists)
        if found and CONFIRM in meta:
            found = _confirmed(doc, found, make, wordlists)
        for k, cand in enumerate(found, start=1):
            suffix = f"-{k}" if len(found) > 1 else ""
            rows.append({
                "template_id": f"{characteristic}-{meta['id']}{suffix}",
                "characteristic": characteristic,
                "doc_id": str(meta["id"]),
                "label": int(meta["label"]),
                "original": doc.text,
                "template": cand.template,
                "original_class": cand.original_class,
                "placeholders": ",".join(keys(cand.template)),
            })
    df = pd.DataFrame(rows, columns=list(COLUMNS)).astype(
        {c: "int64" if c == "label" else "str" for c in COLUMNS})
    dup_id = df["template_id"].duplicated()
    if dup_id.any():
        raise DataError(f"duplicate document id gives template id "
                        f"{df['template_id'][dup_id].iloc[0]!r}", column="doc_id")
    found_n = len(df)
    df = df.drop_duplicates("template", keep="first")
    df = df.sort_values("template_id", kind="stable").reset_index(drop=True)
    corpus = max((d.user_data["biasrepro"].get("corpus", 0) for d in docs), default=0)
    corpus = max(corpus, len(docs))  # texts the parse skipped count: yield over the corpus
    log.info("%s templates: %d from a corpus of %d distinct texts (%d parsed): yield %.1f%% "
             "of the corpus; %d duplicate texts dropped", characteristic, len(df), corpus,
             len(docs), 100 * len(df) / max(corpus, 1), found_n - len(df))
    if max_templates is not None and len(df) > max_templates:
        keep = np.sort(np.random.default_rng(seed).choice(len(df), max_templates,
                                                          replace=False))
        df = df.iloc[keep].reset_index(drop=True)
        log.info("%s templates: sampled %d (seed %d)", characteristic, len(df), seed)
    return df


def _confirmed(doc: Doc, found: list[Candidate], make: Callable[..., list[Candidate]],
               wordlists: Wordlists) -> list[Candidate]:
    """The candidates the confirming backend's clusters give as well, text for text."""
    meta = doc.user_data["biasrepro"]
    primary = meta["coref"]
    meta["coref"] = meta[CONFIRM]
    try:
        confirmed = {c.template for c in make(doc, wordlists)}
    finally:
        meta["coref"] = primary
    return [c for c in found if c.template in confirmed]


def write_templates(df: pd.DataFrame, path: str | Path) -> None:
    """Write a templates table atomically as Parquet (contract column order)."""
    require_columns(list(df.columns), COLUMNS, file=path)
    with atomic_outputs(path) as (tmp,):
        write_parquet(df[list(COLUMNS)], tmp)


def read_templates(path: str | Path) -> pd.DataFrame:
    """Read a templates table; DataError naming the file (and a missing column, or the row
    of a missing or repeated template id or a missing characteristic)."""
    path = Path(path)
    df = read_parquet(path, what="Parquet templates table")
    require_columns(list(df.columns), COLUMNS, file=path)
    df = df.set_axis(pd.RangeIndex(1, len(df) + 1))
    checked = ids(df["template_id"], file=path, column="template_id")
    if not pd.api.types.is_string_dtype(df["template_id"]):
        df["template_id"] = checked
    check_text(df["characteristic"], file=path, column="characteristic")
    return df.reset_index(drop=True)
