"""Three coreference backends under BiasFinder's templates, judged on four samples of reviews
nobody tuned on (``tests/data/biasfinder_unseen/``): the labels are well formed, consensus
templates are exactly those both backends made, and the table in
``docs/biasfinder-templates.md`` is what the labels give, so the page never drifts from them.

The reviews are not in the repository (see the folder's README): the labels record the frozen
code's output; they are not a regression test of later code."""

from __future__ import annotations

import pandas as pd
from conftest import REPO
from test_biasfinder_fresh import TEMPLATE_LABELS, rejection_cells, template_cells

UNSEEN = REPO / "tests" / "data" / "biasfinder_unseen"
DOC = REPO / "docs" / "biasfinder-templates.md"
#: the backends each round compared, and the reviews each round drew
ROUNDS = {"A": ("rules", "neuralcoref"), "B": ("rules", "neuralcoref", "consensus"),
          "C": ("rules",), "D": ("rules",)}
REVIEWS = {"A": 500, "B": 500, "C": 500, "D": 462}


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(UNSEEN / name, dtype=str, keep_default_na=False)


def unseen_table() -> list[str]:
    """The Markdown rows the labels give: per round, characteristic and backend."""
    templates, rejections = _read("templates.csv"), _read("rejections.csv")
    rows = ["| round | characteristic | backend | templates | labelled | defective (95 % CI) "
            "| target |", "|---|---|---|---:|---:|---:|---|"]
    for rnd, backends in ROUNDS.items():
        mine = templates[templates["round"] == rnd]
        rows += [f"| {rnd} | {c} | {b} | {template_cells(mine, c, b, REVIEWS[rnd])}"
                 for c in ("gender", "country", "occupation") for b in backends]
        refused = rejections[rejections["round"] == rnd]
        rows += [f"| {rnd} | wrong rejections | {b} | {rejection_cells(refused, b)}"
                 for b in backends]
    return rows


def test_unseen_labels_are_well_formed() -> None:
    templates, rejections = _read("templates.csv"), _read("rejections.csv")
    reviews = _read("reviews.csv")
    assert set(templates["label"]) <= TEMPLATE_LABELS
    assert not templates.duplicated(["round", "characteristic", "doc_id", "spans"]).any()
    for frame in (templates, rejections, reviews):
        for rnd in ROUNDS:
            ids = frame.loc[frame["round"] == rnd, "doc_id"]
            assert ids.str.fullmatch(rf"{rnd.lower()}-0[0-4]\d\d").all(), rnd
    assert set(reviews["doc_id"]) >= set(templates["doc_id"]) | set(rejections["doc_id"])
    assert reviews.groupby("round")["source_row"].nunique().to_dict() == REVIEWS
    assert reviews["source_row"].is_unique  # the samples are disjoint
    assert (templates.loc[templates["label"] != "ok", "note"] != "").all()
    assert templates["spans"].str.fullmatch(r"(\d+:\d+:[A-Za-z-]+;?)+").all()
    assert set(rejections["label"]) <= {"multi", "right", "wrong"}
    assert not rejections.duplicated(["round", "doc_id"]).any()


def test_consensus_is_exactly_what_both_backends_made() -> None:
    """A consensus template is one both backends made alike (biasfinder.coref.confirm), and a
    review consensus refused is one either backend refused."""
    templates = _read("templates.csv")
    b = templates[templates["round"] == "B"]
    made = b["made_by"].str.split(";").apply(set)
    assert ((made.apply(lambda m: "consensus" in m))
            == made.apply(lambda m: {"rules", "neuralcoref"} <= m)).all()
    rejections = _read("rejections.csv")
    refused = rejections.loc[rejections["round"] == "B", "refused_by"].str.split(";").apply(set)
    assert refused.apply(lambda r: "consensus" in r).all()


def test_the_page_shows_what_the_unseen_labels_give() -> None:
    page = DOC.read_text(encoding="utf-8").splitlines()
    rows = unseen_table()
    missing = [r for r in rows if r not in page]
    assert not missing, "docs/biasfinder-templates.md should hold:\n" + "\n".join(rows)
