"""Group fairness of a classifier on a fairness set (toxicity paper §5, Eqs. 1–3).

Threshold-based: FPR_gap and TPR_gap, the absolute differences of false and true positive
rates between the marginalized and the non-marginalized groups of an attribute (Eqs. 1–2).
Threshold-agnostic: AUC_gap, the absolute difference of their ROC AUCs (Eq. 3). Where an
attribute has several marginalized groups (black and asian vs. white), their mean rate or
AUC stands for the marginalized side, as the paper does (§5.1).

Also Borkan et al. (2019)'s per-identity AUCs — subgroup AUC, BPSN (background positive,
subgroup negative) and BNSP (background negative, subgroup positive) — and their generalized
mean (power −5), which no peer tool computes on arbitrary data.

Every gap gets a seeded percentile bootstrap confidence interval, resampled one of two ways:

* ``stratified``: each group's rows resampled with replacement within the group (groups
  are independent samples, as in the original fairness set);
* ``paired``: whole clusters (the balanced set's source sentences, §5.1) resampled with
  replacement, each draw bringing all its rows — its counterfactual version in every group
  — so the groups' shared sentences stay paired (a cluster bootstrap; Davison & Hinkley
  1997, §3.8).

All resamples are drawn at once, with no Python loop per resample: stratified rates are sums
over an index matrix and AUCs come from row-wise ranks (Mann–Whitney); paired ones are sums
weighted by a resamples × clusters count matrix, AUCs a weighted Mann–Whitney count over
the group's sorted scores, in chunks of resamples. The interval is that of the signed
difference (marginalized − non-marginalized) mapped through ``|·|``, so it always holds the
gap (:func:`fairness_gaps`). A rate or AUC that a group cannot have (no negatives for FPR,
one class only for AUC) is NaN with its reason, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from biasrepro.errors import ConfigError, DataError, shown

#: the generalized-mean power of Borkan et al. (2019)
POWER = -5.0


def _check(labels: np.ndarray, probs: np.ndarray, groups: np.ndarray) -> None:
    if not len(labels) == len(probs) == len(groups):
        raise DataError(f"{len(labels)} labels, {len(probs)} probabilities and "
                        f"{len(groups)} groups: the columns must be equally long")
    bad = ~np.isin(labels, (0, 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise DataError(f"label {shown(labels[row - 1])} is not 0 or 1", row=row, column="label")
    bad = ~((probs >= 0) & (probs <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise DataError(f"probability {shown(probs[row - 1])} is outside [0, 1]", row=row,
                        column="prob")


def _auc(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """ROC AUC of each row of ``(k, n)`` label and score matrices (ties count one half);
    NaN for a row with one class only."""
    ranks = rankdata(probs, axis=-1)
    n_pos = labels.sum(axis=-1)
    n_neg = labels.shape[-1] - n_pos
    u = (ranks * labels).sum(axis=-1) - n_pos * (n_pos + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), u / (n_pos * n_neg), np.nan)


def _rates(labels: np.ndarray, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FPR and TPR along the last axis; NaN where a group has no negatives / positives."""
    pos = labels.sum(axis=-1)
    neg = labels.shape[-1] - pos
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr = np.where(neg > 0, (preds * (1 - labels)).sum(axis=-1) / neg, np.nan)
        tpr = np.where(pos > 0, (preds * labels).sum(axis=-1) / pos, np.nan)
    return fpr, tpr


def group_metrics(labels: Sequence[int], probs: Sequence[float], groups: Sequence[str], *,
                  threshold: float = 0.5) -> pd.DataFrame:
    """Per group: n, positives, negatives, FPR, TPR and AUC at ``threshold``, with a
    ``note`` saying why a value is NaN."""
    y, p, g = np.asarray(labels), np.asarray(probs, dtype=np.float64), np.asarray(groups)
    _check(y, p, g)
    rows = []
    for group in sorted(set(g.tolist())):
        sel = g == group
        yy, pp = y[sel].astype(np.int64), p[sel]
        fpr, tpr = _rates(yy, (pp >= threshold).astype(np.int64))
        auc = _auc(yy, pp)
        notes = [why for value, why in ((fpr, "no negatives: FPR undefined"),
                                        (tpr, "no positives: TPR undefined"),
                                        (auc, "one class only: AUC undefined"))
                 if np.isnan(value)]
        rows.append({"group": group, "n": int(sel.sum()), "positives": int(yy.sum()),
                     "negatives": int((1 - yy).sum()), "fpr": float(fpr), "tpr": float(tpr),
                     "auc": float(auc), "note": "; ".join(dict.fromkeys(notes))})
    return pd.DataFrame(rows)


def _signed_gap(table: Mapping[str, np.ndarray], marginalized: Sequence[str],
                non_marginalized: Sequence[str]) -> np.ndarray:
    """Mean over the marginalized groups − mean over the non-marginalized ones (§5.1); the
    gap of Eqs. 1–3 is its absolute value."""
    low = np.mean([table[g] for g in marginalized], axis=0)
    high = np.mean([table[g] for g in non_marginalized], axis=0)
    return low - high


def _attribute_groups(attributes: Mapping[str, Mapping[str, Sequence[str]]],
                      present: set[str]) -> dict[str, tuple[list[str], list[str]]]:
    out = {}
    for attr, sides in attributes.items():
        low, high = list(sides["marginalized"]), list(sides["non_marginalized"])
        if not low or not high:
            raise ConfigError(f"attributes.{attr}: needs a marginalized and a "
                              "non-marginalized group")
        missing = [g for g in (*low, *high) if g not in present]
        if missing:
            raise DataError(f"attribute {attr!r}: no row of group {missing[0]!r} in the "
                            "fairness set", column="group")
        out[attr] = (low, high)
    return out


Samples = dict[str, dict[str, np.ndarray]]
#: at most this many (resample, row) cells per chunk of the paired bootstrap
CHUNK_CELLS = 2 ** 21


def _stratified(y: np.ndarray, p: np.ndarray, g: np.ndarray, used: Sequence[str],
                threshold: float, resamples: int, rng: np.random.Generator) -> Samples:
    """Per metric and group, ``resamples`` values, each group's rows drawn within it."""
    boot: Samples = {"fpr": {}, "tpr": {}, "auc": {}}
    for group in used:
        idx = np.flatnonzero(g == group)
        yy, pp = y[idx], p[idx]
        draw = rng.integers(0, len(idx), size=(resamples, len(idx)))
        yb, pb = yy[draw], pp[draw]
        boot["fpr"][group], boot["tpr"][group] = _rates(yb, (pb >= threshold).astype(int))
        boot["auc"][group] = _auc(yb, pb)
    return boot


def _paired(y: np.ndarray, p: np.ndarray, g: np.ndarray, clusters: np.ndarray,
            used: Sequence[str], threshold: float, resamples: int,
            rng: np.random.Generator) -> Samples:
    """Per metric and group, ``resamples`` values, whole clusters drawn with replacement.

    A resample is a count per cluster (how often it was drawn); a row weighs its cluster's
    count. Rates are weighted sums; the AUC is the weighted Mann–Whitney count over the
    group's scores sorted once (ties count one half). Counts are whole numbers, so the sums
    are exact."""
    rows = np.isin(g, used)
    codes = np.full(len(g), -1, dtype=np.int64)
    _, codes[rows] = np.unique(clusters[rows], return_inverse=True)
    k = int(codes.max()) + 1
    prep = {}
    for group in used:
        idx = np.flatnonzero(g == group)
        idx = idx[np.argsort(p[idx], kind="stable")]
        ps = p[idx]
        ys = y[idx].astype(np.float64)
        pred = (ps >= threshold).astype(np.float64)
        starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
        prep[group] = (codes[idx], ys, ys * pred, (1 - ys) * pred, starts)
    boot: Samples = {m: {grp: np.empty(resamples) for grp in used}
                     for m in ("fpr", "tpr", "auc")}
    step = max(1, CHUNK_CELLS // max(int(rows.sum()), k))
    for begin in range(0, resamples, step):
        r = min(step, resamples - begin)
        draw = rng.integers(0, k, size=(r, k))
        counts = np.bincount((draw + k * np.arange(r)[:, None]).ravel(),
                             minlength=r * k).reshape(r, k).astype(np.float64)
        out = slice(begin, begin + r)
        for group, (code, ys, tp_row, fp_row, starts) in prep.items():
            w = counts[:, code]
            wp = w * ys
            wn = w - wp
            tp, fp = w @ tp_row, w @ fp_row
            pos, neg = wp.sum(axis=1), wn.sum(axis=1)
            if len(starts) < len(ys):                   # tied scores: one column per score
                wp = np.add.reduceat(wp, starts, axis=1)
                wn = np.add.reduceat(wn, starts, axis=1)
            below = np.cumsum(wn, axis=1) - wn
            u = np.einsum("ij,ij->i", wp, below + 0.5 * wn)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot["fpr"][group][out] = np.where(neg > 0, fp / neg, np.nan)
                boot["tpr"][group][out] = np.where(pos > 0, tp / pos, np.nan)
                boot["auc"][group][out] = np.where((pos > 0) & (neg > 0), u / (pos * neg),
                                                   np.nan)
    return boot


def _interval(point: float, samples: np.ndarray, alpha: float
              ) -> tuple[float, float, int, str]:
    """``(low, high, finite resamples, note)``: the interval of ``|d|`` from the signed
    point ``d`` and its bootstrap samples (see :func:`fairness_gaps`)."""
    finite = samples[np.isfinite(samples)]
    if not len(finite):
        return math.nan, math.nan, 0, ""
    a, b = (float(q) for q in np.quantile(finite, [alpha, 1 - alpha]))
    note = ""
    if math.isfinite(point) and not a <= point <= b:
        note = (f"point estimate outside the signed bootstrap interval [{a:.4g}, {b:.4g}]: "
                "widened to include it")
        a, b = min(a, point), max(b, point)
    if a <= 0 <= b:
        return 0.0, max(abs(a), abs(b)), len(finite), note
    return min(abs(a), abs(b)), max(abs(a), abs(b)), len(finite), note


def fairness_gaps(labels: Sequence[int], probs: Sequence[float], groups: Sequence[str],
                  attributes: Mapping[str, Mapping[str, Sequence[str]]], *,
                  threshold: float = 0.5, resamples: int = 1000, confidence: float = 0.95,
                  seed: int = 0, clusters: Sequence[Any] | None = None) -> pd.DataFrame:
    """FPR_gap, TPR_gap and AUC_gap per attribute (Eqs. 1–3) with bootstrap intervals.

    ``attributes`` maps an attribute to ``{"marginalized": [...], "non_marginalized":
    [...]}`` (the config key ``attributes``, Table 1). One row per attribute and metric:
    ``value`` on the data; ``low``/``high`` its interval from ``resamples`` seeded
    bootstrap resamples, ``resamples`` the number that defined the gap; ``resampling``
    ``stratified`` (each group's rows drawn within the group) or, when ``clusters`` gives
    one cluster id per row (the balanced set's ``source_id``), ``paired`` (whole clusters
    drawn, each with all its rows in every group); and a ``note`` when a group makes the
    metric undefined (then NaN) or the interval was widened.

    The interval: the percentile interval [a, b] of the signed difference d (marginalized
    mean − non-marginalized mean), mapped through ``|·|`` — [0, max(|a|, |b|)] when
    a ≤ 0 ≤ b, else [min(|a|, |b|), max(|a|, |b|)]. Percentile intervals respect monotone
    maps only (Efron & Tibshirani 1993, ch. 13); ``|·|`` is not one, and the percentile
    interval of |d| itself misses a gap of 0 whenever every resampled |d| is > 0. The image of
    [a, b] holds |δ| whenever [a, b] holds δ, so it keeps the signed interval's coverage
    and holds the reported gap. Where the signed percentile interval misses the signed
    point estimate (a skewed or nearly degenerate bootstrap distribution), it is widened
    to reach the point before the mapping, and the row's note says so.
    """
    if resamples < 1:
        raise ConfigError(f"resamples must be at least 1, not {resamples}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), not {confidence}")
    raw, p, g = np.asarray(labels), np.asarray(probs, dtype=np.float64), np.asarray(groups)
    _check(raw, p, g)
    if clusters is not None:
        cl = pd.Series(np.asarray(clusters, dtype=object))
        if len(cl) != len(g):
            raise DataError(f"{len(cl)} cluster ids for {len(g)} rows: one per row, please")
        if cl.isna().any():
            raise DataError("missing cluster id", row=int(np.flatnonzero(cl.isna())[0]) + 1,
                            column="source_id")
        cl = cl.astype(str).to_numpy()
    y, g = raw.astype(np.int64), g.astype(str)
    per_attr = _attribute_groups(attributes, set(g.tolist()))
    used = sorted({x for low, high in per_attr.values() for x in (*low, *high)})
    point: Samples = {"fpr": {}, "tpr": {}, "auc": {}}
    notes: dict[str, str] = {}
    for group in used:
        idx = np.flatnonzero(g == group)
        yy, pp = y[idx], p[idx]
        point["fpr"][group], point["tpr"][group] = _rates(yy, (pp >= threshold).astype(int))
        point["auc"][group] = _auc(yy, pp)
        for metric, why in (("fpr", "no negatives"), ("tpr", "no positives"),
                            ("auc", "one class only")):
            if np.isnan(point[metric][group]):
                notes[f"{metric}:{group}"] = f"group {group!r} has {why}"
    rng = np.random.default_rng(seed)
    if clusters is None:
        scheme, boot = "stratified", _stratified(y, p, g, used, threshold, resamples, rng)
    else:
        scheme, boot = "paired", _paired(y, p, g, cl, used, threshold, resamples, rng)
    alpha = (1 - confidence) / 2
    rows = []
    for attr, (low, high) in per_attr.items():
        for metric in ("fpr", "tpr", "auc"):
            signed = float(_signed_gap(point[metric], low, high))
            lo, hi, n, widened = _interval(signed, _signed_gap(boot[metric], low, high), alpha)
            reasons = [notes[f"{metric}:{x}"] for x in (*low, *high) if f"{metric}:{x}" in notes]
            rows.append({"attribute": attr, "metric": f"{metric.upper()}_gap",
                         "value": abs(signed), "low": lo, "high": hi, "resamples": n,
                         "resampling": scheme,
                         "note": "; ".join([*reasons, *([widened] if widened else [])])})
    return pd.DataFrame(rows)


def borkan_aucs(labels: Sequence[int], probs: Sequence[float],
                memberships: Mapping[str, Sequence[bool]]) -> pd.DataFrame:
    """Subgroup, BPSN and BNSP AUC per identity (Borkan et al. 2019, §3).

    ``memberships`` maps an identity to a boolean mask over the rows (a row may belong to
    several identities). Subgroup AUC uses the identity's rows; BPSN the identity's
    negatives with the background's (every other row's) positives; BNSP the identity's
    positives with the background's negatives. NaN, with a note, where a pair lacks a class.
    """
    raw, p = np.asarray(labels), np.asarray(probs, dtype=np.float64)
    _check(raw, p, np.zeros(len(p)))
    y = raw.astype(np.int64)
    rows = []
    for identity, mask in memberships.items():
        inside = np.asarray(mask, dtype=bool)
        if len(inside) != len(y):
            raise DataError(f"identity {identity!r}: {len(inside)} memberships for "
                            f"{len(y)} rows")
        out = ~inside
        subsets = {
            "subgroup_auc": inside,
            "bpsn_auc": (inside & (y == 0)) | (out & (y == 1)),
            "bnsp_auc": (inside & (y == 1)) | (out & (y == 0)),
        }
        row: dict[str, Any] = {"identity": identity, "n": int(inside.sum())}
        notes = []
        for name, sel in subsets.items():
            row[name] = float(_auc(y[sel], p[sel])) if sel.any() else float("nan")
            if np.isnan(row[name]):
                notes.append(f"{name}: one class only")
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows)


def generalized_mean(values: Sequence[float], power: float = POWER) -> float:
    """``(mean of v**power) ** (1/power)`` over the finite values (Borkan et al. 2019, §4:
    power −5 weighs the worst identity most); NaN when none is finite or one is 0."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if not len(v) or (power < 0 and (v <= 0).any()):
        return float("nan")
    return float(np.mean(v ** power) ** (1 / power))
