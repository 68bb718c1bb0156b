"""Paper-sized inputs: peak memory and time of the heavy steps (marker ``scale``).

Each check generates a seeded input of the paper's size in its real format and measures a
step in a fresh process. They take minutes, so they run only when asked::

    BIASREPRO_SCALE=1 .venv/bin/python -m pytest -m scale

(the README's "Paper scale" section lists the last figures measured).
"""

from __future__ import annotations

import os
import sys

import pytest
from conftest import REPO

pytestmark = [pytest.mark.scale,
              pytest.mark.skipif(not os.environ.get("BIASREPRO_SCALE"),
                                 reason="paper-scale check: set BIASREPRO_SCALE=1")]

GB = 1024  # MB


def test_civil_comments_two_million_rows_fit_in_4_gb() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import scale_civil_comments

    r = scale_civil_comments.run(2_000_000)
    print(r)
    assert r["harness_peak_mb"] <= 4 * GB
    assert r["rows_kept"] == r["annotated"]  # no annotated row is lost to a fault elsewhere
    assert r["dropped_rows_with"] == {"empty_text": 8, "toxicity_not_a_number": 4}


def test_predict_over_one_and_a_half_million_mutants_fits_in_the_model_plus_2_gb() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import predict_scale

    r = predict_scale.run(1_500_000)
    print(r)
    assert "1500000 rows," in r["log"]
    assert r["harness_peak_mb"] <= r["model_peak_mb"] + 2 * GB
