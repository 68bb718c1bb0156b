"""Counterfactual fairness: SenseScore (toxicity paper Eq. 6) on hand-computed pairs."""

from __future__ import annotations

import pytest

from biasrepro.errors import DataError
from biasrepro.metrics.counterfactual import sense_score


def test_sense_score_is_the_absolute_mean_difference_of_aligned_pairs() -> None:
    # the same three sentences about a man and about a woman
    male, female = [0.2, 0.5, 0.9], [0.3, 0.7, 0.8]
    assert sense_score(male, female) == pytest.approx(abs((0.1 + 0.2 - 0.1) / 3))
    assert sense_score(female, male) == sense_score(male, female)
    assert sense_score(male, male) == 0.0
    with pytest.raises(DataError, match="aligned pairs"):
        sense_score([0.1, 0.2], [0.3])
    with pytest.raises(DataError, match="no sentence pairs"):
        sense_score([], [])
    with pytest.raises(DataError, match="row 2, column 'prob_g_hat'"):
        sense_score([0.1, 0.2], [0.3, 1.2])
