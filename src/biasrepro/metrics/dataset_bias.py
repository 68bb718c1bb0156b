"""Dataset bias of a toxicity training set (Elsafoury & Katsigiannis, §6.3 and §6.5).

* Selection bias, Eq. 4: ``|N_{g,toxic}/N_g - N_{ĝ,toxic}/N_ĝ|``, the gap between the
  marginalized and the non-marginalized groups' ratios of toxic examples.
* Overamplification bias, Eq. 5: ``|N_g - N_ĝ|``, the gap in the number of examples about
  each side, then divided by the largest value over the attributes (the paper's max
  normalization: gender 5795, race 5795 and religion 6118.5 become 0.947, 0.947 and 1.0).

Where one side of an attribute has several groups (Table 1: race = Black and Asian vs.
White; religion = Jewish and Muslim vs. Christian) that side is represented by the mean
over its groups: the mean of their toxic ratios for Eq. 4, the mean of their counts for
Eq. 5 (the paper's 6118.5 is such a mean).

Counts come as ``{group: {"n": N_g, "n_toxic": N_{g,toxic}}}``; :func:`group_counts` makes
them from any table with one identity column per group and a 0/1 label.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean

import pandas as pd

GroupCounts = Mapping[str, Mapping[str, int]]
Attributes = Mapping[str, Mapping[str, Sequence[str]]]
SIDES = ("marginalized", "non_marginalized")


def group_counts(
    df: pd.DataFrame,
    identities: Sequence[str],
    identity_threshold: float,
    label_column: str = "label",
) -> dict[str, dict[str, int]]:
    """``n`` and ``n_toxic`` per identity; a row belongs to *g* when ``df[g] >= threshold``.

    A row about several identities counts for each of them; a missing value is no member.
    """
    toxic = df[label_column].to_numpy() == 1
    out = {}
    for g in identities:
        member = (df[g] >= identity_threshold).fillna(False).to_numpy(dtype=bool)
        out[g] = {"n": int(member.sum()), "n_toxic": int((member & toxic).sum())}
    return out


def _side(counts: GroupCounts, groups: Sequence[str], attr: str) -> list[Mapping[str, int]]:
    missing = [g for g in groups if g not in counts]
    if missing:
        raise ValueError(f"attribute {attr!r}: no counts for group(s) {', '.join(missing)}")
    return [counts[g] for g in groups]


def selection_bias(counts: GroupCounts, attributes: Attributes) -> dict[str, float]:
    """Eq. 4 per attribute; NaN where a group has no examples (its ratio is undefined)."""
    out = {}
    for attr, sides in attributes.items():
        ratios = []
        for side in SIDES:
            groups = _side(counts, sides[side], attr)
            ratios.append(fmean(c["n_toxic"] / c["n"] if c["n"] else math.nan for c in groups))
        out[attr] = abs(ratios[0] - ratios[1])
    return out


def overamplification_bias(
    counts: GroupCounts, attributes: Attributes
) -> dict[str, dict[str, float]]:
    """Eq. 5 per attribute, ``{"raw": |N_g - N_ĝ|, "normalized": raw / max raw}``.

    When every raw value is 0 (all sides equally large) the normalized values are 0.
    """
    raw = {}
    for attr, sides in attributes.items():
        sizes = [fmean(c["n"] for c in _side(counts, sides[side], attr)) for side in SIDES]
        raw[attr] = abs(sizes[0] - sizes[1])
    top = max(raw.values(), default=0.0)
    return {a: {"raw": v, "normalized": v / top if top else 0.0} for a, v in raw.items()}
