"""Stratified splitting: exact per-stratum allocation, seeded, independent of row order."""

from __future__ import annotations

import pandas as pd
import pytest

from biasrepro.data.split import allocate, stratified_split

FRACTIONS = {"train": 0.4, "validation": 0.3, "test": 0.3}


@pytest.mark.parametrize(
    ("n", "expected"),
    [(10, (4, 3, 3)), (1, (1, 0, 0)), (2, (1, 1, 0)), (0, (0, 0, 0)), (7, (3, 2, 2)),
     (11, (5, 3, 3)), (100_003, (40_001, 30_001, 30_001))],
)
def test_allocate_largest_remainder(n: int, expected: tuple[int, int, int]) -> None:
    counts = allocate(n, FRACTIONS)
    assert tuple(counts.values()) == expected
    assert sum(counts.values()) == n


def _frame(n: int = 500) -> pd.DataFrame:
    return pd.DataFrame({
        "id": [f"c{i:04d}" for i in range(n)],
        "label": [int(i % 7 == 0) for i in range(n)],
        "group": [["a", "b", "none"][i % 3] for i in range(n)],
    })


def test_each_stratum_is_split_exactly() -> None:
    df = _frame()
    strata = df["label"].astype(str) + "|" + df["group"]
    split = stratified_split(df, strata, FRACTIONS, seed=3, order_by="id")
    for key, part in split.groupby(strata):
        assert part.value_counts().reindex(list(FRACTIONS), fill_value=0).tolist() == list(
            allocate(len(part), FRACTIONS).values()), key


def test_seeded_and_independent_of_row_order() -> None:
    df = _frame()
    strata = df["label"].astype(str) + "|" + df["group"]
    a = stratified_split(df, strata, FRACTIONS, seed=3, order_by="id")
    shuffled = df.sample(frac=1.0, random_state=0)
    b = stratified_split(shuffled, strata.loc[shuffled.index], FRACTIONS, seed=3, order_by="id")
    assert a.equals(b.loc[a.index])
    c = stratified_split(df, strata, FRACTIONS, seed=4, order_by="id")
    assert not a.equals(c)


def test_ids_must_be_unique() -> None:
    df = _frame(10)
    df.loc[3, "id"] = df.loc[4, "id"]
    with pytest.raises(ValueError, match="not unique"):
        stratified_split(df, ["x"] * 10, FRACTIONS, seed=1, order_by="id")
