"""The template rates on reviews nobody tuned on (``tests/data/biasfinder_fresh/``): the
labels are well formed, and the table in ``docs/biasfinder-templates.md`` is what they give
(each rate with its Wilson 95 % interval), so the page never drifts from the labels.

The reviews themselves are not in the repository (see the folder's README): the templates
cannot be regenerated here, so these labels are a record of the frozen code's output, not a
regression test of later code."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import REPO
from scipy.stats import binomtest

FRESH = REPO / "tests" / "data" / "biasfinder_fresh"
DOC = REPO / "docs" / "biasfinder-templates.md"
REVIEWS = 500
BACKENDS = ("rules", "rules+resolver")
TEMPLATE_LABELS = {"ok", "credit", "not_a_person", "two_people", "name_left", "partial",
                   "generic", "case", "morphology", "context", "other"}
NOT_DEFECTS = {"ok", "credit"}
#: the issue's targets: defective share per characteristic, wrong rejections
TARGETS = {"gender": "≤ 15 %", "country": "≤ 5 %", "occupation": "≤ 15 %",
           "rejections": "≤ 30 %"}


def _pct(k: int, n: int) -> str:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return f"{100 * k / n:.1f} % ({100 * ci.low:.1f}–{100 * ci.high:.1f})"


def by_backend(frame: pd.DataFrame, column: str, backend: str) -> pd.DataFrame:
    """The rows whose ``;``-separated ``column`` names ``backend``."""
    return frame[frame[column].str.split(";").apply(lambda b: backend in b)]


def template_cells(templates: pd.DataFrame, characteristic: str, backend: str,
                   reviews: int) -> str:
    """``templates | labelled | defective (95 % CI) | target`` of one backend's templates of
    one characteristic (occupation: a sample, film credits counted apart)."""
    made = by_backend(templates[templates["characteristic"] == characteristic], "made_by",
                      backend)
    if characteristic == "occupation":
        counted = made[made["label"] != "credit"]
        made_cell = f"{len(made)} sampled, {len(made) - len(counted)} credits"
    else:
        counted = made
        made_cell = f"{len(made)} ({100 * len(made) / reviews:.1f} % of reviews)"
    k = int((~counted["label"].isin(NOT_DEFECTS)).sum())
    return (f"{made_cell} | {len(counted)} | {_pct(k, len(counted))} | "
            f"{TARGETS[characteristic]} |")


def rejection_cells(rejections: pd.DataFrame, backend: str) -> str:
    """The same four cells for the reviews ``backend`` refused: wrong among single-person."""
    refused = by_backend(rejections, "refused_by", backend)
    single = refused[refused["label"].isin(["right", "wrong"])]
    k = int((single["label"] == "wrong").sum())
    return (f"{len(refused)} refused | {len(single)} single-person | "
            f"{_pct(k, len(single))} | {TARGETS['rejections']} |")


def fresh_table() -> list[str]:
    """The Markdown rows the labels give."""
    templates = pd.read_csv(FRESH / "templates.csv", dtype=str, keep_default_na=False)
    rejections = pd.read_csv(FRESH / "rejections.csv", dtype=str, keep_default_na=False)
    rows = ["| characteristic | backend | templates | labelled | defective (95 % CI) | target |",
            "|---|---|---:|---:|---:|---|"]
    rows += [f"| {c} | {b} | {template_cells(templates, c, b, REVIEWS)}"
             for c in ("gender", "country", "occupation") for b in BACKENDS]
    rows += [f"| wrong rejections | {b} | {rejection_cells(rejections, b)}" for b in BACKENDS]
    return rows


def test_fresh_labels_are_well_formed() -> None:
    templates = pd.read_csv(FRESH / "templates.csv", dtype=str, keep_default_na=False)
    assert set(templates["label"]) <= TEMPLATE_LABELS
    assert not templates.duplicated(["characteristic", "doc_id", "spans"]).any()
    assert templates["doc_id"].str.fullmatch(r"fresh-0[0-4]\d\d").all()
    assert set(";".join(templates["made_by"]).split(";")) == set(BACKENDS)
    assert (templates.loc[~templates["label"].isin({"ok"}), "note"] != "").all()
    assert templates["spans"].str.fullmatch(r"(\d+:\d+:[A-Za-z-]+;?)+").all()
    rejections = pd.read_csv(FRESH / "rejections.csv", dtype=str, keep_default_na=False)
    assert set(rejections["label"]) <= {"multi", "right", "wrong"}
    assert rejections["doc_id"].is_unique


def test_the_page_shows_what_the_labels_give() -> None:
    page = DOC.read_text(encoding="utf-8").splitlines()
    rows = fresh_table()
    missing = [r for r in rows if r not in page]
    assert not missing, "docs/biasfinder-templates.md should hold:\n" + "\n".join(rows)


@pytest.mark.parametrize(("k", "n", "text"), [(21, 57, "36.8 % (25.5–49.8)"),
                                              (0, 10, "0.0 % (0.0–27.8)")])
def test_rates_carry_wilson_intervals(k: int, n: int, text: str) -> None:
    assert _pct(k, n) == text
