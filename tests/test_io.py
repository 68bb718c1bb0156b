"""Atomic outputs: all-or-nothing; on failure temporaries go and earlier outputs stay."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from biasrepro.io import atomic_outputs, dumps_json, write_json, write_parquet


def test_outputs_appear_only_when_the_block_succeeds(tmp_path: Path) -> None:
    a, b = tmp_path / "sub" / "a.json", tmp_path / "sub" / "b.parquet"
    with atomic_outputs(a, b) as (ta, tb):
        write_json({"x": 1}, ta)
        assert not a.exists()
        write_parquet(pd.DataFrame({"v": [1, 2]}), tb)
    assert a.read_text() == '{\n  "x": 1\n}\n'
    assert pd.read_parquet(b)["v"].tolist() == [1, 2]
    assert sorted(p.name for p in a.parent.iterdir()) == ["a.json", "b.parquet"]


def test_failure_leaves_no_new_output_and_an_earlier_one_untouched(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    b.write_text("from an earlier run")
    with pytest.raises(ValueError), atomic_outputs(a, b) as (ta, _):
        write_json({"x": 1}, ta)
        raise ValueError("boom")
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]
    assert b.read_text() == "from an earlier run"


def test_an_output_the_step_forgot_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="without writing"), atomic_outputs(
        tmp_path / "a.json", tmp_path / "b.json"
    ) as (ta, _):
        write_json({}, ta)
    assert list(tmp_path.iterdir()) == []


def test_temporaries_of_a_killed_run_are_cleared(tmp_path: Path) -> None:
    (tmp_path / ".tmp-99999.a.json").write_text("half")
    with atomic_outputs(tmp_path / "a.json") as (ta,):
        write_json([1], ta)
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_json_is_canonical_and_nan_free() -> None:
    text = dumps_json({"b": float("nan"), "a": [1.5]})
    assert text == '{\n  "a": [\n    1.5\n  ],\n  "b": null\n}\n'


def test_parquet_bytes_are_reproducible(tmp_path: Path) -> None:
    df = pd.DataFrame({"t": ["x", "y"], "n": [1, 2]})
    write_parquet(df, tmp_path / "1.parquet")
    write_parquet(df, tmp_path / "2.parquet")
    assert (tmp_path / "1.parquet").read_bytes() == (tmp_path / "2.parquet").read_bytes()
