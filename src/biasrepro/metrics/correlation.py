"""Pearson correlations between bias and fairness scores (toxicity paper §5.2, §6, Table 9).

The paper reports Pearson's ρ between fairness metrics, and between dataset or
representation bias scores and fairness scores, each over a handful of points (three
attributes). Every ρ here comes with its n, a two-sided p-value (scipy), and a Fisher-z
confidence interval, so that a ρ of 0.98 on three points reads as what it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from biasrepro.errors import DataError


def pearson(x: Sequence[float], y: Sequence[float], *, confidence: float = 0.95
            ) -> dict[str, Any]:
    """ρ, n, p-value and the Fisher-z interval of Pearson's correlation of ``x`` and ``y``.

    Pairs with a NaN on either side are left out (n counts the rest). With n < 3 or a
    constant side, ρ is undefined: the result has NaNs and a ``note`` saying why. The
    interval needs n > 3 (its standard error is 1/sqrt(n − 3)).
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError(f"a correlation needs paired values: got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(len(a))
    out: dict[str, Any] = {"rho": math.nan, "n": n, "p_value": math.nan, "low": math.nan,
                           "high": math.nan, "note": ""}
    if n < 3:
        out["note"] = f"{n} paired values: at least 3 are needed"
        return out
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        out["note"] = "one side is constant: the correlation is undefined"
        return out
    result = stats.pearsonr(a, b)
    out["rho"], out["p_value"] = float(result.statistic), float(result.pvalue)
    if n > 3:
        z, se = math.atanh(max(min(out["rho"], 1 - 1e-15), -1 + 1e-15)), 1 / math.sqrt(n - 3)
        half = stats.norm.ppf(0.5 + confidence / 2) * se
        out["low"], out["high"] = math.tanh(z - half), math.tanh(z + half)
    else:
        out["note"] = "3 paired values: no confidence interval (it needs n > 3)"
    return out
