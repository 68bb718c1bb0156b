"""One model's fairness on a fairness set, and the dataset bias of a training set.

* :func:`join_predictions` pairs a fairness set (``id``, ``label``, ``identity``, and for a
  balanced set ``source_id``) with a predictions file (``id``, ``label``, ``prob``) row for
  row, refusing mismatched ids or labels.
* :func:`evaluate` gives the per-group rates, the FPR/TPR/AUC gaps with bootstrap intervals
  (§5, Eqs. 1–3) and Borkan et al.'s subgroup/BPSN/BNSP AUCs with their power −5 means. On
  the balanced set the bootstrap is paired (whole source sentences resampled with all their
  counterfactual versions); on the original set it is stratified by group.
* :func:`sense_scores` gives SenseScore (§7.3, Eq. 6) per attribute pair over the balanced
  set's counterfactual versions of the same source sentence.
* :func:`dataset_bias` gives selection (Eq. 4) and overamplification (Eq. 5) bias and the
  per-group sizes and positive ratios behind the paper's Figures 3–5; for the sentiment
  appendix (membership from a ``gender`` column) also footnote 9's |N_m − N_f| / N.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasrepro.errors import DataError, shown
from biasrepro.io import check_fractions
from biasrepro.metrics.dataset_bias import group_counts, overamplification_bias, selection_bias
from biasrepro.metrics.group_fairness import (
    POWER,
    borkan_aucs,
    fairness_gaps,
    generalized_mean,
    group_metrics,
)

Attributes = Mapping[str, Mapping[str, Sequence[str]]]


def join_predictions(fairness_set: pd.DataFrame, predictions: pd.DataFrame, *,
                     file: str) -> pd.DataFrame:
    """The fairness set with the model's ``prob`` per row; ids must match one to one."""
    for column in ("id", "prob"):
        if column not in predictions.columns:
            raise DataError("missing required column", file=file, column=column)
    ids = predictions["id"].astype(str)
    if ids.duplicated().any():
        raise DataError(f"id {ids[ids.duplicated()].iloc[0]!r} occurs twice", file=file,
                        column="id")
    values = pd.to_numeric(predictions["prob"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~((values >= 0) & (values <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = predictions["prob"].iloc[row]
        value = value.item() if isinstance(value, np.generic) else value
        raise DataError(f"probability {value!r} is not in [0, 1]",
                        file=file, row=row + 1, column="prob")
    probs = pd.Series(values, index=ids)
    set_ids = fairness_set["id"].astype(str)
    missing = ~set_ids.isin(probs.index)
    if missing.any() or len(probs) != len(set_ids):
        example = set_ids[missing].iloc[0] if missing.any() else "(extra rows)"
        raise DataError(f"the predictions do not cover the fairness set's {len(set_ids)} rows "
                        f"one to one (first unmatched id: {example!r}); re-run predict on it",
                        file=file)
    out = fairness_set.assign(prob=probs.loc[set_ids].to_numpy())
    if "label" in predictions.columns:
        labels = pd.Series(predictions["label"].to_numpy(), index=ids).loc[set_ids].to_numpy()
        differ = labels != fairness_set["label"].to_numpy()
        if differ.any():
            row = int(np.flatnonzero(differ)[0])
            raise DataError(f"label {shown(labels[row])} differs from the fairness set's "
                            f"{shown(fairness_set['label'].iloc[row])} for id "
                            f"{shown(set_ids.iloc[row])}",
                            file=file, column="label")
    return out


def evaluate(frame: pd.DataFrame, attributes: Attributes, *, threshold: float,
             resamples: int, confidence: float, seed: int) -> dict[str, pd.DataFrame]:
    """``groups``, ``gaps`` and ``borkan`` tables of one model on one (joined) fairness set.

    The gaps' bootstrap (§5, Eqs. 1–3) is ``paired`` — whole source sentences resampled,
    each with its version in every group — when rows share a ``source_id`` (the balanced
    set's counterfactual versions), and ``stratified`` by group otherwise (the original set,
    where ``source_id`` is the row's own id); the gaps table's ``resampling`` column says
    which."""
    groups_in = sorted({g for sides in attributes.values() for side in sides.values()
                        for g in side})
    rows = frame[frame["identity"].isin(groups_in)]
    labels, probs = rows["label"].to_numpy(), rows["prob"].to_numpy()
    identity = rows["identity"].astype(str).to_numpy()
    clusters = None
    if "source_id" in rows.columns and rows["source_id"].duplicated().any():
        clusters = rows["source_id"].to_numpy()
    groups = group_metrics(labels, probs, identity, threshold=threshold)
    gaps = fairness_gaps(labels, probs, identity, attributes, threshold=threshold,
                         resamples=resamples, confidence=confidence, seed=seed,
                         clusters=clusters)
    borkan = borkan_aucs(labels, probs, {g: identity == g for g in groups_in})
    means = {"identity": f"power_mean_{POWER:g}", "n": int(len(rows))}
    for column in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
        means[column] = generalized_mean(borkan[column].to_numpy())
    means["note"] = "generalized mean over the identities (Borkan et al. 2019, p = -5)"
    borkan = pd.concat([borkan, pd.DataFrame([means])], ignore_index=True)
    return {"groups": groups, "gaps": gaps, "borkan": borkan}


def sense_scores(balanced: pd.DataFrame, pairs: Mapping[str, Sequence[str]],
                 attributes: Sequence[str]) -> pd.DataFrame:
    """SenseScore per attribute pair (g, ĝ): the source sentences written about g or ĝ, each
    scored in its g version and its ĝ version; Eq. 6 over ``f(ĝ version) − f(g version)``.

    ``sense_score_factual`` reads Eq. 6 literally instead: ``x`` is the version the sentence
    was written in and ``x̂`` its counterfactual, so sentences about g count ``f(ĝ) − f(g)``
    and sentences about ĝ count ``f(g) − f(ĝ)``. A model that favours one group then cancels
    out across the two directions, which is why ``sense_score`` fixes the direction (both
    are reported; docs/paper-protocols.md)."""
    from biasrepro.metrics.counterfactual import sense_score

    rows = []
    for attribute in attributes:
        if attribute not in pairs:
            continue
        g, g_hat = pairs[attribute]
        sub = balanced[balanced["source_identity"].isin([g, g_hat])
                       & balanced["identity"].isin([g, g_hat])]
        wide = sub.pivot_table(index="source_id", columns="identity", values="prob",
                               aggfunc="first")
        row: dict[str, Any] = {"attribute": attribute, "g": g, "g_hat": g_hat,
                               "n_pairs": 0, "sense_score": math.nan,
                               "mean_difference": math.nan,
                               "sense_score_factual": math.nan, "note": ""}
        if g not in wide.columns or g_hat not in wide.columns:
            row["note"] = f"no sentence of the balanced set is about {g!r} and {g_hat!r}"
        else:
            both = wide[[g, g_hat]].dropna()
            row["n_pairs"] = int(len(both))
            if len(both):
                row["sense_score"] = sense_score(both[g].to_numpy(), both[g_hat].to_numpy())
                row["mean_difference"] = float(np.mean(both[g_hat] - both[g]))
                source = sub.groupby("source_id")["source_identity"].first().loc[both.index]
                sign = np.where(source.to_numpy() == g, 1.0, -1.0)
                row["sense_score_factual"] = float(
                    abs(np.mean(sign * (both[g_hat] - both[g]).to_numpy())))
            else:
                row["note"] = "no source sentence has both versions"
        rows.append(row)
    return pd.DataFrame(rows, columns=["attribute", "g", "g_hat", "n_pairs", "sense_score",
                                       "mean_difference", "sense_score_factual", "note"])


def dataset_bias(train: pd.DataFrame, attributes: Attributes, *,
                 identity_threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Selection and overamplification bias per attribute, and n / positives per group.

    Group membership comes from the identity columns (``>= identity_threshold``; values
    must be fractions in [0, 1]), or from a ``gender`` column (IMDB-gendered). A table with
    only some identity columns is refused; one with none and no ``gender`` column gives NaN
    rows with a note.
    """
    groups = sorted({g for sides in attributes.values() for side in sides.values() for g in side})
    note = ""
    if all(g in train.columns for g in groups):
        check_fractions(train, groups)
        counts = group_counts(train, groups, identity_threshold)
    elif "gender" in train.columns:
        gender = train["gender"].astype(str)
        positive = train["label"].to_numpy() == 1
        counts = {g: {"n": int((gender == g).sum()),
                      "n_toxic": int(((gender == g).to_numpy() & positive).sum())}
                  for g in groups}
    elif any(g in train.columns for g in groups):
        missing = next(g for g in groups if g not in train.columns)
        raise DataError("missing identity column (the training set has some of the "
                        "attributes' identity columns but not all)", column=missing)
    else:
        counts = None
        note = "no identity annotation in this training set"
    if counts is None:
        bias = pd.DataFrame([{"attribute": a, "selection": math.nan,
                              "overamplification_raw": math.nan,
                              "overamplification": math.nan, "overamplification_share": math.nan,
                              "note": note} for a in attributes])
        return bias, pd.DataFrame(columns=["group", "n", "n_positive", "positive_ratio"])
    selection = selection_bias(counts, attributes)
    over = overamplification_bias(counts, attributes)
    total = len(train)
    rows = []
    for a, sides in attributes.items():
        sizes = [np.mean([counts[g]["n"] for g in sides[s]]) for s in sides]
        empty = [g for s in sides.values() for g in s if not counts[g]["n"]]
        rows.append({"attribute": a, "selection": selection[a],
                     "overamplification_raw": over[a]["raw"],
                     "overamplification": over[a]["normalized"],
                     "overamplification_share": abs(sizes[0] - sizes[1]) / total
                     if total else math.nan,
                     "note": f"no example of group(s) {', '.join(empty)}" if empty else ""})
    group_rows = [{"group": g, "n": c["n"], "n_positive": c["n_toxic"],
                   "positive_ratio": c["n_toxic"] / c["n"] if c["n"] else math.nan}
                  for g, c in counts.items()]
    return pd.DataFrame(rows), pd.DataFrame(group_rows)
