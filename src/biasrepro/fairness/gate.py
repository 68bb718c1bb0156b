"""The model-works gate's verdict as the study tables carry it (``model_works``).

The fairness report decides it (:func:`biasrepro.fairness.report.model_checks`); everything
that reads the report's tables afterwards asks this module which models failed, so that
correlations, claims and paper tables leave the same models out. No pandas import here: the
workflow imports the seed tables' module, which imports this one.
"""

from __future__ import annotations

from typing import Any

#: the column of every study table that says whether the row's model passed the gate
MODEL_WORKS = "model_works"


def failed(frame: Any) -> set[tuple[str, str]]:
    """The ``(model, method)`` pairs whose rows say the gate failed them; none when the table
    has no :data:`MODEL_WORKS` column (a report written before the gate, or without one).
    Values read back from CSV are the strings ``True``/``False``."""
    if frame is None or MODEL_WORKS not in frame.columns:
        return set()
    works = frame[MODEL_WORKS].astype(str).str.strip().str.lower()
    rows = frame[works == "false"]
    return set(zip(rows["model"].astype(str), rows["method"].astype(str), strict=True))
