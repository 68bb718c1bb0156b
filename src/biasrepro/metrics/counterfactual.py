"""Counterfactual fairness: SenseScore (toxicity paper §7.3, Eq. 6; Prabhakaran et al. 2019).

For sentences that exist in two versions differing only in the identity they mention (the
balanced fairness set's counterfactuals, e.g. male ↔ female), SenseScore is the absolute
mean difference of the model's positive-class probabilities between the versions. The
difference is always taken in one direction (group ĝ's version minus group g's), whichever
of the two the sentence was written about, so that a model favouring one group does not
cancel itself out across the two directions of perturbation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from biasrepro.errors import DataError, shown


def sense_score(probs_g: Sequence[float], probs_g_hat: Sequence[float]) -> float:
    """``|mean(f(x̂) − f(x))|`` over aligned pairs: ``probs_g[i]`` and ``probs_g_hat[i]`` are
    the probabilities of the same sentence mentioning group g and group ĝ (Eq. 6)."""
    a = np.asarray(probs_g, dtype=np.float64)
    b = np.asarray(probs_g_hat, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError(f"SenseScore needs aligned pairs: got {a.shape} and {b.shape} "
                        "probabilities")
    if not len(a):
        raise DataError("SenseScore of no sentence pairs is undefined")
    for name, values in (("g", a), ("g_hat", b)):
        bad = ~((values >= 0) & (values <= 1))
        if bad.any():
            row = int(np.flatnonzero(bad)[0]) + 1
            raise DataError(f"probability {shown(values[row - 1])} is outside [0, 1]", row=row,
                            column=f"prob_{name}")
    return float(abs(np.mean(b - a)))
