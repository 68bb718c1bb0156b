"""Leakage check: no trained model is scored on a text it was fitted on.

For every task × model × method, the texts the model was fitted on (its training data and
the validation split that selects its checkpoint) are compared with every set the workflow
scores it on (the task's test split, the fairness sets, BiasFinder's corpus and mutants,
IMDB-gendered's test splits). The toxicity paper's appendix splits IMDB-gendered into
train, validation and test parts; a model evaluated on a text it trained on would report
memorisation, not generalisation.

Texts are compared after Unicode NFC normalisation and whitespace folding (every run of
whitespace becomes one space, ends stripped); case and punctuation are kept, so the match
is exact up to spacing. Each text is hashed once (pandas' 64-bit ``hash_array``); hash
matches are confirmed by comparing the texts themselves, so a collision cannot count.

An overlapping text is a **shared row** when a fitted row and a scored row come from the
same source row (same ``source_id``, else ``id``): a data-flow error, always fatal. Else it
is an **identical text** of distinct rows (a corpus that repeats itself, or a counterfactual
that happens to equal another row); the plan's ``identical_texts`` policy (``fail`` or
``report``) decides whether those stop the run. Either way every count is in the report.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.errors import ConfigError, DataError
from biasrepro.io import (
    atomic_outputs,
    dumps_json,
    markdown_table,
    read_parquet,
    require_columns,
    write_text,
)

log = logging.getLogger(__name__)

POLICIES = ("fail", "report")
COLUMNS = ["model", "method", "fitted", "scored", "texts", "shared_rows", "identical_texts"]


def normalise(texts: pd.Series | Sequence[str]) -> pd.Series:
    """NFC, whitespace folded to single spaces, ends stripped; case kept."""
    series = pd.Series(list(texts), dtype=object)
    return series.map(lambda t: " ".join(unicodedata.normalize("NFC", t).split()))


def text_hashes(normalised: pd.Series) -> np.ndarray:
    """64-bit hashes of normalised texts (``pandas.util.hash_array``)."""
    return pd.util.hash_array(normalised.to_numpy(dtype=object), categorize=False)


class TextSet:
    """The normalised texts of one file, their hashes and source-row keys."""

    def __init__(self, name: str, path: str | Path) -> None:
        self.name, self.path = name, str(path)
        df = read_parquet(path, what=f"{name} set")
        require_columns(list(df.columns), ["text"], file=path)
        bad = ~df["text"].map(lambda t: isinstance(t, str)).to_numpy(dtype=bool)
        if bad.any():
            raise DataError("text is missing", file=path, row=int(np.argmax(bad)) + 1,
                            column="text")
        key = next((c for c in ("source_id", "id") if c in df.columns), None)
        self.frame = pd.DataFrame({
            "norm": normalise(df["text"]).to_numpy(dtype=object),
            "key": (df[key].astype(str).to_numpy(dtype=object) if key
                    else np.full(len(df), None, dtype=object)),
        })
        self.frame["hash"] = text_hashes(self.frame["norm"])
        self.rows = len(df)


def overlap(fitted: TextSet, scored: TextSet) -> dict[str, Any]:
    """Texts in both sets: how many, how many come from a shared source row, examples."""
    common = np.intersect1d(fitted.frame["hash"].to_numpy(), scored.frame["hash"].to_numpy())
    a = fitted.frame[fitted.frame["hash"].isin(common)]
    b = scored.frame[scored.frame["hash"].isin(common)]
    pairs = a.merge(b, on="norm", suffixes=("_fit", "_scored"))  # confirms hash matches
    texts = pairs["norm"].drop_duplicates()
    same = pairs["key_fit"].notna() & (pairs["key_fit"] == pairs["key_scored"])
    shared = pairs.loc[same, "norm"].drop_duplicates()
    return {"texts": int(len(texts)), "shared_rows": int(len(shared)),
            "identical_texts": int(len(texts) - len(shared)),
            "examples": [t[:120] for t in sorted(texts)[:3]]}


def _check_plan(plan: Mapping[str, Any], identical_texts: str) -> None:
    for key in ("task", "methods"):
        if key not in plan:
            raise ConfigError(f"leakage plan: key {key!r} is missing")
    if identical_texts not in POLICIES:
        raise ConfigError(f"leakage.identical_texts.{plan['task']}: {identical_texts!r} is "
                          f"not one of {', '.join(POLICIES)}")
    for i, m in enumerate(plan["methods"]):
        for key in ("method", "models", "fitted", "scored"):
            if key not in m:
                raise ConfigError(f"leakage plan: methods[{i}] has no {key!r}")


def check(plan: Mapping[str, Any], *, identical_texts: str = "fail") -> dict[str, Any]:
    """Compare every method's fitted sets with every set it is scored on (each file read
    and hashed once). ``plan``: ``task`` and ``methods``: [{method, models, fitted: {name:
    path}, scored: {name: path}}]; ``identical_texts``: fail | report."""
    _check_plan(plan, identical_texts)
    cache: dict[tuple[str, str], TextSet] = {}

    def load(name: str, path: str) -> TextSet:
        if (name, path) not in cache:
            cache[(name, path)] = TextSet(name, path)
        return cache[(name, path)]

    pairs: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    rows = []
    for m in plan["methods"]:
        for fit_name, fit_path in m["fitted"].items():
            for sc_name, sc_path in m["scored"].items():
                key = (fit_name, fit_path, sc_name, sc_path)
                if key not in pairs:
                    pairs[key] = overlap(load(fit_name, fit_path), load(sc_name, sc_path))
                result = pairs[key]
                fatal = bool(result["shared_rows"] or (identical_texts == "fail"
                                                       and result["identical_texts"]))
                for model in m["models"]:
                    rows.append({"model": model, "method": m["method"], "fitted": fit_name,
                                 "scored": sc_name, "fitted_file": fit_path,
                                 "scored_file": sc_path, "fatal": fatal, **result})
    return {"task": plan["task"], "normalisation": "NFC, whitespace folded, case-sensitive",
            "identical_texts_policy": identical_texts,
            "files": {f"{n}={p}": s.rows for (n, p), s in sorted(cache.items())},
            "passed": not any(r["fatal"] for r in rows), "pairs": rows}


def failure_message(report: Mapping[str, Any]) -> str:
    """One line per failing model × method × pair of sets."""
    lines = []
    for r in report["pairs"]:
        if r["fatal"]:
            lines.append(f"{report['task']} {r['model']} {r['method']}: {r['texts']} text(s) "
                         f"of {r['fitted']} ({r['fitted_file']}) are also in {r['scored']} "
                         f"({r['scored_file']}): {r['shared_rows']} from shared rows, "
                         f"{r['identical_texts']} identical texts of distinct rows; "
                         f"e.g. {r['examples'][0]!r}")
    return "training/evaluation leakage:\n  " + "\n  ".join(lines)


def markdown(report: Mapping[str, Any]) -> str:
    rows = [r for r in report["pairs"] if r["texts"]]
    head = (f"# Leakage check: {report['task']}\n\n"
            f"Fitted texts (training data, validation split) against every set each model "
            f"is scored on; texts compared {report['normalisation']}. Identical texts of "
            f"distinct rows: policy `{report['identical_texts_policy']}`. "
            f"{'Passed' if report['passed'] else 'FAILED'}: "
            f"{len(report['pairs'])} pairs of sets checked, {len(rows)} with an overlap.\n\n")
    return head + (markdown_table(rows, COLUMNS) if rows else "No overlap.\n")


def write(plan: Mapping[str, Any], *, identical_texts: str, out_json: Path,
          out_md: Path) -> dict[str, Any]:
    """Run :func:`check`; write the report, or raise :class:`DataError` (nothing written)
    when a fatal overlap is found."""
    with atomic_outputs(out_json, out_md) as (tmp_json, tmp_md):  # a failure removes both
        report = check(plan, identical_texts=identical_texts)
        if not report["passed"]:
            raise DataError(failure_message(report))
        write_text(dumps_json(report), tmp_json)
        write_text(markdown(report), tmp_md)
    n = sum(r["texts"] for r in report["pairs"])
    log.info("leakage check (%s): %d pairs of sets, %d overlapping text(s) reported",
             report["task"], len(report["pairs"]), n)
    return report
