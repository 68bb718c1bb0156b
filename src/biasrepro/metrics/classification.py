"""Classification quality of a scored test set: accuracy, ROC-AUC and F1 (scikit-learn)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score


def classification_metrics(labels: Sequence[int], probs: Sequence[float],
                           threshold: float = 0.5) -> dict[str, float | int | None]:
    """Accuracy and F1 at ``threshold`` on the positive-class probability, and ROC-AUC.

    ROC-AUC is ``None`` when only one class is present (it is undefined then).
    """
    y = np.asarray(labels, dtype=int)
    p = np.asarray(probs, dtype=float)
    if y.shape != p.shape or y.ndim != 1:
        raise ValueError(f"labels {y.shape} and probabilities {p.shape} must be equal 1-D arrays")
    pred = (p >= threshold).astype(int)
    both = len(np.unique(y)) == 2
    return {
        "n": int(len(y)),
        "positive_rate": float(y.mean()) if len(y) else None,
        "threshold": threshold,
        "accuracy": float(accuracy_score(y, pred)) if len(y) else None,
        "f1": float(f1_score(y, pred, zero_division=0)) if len(y) else None,
        "roc_auc": float(roc_auc_score(y, p)) if both else None,
    }
