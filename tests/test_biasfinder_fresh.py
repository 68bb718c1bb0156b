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


def fresh_table() -> list[str]:
    """The Markdown rows the labels give."""
    templates = pd.read_csv(FRESH / "templates.csv", dtype=str, keep_default_na=False)
    rejections = pd.read_csv(FRESH / "rejections.csv", dtype=str, keep_default_na=False)
    rows = ["| characteristic | backend | templates | labelled | defective (95 % CI) | target |",
            "|---|---|---:|---:|---:|---|"]
    for characteristic in ("gender", "country", "occupation"):
        for backend in BACKENDS:
            made = templates[(templates["characteristic"] == characteristic)
                             & templates["made_by"].str.split(";").apply(
                                 lambda b, x=backend: x in b)]
            if characteristic == "occupation":
                counted = made[made["label"] != "credit"]
                made_cell = f"{len(made)} sampled, {len(made) - len(counted)} credits"
            else:
                counted = made
                made_cell = f"{len(made)} ({100 * len(made) / REVIEWS:.1f} % of reviews)"
            k = int((~counted["label"].isin(NOT_DEFECTS)).sum())
            rows.append(f"| {characteristic} | {backend} | {made_cell} | {len(counted)} | "
                        f"{_pct(k, len(counted))} | {TARGETS[characteristic]} |")
    for backend in BACKENDS:
        refused = rejections[rejections["refused_by"].str.split(";").apply(
            lambda b, x=backend: x in b)]
        single = refused[refused["label"].isin(["right", "wrong"])]
        k = int((single["label"] == "wrong").sum())
        rows.append(f"| wrong rejections | {backend} | {len(refused)} refused | {len(single)} "
                    f"single-person | {_pct(k, len(single))} | {TARGETS['rejections']} |")
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
