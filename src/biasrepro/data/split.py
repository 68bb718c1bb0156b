"""Seeded, exactly stratified splits (toxicity paper §4.1: 40% train / 30% validation / 30% test).

Each stratum is divided by the largest-remainder rule, so every stratum's share of each
split is as close to the requested fraction as whole rows allow, and the allocation is a
pure function of the stratum size. The planted-bias world uses the same function to state
the exact counts its training split will hold (its ground truth), and the data stage uses
it to split; the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd


def allocate(n: int, fractions: Mapping[str, float]) -> dict[str, int]:
    """Split ``n`` rows over named parts by the largest-remainder (Hamilton) rule.

    Ties in the remainder go to the part listed first.
    """
    names = list(fractions)
    quotas = [n * fractions[k] for k in names]
    counts = [math.floor(q + 1e-9) for q in quotas]
    left = n - sum(counts)
    order = sorted(range(len(names)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[:left]:
        counts[i] += 1
    return dict(zip(names, counts, strict=True))


def stratified_split(
    df: pd.DataFrame,
    strata: Sequence[Hashable] | pd.Series,
    fractions: Mapping[str, float],
    seed: int,
    order_by: str,
) -> pd.Series:
    """Return a Series (aligned to ``df``) naming each row's split.

    Rows are first sorted by ``order_by`` (a unique id column), so the result does not
    depend on the input row order; within each stratum a seeded permutation picks the rows
    of each part, in the order the parts are listed.
    """
    if df[order_by].duplicated().any():
        raise ValueError(f"stratified_split: column {order_by!r} is not unique")
    strata = pd.Series(list(strata), index=df.index).astype(str)
    ordered = df[order_by].sort_values(kind="stable").index
    rng = np.random.default_rng(seed)
    out = pd.Series(index=df.index, dtype=object)
    for key in sorted(strata.unique()):
        idx = ordered[strata.loc[ordered].to_numpy() == key]
        idx = idx[rng.permutation(len(idx))]
        start = 0
        for part, count in allocate(len(idx), fractions).items():
            out.loc[idx[start : start + count]] = part
            start += count
    return out
