"""The study's Pearson tables, grouped as the toxicity paper groups them.

* ``fairness_metrics`` (§5.2): ρ between FPR_gap, TPR_gap and AUC_gap over the baseline
  models' (model, attribute) points, once on the original and once on the balanced set.
* ``bias_vs_fairness`` (§6.1–6.5, Table 9): per model, ρ between each source of bias
  (selection, overamplification; CrowS-Pairs, StereoSet and SEAT as ``representation_*``)
  of the baseline and each fairness gap, over the attributes (three points, as the paper);
  plus the same over all models pooled; on the balanced set (Table 9) and the original one
  (Figure 2 compares the two). One training set, so overamplification is Eq. 5
  max-normalised within it (x ``overamplification``), as §6.5 reports it.
* ``bias_vs_fairness_across_methods`` (this harness): per model, over every (method,
  attribute) point, the bias of the method's training data against the model's gap — more
  points than the paper's three. Training sets are compared with each other, so
  overamplification is Eq. 5 unnormalised (x ``overamplification_raw``): normalised within
  each set, a debiased set would score 1.0 on its worst attribute like the baseline.

Every ρ carries n, a p-value, a Fisher-z interval, the distinct x and y counts and
permutation p-values (:func:`metrics.correlation.pearson`): the pooled Table 9 row has 9
points but 3 distinct x. The table is one family of tests: ``p_value_bh`` and
``p_cluster_bh`` are Benjamini–Hochberg adjusted over all its rows
(:func:`metrics.correlation.adjust`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import pandas as pd

from biasrepro.errors import DataError
from biasrepro.metrics.correlation import adjust, pearson

METRICS = ("FPR_gap", "TPR_gap", "AUC_gap")
#: dataset-bias columns (of the bias table) correlated within one training set: Eq. 4, and
#: Eq. 5 max-normalised within the set
DATASET_SOURCES = ("selection", "overamplification")
#: the same across training sets: Eq. 4, and Eq. 5 unnormalised
ACROSS_METHOD_SOURCES = ("selection", "overamplification_raw")
COLUMNS = ["group", "model", "fairness_set", "x", "y", "rho", "n", "p_value", "low", "high",
           "distinct_x", "distinct_y", "p_permutation", "permutations", "p_cluster",
           "cluster_permutations", "points", "note"]


def _row(group: str, model: str, fairness_set: str, x: str, y: str, merged: pd.DataFrame,
         points: str) -> dict[str, Any]:
    return {"group": group, "model": model, "fairness_set": fairness_set, "x": x, "y": y,
            **pearson(merged["x"].to_numpy(), merged["y"].to_numpy()), "points": points}


def _gap_table(gaps: pd.DataFrame) -> pd.DataFrame:
    """``(model, method, fairness_set, attribute)`` rows with one column per gap metric."""
    return gaps.pivot_table(index=["model", "method", "fairness_set", "attribute"],
                            columns="metric", values="value", aggfunc="first",
                            dropna=False).reset_index()


def _bias_long(bias: pd.DataFrame, representation: pd.DataFrame | None,
               models: Sequence[str]) -> pd.DataFrame:
    """Bias scores as ``(model, method, attribute, source, value)``; dataset bias holds for
    every model trained on that data, representation bias is per (model, method)."""
    rows = [
        {"model": m, "method": r["method"], "attribute": r["attribute"], "source": source,
         "value": r[source]}
        for m in models for r in bias.to_dict("records")
        for source in dict.fromkeys((*DATASET_SOURCES, *ACROSS_METHOD_SOURCES))
    ]
    out = pd.DataFrame(rows, columns=["model", "method", "attribute", "source", "value"])
    if representation is not None and len(representation):
        out = pd.concat([out, representation[out.columns]], ignore_index=True)
    return out


def correlation_table(gaps: pd.DataFrame, bias: pd.DataFrame, *, baseline: str = "baseline",
                      representation: pd.DataFrame | None = None) -> pd.DataFrame:
    """All three groups of correlations (module docstring) as one tidy table.

    ``gaps``: model, method, fairness_set, attribute, metric, value. ``bias``: method,
    attribute, selection, overamplification, overamplification_raw. ``representation``
    (optional): model, method, attribute, source, value.
    """
    for column in ("method", "attribute", *DATASET_SOURCES, *ACROSS_METHOD_SOURCES):
        if column not in bias.columns:
            raise DataError("the dataset-bias table lacks a column the correlations need",
                            column=column)
    wide = _gap_table(gaps)
    models = sorted(wide["model"].unique())
    rows: list[dict[str, Any]] = []
    base = wide[wide["method"] == baseline]
    for fset in sorted(base["fairness_set"].unique()):
        sub = base[base["fairness_set"] == fset]
        for a, b in combinations(METRICS, 2):
            merged = sub.rename(columns={a: "x", b: "y"})
            rows.append(_row("fairness_metrics", "all", fset, a, b, merged,
                             "baseline model x attribute"))
    long = _bias_long(bias, representation, models)
    for fset in sorted(wide["fairness_set"].unique()):  # Figure 2: original vs balanced
        on_set = wide[wide["fairness_set"] == fset]
        for source in long["source"].unique():
            scores = long[long["source"] == source]
            merged_all = on_set.merge(scores, on=["model", "method", "attribute"])
            across = source not in DATASET_SOURCES or source in ACROSS_METHOD_SOURCES
            within = source not in ACROSS_METHOD_SOURCES or source in DATASET_SOURCES
            for metric in METRICS:
                at_base = merged_all[merged_all["method"] == baseline]
                for model in [*models, "all"] if within else []:
                    one = at_base if model == "all" else at_base[at_base["model"] == model]
                    rows.append(_row("bias_vs_fairness", model, fset, source, metric,
                                     one.rename(columns={"value": "x", metric: "y"}),
                                     "attribute" if model != "all" else "model x attribute"))
                for model in models if across else []:
                    one = merged_all[merged_all["model"] == model]
                    rows.append(_row("bias_vs_fairness_across_methods", model, fset, source,
                                     metric, one.rename(columns={"value": "x", metric: "y"}),
                                     "method x attribute"))
    return adjust(pd.DataFrame(rows, columns=COLUMNS))
