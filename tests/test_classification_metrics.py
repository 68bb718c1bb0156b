"""Accuracy, F1 and ROC-AUC against hand-computed values."""

from __future__ import annotations

import pytest

from biasrepro.metrics.classification import classification_metrics


def test_hand_computed() -> None:
    m = classification_metrics([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1])
    assert m["accuracy"] == 0.5          # predictions 1, 0, 1, 0
    assert m["f1"] == pytest.approx(0.5)  # precision 1/2, recall 1/2
    assert m["roc_auc"] == 0.75          # 3 of 4 positive-negative pairs ordered right
    assert m["n"] == 4 and m["positive_rate"] == 0.5


def test_auc_undefined_with_one_class() -> None:
    assert classification_metrics([1, 1], [0.2, 0.9])["roc_auc"] is None


def test_shapes_must_agree() -> None:
    with pytest.raises(ValueError, match="equal 1-D"):
        classification_metrics([1, 0], [0.5])
