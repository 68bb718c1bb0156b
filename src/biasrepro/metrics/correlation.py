"""Pearson correlations between bias and fairness scores (toxicity paper §5.2, §6, Table 9).

The paper reports Pearson's ρ between fairness metrics, and between dataset or
representation bias scores and fairness scores, each over a handful of points (three
attributes). Every ρ here comes with its n, a two-sided p-value (scipy), and a Fisher-z
confidence interval, so that a ρ of 0.98 on three points reads as what it is.

The scipy p-value and the Fisher-z interval assume n independent pairs. Pooled points
often share an x (every model trained on one set has that set's dataset bias: 9 points,
3 distinct x), so each ρ also carries:

* ``distinct_x``, ``distinct_y``: how many different values each side takes;
* ``p_permutation``: two-sided permutation p-value, ``y`` shuffled over the points (the
  null of no association; ties in x or y change nothing);
* ``p_cluster``: the same with the distinct x values shuffled over their clusters (the
  points sharing an x move together), so a cluster counts once. With k distinct x the
  smallest possible value is 1/k! — 1/6 for three (2/k! for evenly spaced x, whose
  reversal gives −ρ). It is ``p_permutation`` when every x is distinct.

Both tests count permutations whose |ρ| is at least the observed |ρ|. They enumerate every
permutation when there are at most ``EXACT_LIMIT`` (p = count / all, the identity
included), else draw ``PERMUTATIONS`` at random from a seeded generator
(p = (1 + count) / (1 + draws)); ``permutations`` / ``cluster_permutations`` say which.
ρ itself keeps its sign.

A table of many correlations is many tests: :func:`adjust` adds, beside ``p_value`` and
``p_cluster``, Benjamini–Hochberg adjusted values (``p_value_bh``, ``p_cluster_bh``: the
false discovery rate over every defined p of the table, scipy's
``false_discovery_control``), so a handful of p < 0.05 among hundreds of tests reads as
what it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from itertools import permutations as all_orders
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from biasrepro.errors import DataError

#: permutation tests enumerate every ordering up to this many (9! = 362,880: 9 points)
EXACT_LIMIT = 362_880
#: random orderings drawn beyond ``EXACT_LIMIT``
PERMUTATIONS = 10_000
#: the generator's seed for the random orderings
SEED = 0
#: the p-value columns :func:`adjust` corrects, and the suffix of their adjusted columns
ADJUSTED = ("p_value", "p_cluster")
BH = "_bh"
#: cells (orderings x points) scored at a time, to bound memory
_CHUNK = 2_000_000


@lru_cache(maxsize=4)
def _every_order(k: int) -> np.ndarray:
    """All ``k!`` orderings of ``range(k)``, one per row (identity first)."""
    return np.array(list(all_orders(range(k))), dtype=np.int16).reshape(-1, k)


def _permutation_p(values: np.ndarray, labels: np.ndarray | None, y: np.ndarray, rho: float,
                   *, draws: int, seed: int) -> tuple[float, str]:
    """Two-sided p of ρ when ``values`` are shuffled, point i taking ``values[labels[i]]``
    (``labels`` None: ``values[i]``)."""
    k = len(values)
    exact = math.factorial(k) <= EXACT_LIMIT
    yc = y - y.mean()
    y_norm = math.sqrt(float(yc @ yc))
    target = abs(rho) * (1 - 1e-12) - 1e-12  # the observed ordering counts despite rounding
    total = math.factorial(k) if exact else draws
    rng = None if exact else np.random.default_rng(seed)
    step = max(1, _CHUNK // max(len(y), 1))
    hits = 0
    for start in range(0, total, step):
        size = min(step, total - start)
        if exact:
            orders = _every_order(k)[start:start + size]
        else:
            orders = rng.permuted(np.tile(np.arange(k), (size, 1)), axis=1)
        xs = values[orders] if labels is None else values[orders][:, labels]
        xs = xs - xs.mean(axis=1, keepdims=True)
        norms = np.sqrt(np.einsum("ij,ij->i", xs, xs)) * y_norm
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (xs @ yc) / norms
        hits += int(np.count_nonzero(np.abs(r) >= target))
    if exact:
        return hits / total, f"exact ({total} orderings)"
    return (1 + hits) / (1 + total), f"random ({total} orderings, seed {seed})"


def pearson(x: Sequence[float], y: Sequence[float], *, confidence: float = 0.95,
            permutations: int = PERMUTATIONS, seed: int = SEED) -> dict[str, Any]:
    """ρ, n, p-value and the Fisher-z interval of Pearson's correlation of ``x`` and ``y``,
    with the distinct counts and permutation p-values of the module docstring.

    Pairs with a NaN on either side are left out (n counts the rest). With n < 3 or a
    constant side, ρ is undefined: the result has NaNs and a ``note`` saying why. The
    interval needs n > 3 (its standard error is 1/sqrt(n − 3)); where x has ties the note
    says that the scipy p-value and the interval treat the points as independent.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError(f"a correlation needs paired values: got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(len(a))
    out: dict[str, Any] = {"rho": math.nan, "n": n, "p_value": math.nan, "low": math.nan,
                           "high": math.nan, "distinct_x": int(len(np.unique(a))),
                           "distinct_y": int(len(np.unique(b))), "p_permutation": math.nan,
                           "permutations": "", "p_cluster": math.nan,
                           "cluster_permutations": "", "note": ""}
    if n < 3:
        out["note"] = f"{n} paired values: at least 3 are needed"
        return out
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        out["note"] = "one side is constant: the correlation is undefined"
        return out
    result = stats.pearsonr(a, b)
    out["rho"], out["p_value"] = float(result.statistic), float(result.pvalue)
    notes = []
    if n > 3:
        z, se = math.atanh(max(min(out["rho"], 1 - 1e-15), -1 + 1e-15)), 1 / math.sqrt(n - 3)
        half = stats.norm.ppf(0.5 + confidence / 2) * se
        out["low"], out["high"] = math.tanh(z - half), math.tanh(z + half)
    else:
        notes.append("3 paired values: no confidence interval (it needs n > 3)")
    out["p_permutation"], out["permutations"] = _permutation_p(
        a, None, b, out["rho"], draws=permutations, seed=seed)
    out["p_cluster"], out["cluster_permutations"] = out["p_permutation"], out["permutations"]
    if out["distinct_x"] < n:
        values, labels = np.unique(a, return_inverse=True)
        out["p_cluster"], out["cluster_permutations"] = _permutation_p(
            values, labels.reshape(-1), b, out["rho"], draws=permutations, seed=seed)
        notes.append(f"{n} points share {out['distinct_x']} x values: p_value and the "
                     "interval treat them as independent; p_cluster does not")
    out["note"] = "; ".join(notes)
    return out


def adjust(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a Benjamini–Hochberg adjusted column beside each of :data:`ADJUSTED`
    (named ``<column>_bh``), the family being every row with a defined p; undefined p stay
    NaN. Each adjusted column directly follows its raw one."""
    out = table.copy()
    for column in ADJUSTED:
        p = out[column].to_numpy(np.float64)
        adjusted = np.full(len(p), math.nan)
        defined = np.isfinite(p)
        if defined.any():
            adjusted[defined] = stats.false_discovery_control(p[defined], method="bh")
        out.insert(out.columns.get_loc(column) + 1, column + BH, adjusted)
    return out
